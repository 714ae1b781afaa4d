// import_stablehlo of rng_bit_generator (THREE_FRY, PHILOX, DEFAULT: bit-exact with XLA:CPU as JAX runs it, the
// literals below printed by JAX 0.10 with x64) and of reduce_window with a general reducer region (cumlogsumexp's
// logaddexp, a subtract), against values computed here in double loops.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "jitx/import.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {

/// jax.jit(lambda k: lax.rng_bit_generator(k, shape, dtype=dt, algorithm=alg)).lower(state_u32x4).as_text(),
/// as JAX prints it (the u32[4] key is bitcast to the op's ui64[2] state).
std::string rng_module(const std::string& alg, const std::string& out) {
  return R"(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xui32>) -> (tensor<4xui32> {jax.result_info = "result[0]"}, )" + out +
         R"( {jax.result_info = "result[1]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<4xui32>) -> tensor<2x2xui32>
    %1 = stablehlo.bitcast_convert %0 : (tensor<2x2xui32>) -> tensor<2xui64>
    %output_state, %output = stablehlo.rng_bit_generator %1, algorithm = )" + alg +
         R"( : (tensor<2xui64>) -> (tensor<2xui64>, )" + out + R"()
    %2 = stablehlo.bitcast_convert %output_state : (tensor<2xui64>) -> tensor<2x2xui32>
    %3 = stablehlo.reshape %2 : (tensor<2x2xui32>) -> tensor<4xui32>
    return %3, %output : tensor<4xui32>, )" + out + R"(
  }
}
)";
}

struct RngCase {
  const char* alg;
  const char* out;
  std::vector<uint32_t> state;
  std::vector<uint64_t> bits;
};

const std::vector<RngCase>& rng_cases() {
  static const std::vector<RngCase> k = {
      {"THREE_FRY", "tensor<3x5xui32>", {2654435769u, 305419896u, 7, 0},
       {3121927639u, 1541631562u, 1889607024u, 605597871u, 1713312408u, 3485788646u, 3028922060u, 2635926252u,
        1740465943u, 2862841300u, 4072662195u, 3011571737u, 3278417299u, 4223219154u, 248468409u}},
      {"THREE_FRY", "tensor<3xui64>", {2654435769u, 305419896u, 1, 0},
       {6621257144393323991ull, 2601023052361833840ull, 4838384985412932248ull}},
      {"THREE_FRY", "tensor<2x3xui8>", {2654435769u, 305419896u, 1, 0}, {215, 112, 152, 74, 175, 130}},
      {"PHILOX", "tensor<3x5xui32>", {2654435769u, 305419896u, 2, 0},
       {411785750u, 3207452818u, 2522354413u, 1190126921u, 304432653u, 738204597u, 3527614682u, 1612066813u,
        2504892368u, 1661511610u, 2607000118u, 2922073183u, 3070858181u, 3465445526u, 1670594282u}},
      {"PHILOX", "tensor<3xui64>", {2654435769u, 305419896u, 0, 0},
       {13775904957184825878ull, 5111556206306530029ull, 3170564602176292365ull}},
      {"PHILOX", "tensor<2x3xui8>", {2654435769u, 305419896u, 0, 0}, {22, 146, 237, 73, 13, 181}},
      {"DEFAULT", "tensor<2x3xui8>", {2654435769u, 305419896u, 0, 0}, {22, 146, 237, 73, 13, 181}},
  };
  return k;
}

Array state_in() {
  return array(std::vector<uint32_t>{0x9E3779B9u, 0x12345678u, 0xFFFFFFFEu, 0xFFFFFFFFu}, {4});
}

}  // namespace

TEST_CASE("import_stablehlo: rng_bit_generator's THREE_FRY, PHILOX and DEFAULT bits are XLA:CPU's", "[import]") {
  for (auto& c : rng_cases()) {
    INFO(c.alg << " " << c.out);
    auto outs = import_stablehlo(rng_module(c.alg, c.out)).compile()(std::vector<Array>{state_in()});
    REQUIRE(outs.size() == 2);
    CHECK(outs[0].to_vector<uint32_t>() == c.state);
    std::vector<uint64_t> got;
    for (auto v : outs[1].astype(DType::uint64).to_vector<uint64_t>()) got.push_back(v);
    CHECK(got == c.bits);
  }
}

TEST_CASE("import_stablehlo: rng_bit_generator's bad states and outputs are clear errors", "[import]") {
  auto wrap = [](const std::string& state, const std::string& alg, const std::string& out) {
    return "func.func public @main(%k: " + state + ") -> " + out + " {\n  %s, %o = stablehlo.rng_bit_generator %k, " +
           "algorithm = " + alg + " : (" + state + ") -> (" + state + ", " + out + ")\n  return %o : " + out + "\n}\n";
  };
  CHECK_THROWS_WITH(import_stablehlo(wrap("tensor<3xui64>", "THREE_FRY", "tensor<4xui32>")),
                    Catch::Contains("THREE_FRY takes a state of 2 64-bit words, got 3"));
  CHECK_THROWS_WITH(import_stablehlo(wrap("tensor<4xui32>", "PHILOX", "tensor<4xui32>")),
                    Catch::Contains("expected a ui64[2] or ui64[3] state"));
  CHECK_THROWS_WITH(import_stablehlo(wrap("tensor<2xui64>", "PHILOX", "tensor<4xi1>")),
                    Catch::Contains("stablehlo.rng_bit_generator producing"));
  // A three-word PHILOX state carries its 128-bit counter in words 1 and 2; an f32 output is the bits bitcast.
  std::string three = wrap("tensor<3xui64>", "PHILOX", "tensor<5xf32>");
  auto outs = import_stablehlo(three).compile()(std::vector<Array>{array(std::vector<uint64_t>{1, 2, 3}, {3})});
  CHECK(outs[0].dtype() == DType::float32);
  CHECK(outs[0].shape() == Shape{5});
}

namespace {
// lax.cumlogsumexp(x, axis=0) on f32[5], as JAX lowers it: a reduce_window whose reducer is logaddexp (loc dropped).
const char* k_cumlogsumexp = R"mlir(func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32>) {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%arg0, %cst) <{padding = dense<[[4, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 5>}> ({
  ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
    %1 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
    %2 = stablehlo.subtract %arg1, %arg2 : tensor<f32>
    %3 = stablehlo.compare  NE, %2, %2,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.add %arg1, %arg2 : tensor<f32>
    %5 = stablehlo.abs %2 : tensor<f32>
    %6 = stablehlo.negate %5 : tensor<f32>
    %7 = stablehlo.exponential %6 : tensor<f32>
    %8 = stablehlo.log_plus_one %7 : tensor<f32>
    %9 = stablehlo.add %1, %8 : tensor<f32>
    %10 = stablehlo.select %3, %4, %9 : tensor<i1>, tensor<f32>
    stablehlo.return %10 : tensor<f32>
  }) : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
)mlir";
}  // namespace

TEST_CASE("import_stablehlo: reduce_window with a general reducer region (cumlogsumexp's logaddexp)", "[import]") {
  std::vector<float> x = {0.3f, -1.2f, 2.5f, 0.0f, -0.7f};
  auto out = import_stablehlo(k_cumlogsumexp).compile()(std::vector<Array>{array(x, {5})});
  auto got = out.at(0).to_vector<float>();
  double acc = -INFINITY;
  for (size_t i = 0; i < x.size(); ++i) {
    acc = std::max(acc, double(x[i])) + std::log1p(std::exp(-std::abs(acc - x[i])));
    CHECK(std::abs(got[i] - acc) <= 1e-6 * (1 + std::abs(acc)));
  }
  // A subtract region over 2-D windows with strides, padding, base and window dilation: a fold in window order
  // (XLA's: acc = region(acc, x) from init), checked by a direct loop over the same windows.
  std::string text = R"(func.func public @main(%a: tensor<4x5xf32>, %z: tensor<f32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 3>,
       base_dilations = array<i64: 1, 2>, window_dilations = array<i64: 2, 1>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %1 = stablehlo.subtract %p, %q : tensor<f32>
    %2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.multiply %1, %2 : tensor<f32>
    stablehlo.return %3 : tensor<f32>
  }) : (tensor<4x5xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
})";
  std::vector<float> a(20);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(std::sin(1.3 * double(i)));
  float z = 0.25f;
  std::vector<Array> args = {array(a, {4, 5}), array(std::vector<float>{z}, Shape{})};
  auto r = import_stablehlo(text).compile()(args);
  auto g = r.at(0).to_vector<float>();
  // Padded and base-dilated: row index p = 1 + i (low padding 1), column c = 2 j (base dilation 2), 5 x 10 in all.
  // XLA skips the positions in padding and holes (init is not combined there).
  auto real = [&](int64_t p, int64_t c) { return p >= 1 && p <= 4 && c % 2 == 0 && c / 2 <= 4; };
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double acc2 = z;
      for (int64_t u = 0; u < 2; ++u)
        for (int64_t v = 0; v < 2; ++v) {
          int64_t p = i * 2 + u * 2, c = j * 3 + v;
          if (real(p, c)) acc2 = (acc2 - a[(p - 1) * 5 + c / 2]) * 0.5;
        }
      INFO(i << "," << j);
      CHECK(std::abs(g[i * 3 + j] - acc2) <= 1e-6);
    }
}

TEST_CASE("import_stablehlo: complex types and dynamic shapes are clear ParseErrors, mhlo/jax/sdy attributes are "
          "ignored where they mean nothing", "[import]") {
  auto fn = [](const std::string& type) {
    return "func.func public @main(%a: " + type + ") -> " + type + " {\n  return %a : " + type + "\n}\n";
  };
  CHECK_THROWS_AS(import_stablehlo(fn("tensor<2xcomplex<f32>>")), ParseError);
  CHECK_THROWS_WITH(import_stablehlo(fn("tensor<2xcomplex<f32>>")), Catch::Contains("jitx has no complex dtypes"));
  CHECK_THROWS_WITH(import_stablehlo(fn("tensor<2xcomplex<f32>>")), Catch::Contains("line 1"));
  CHECK_THROWS_AS(import_stablehlo(fn("tensor<?x4xf32>")), ParseError);
  CHECK_THROWS_WITH(import_stablehlo(fn("tensor<?x4xf32>")), Catch::Contains("dynamic shapes are not supported"));
  // Attributes JAX and Shardy write on the module, arguments, results and ops: read and dropped (one device).
  std::string text = R"(module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32, mhlo.frontend_attributes = {xla.sdy.meshes = "{}"}} {
  func.func public @main(%arg0: tensor<3xf32> {jax.buffer_donor = true, mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) -> (tensor<3xf32> {jax.result_info = "result", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.multiply %arg0, %arg0 {mhlo.frontend_attributes = {_xla_compute_type = "host"}} : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
)";
  auto out = import_stablehlo(text).compile()(std::vector<Array>{array(std::vector<float>{1.5f, -2.0f, 3.0f}, {3})});
  CHECK(out.at(0).to_vector<float>() == std::vector<float>{2.25f, 4.0f, 9.0f});
}

TEST_CASE("import_stablehlo: 1500 seeded mutations of rng_bit_generator and general reduce_window modules import "
          "or throw a jitx error", "[import][import_fuzz]") {
  std::mt19937 gen(1818);
  const std::string seeds[] = {rng_module("THREE_FRY", "tensor<3x5xui32>"), rng_module("PHILOX", "tensor<3xui64>"),
                               rng_module("DEFAULT", "tensor<2x3xui8>"), k_cumlogsumexp};
  const char alphabet[] = "%#:=,()[]{}<>\"^x0123456789abfiou.- \n";
  const char* tokens[] = {"THREE_FRY", "PHILOX", "DEFAULT", "tensor<3xui64>", "tensor<2xui32>", "tensor<0xui32>",
                          "tensor<4x0xui16>", "tensor<f64>", "tensor<i1>", "window_strides = array<i64: 2>, ",
                          "base_dilations = array<i64: 3>, ", "window_dilations = array<i64: 2>, ",
                          "padding = dense<[[1, 2]]> : tensor<1x2xi64>, ", "stablehlo.multiply", "%arg1", "%cst"};
  int ok = 0, compiled = 0, errors = 0;
  for (int it = 0; it < 1500; ++it) {
    std::string s = seeds[it % 4];
    int edits = 1 + static_cast<int>(gen() % 3);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t p = gen() % s.size();
      switch (gen() % 5) {
        case 0: s.resize(p); break;
        case 1: s[p] = alphabet[gen() % (sizeof(alphabet) - 1)]; break;
        case 2: s.erase(p, 1 + gen() % 8); break;
        case 3: s.insert(p, 1, alphabet[gen() % (sizeof(alphabet) - 1)]); break;
        default: s.insert(p, tokens[gen() % (sizeof(tokens) / sizeof(tokens[0]))]);
      }
    }
    try {
      auto m = import_stablehlo(s);
      ++ok;
      if (compiled < 40) {  // what imports also compiles (the expansion's ops are well-typed) or fails clearly
        m.compile();
        ++compiled;
      }
    } catch (const Error&) {
      ++errors;
    }
  }
  CHECK(ok + errors == 1500);
  CHECK(errors > 500);
}
