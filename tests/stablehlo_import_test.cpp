// import_stablehlo: modules written as JAX writes them (pretty and generic forms, calls, regions, constants),
// run on the current platform against hand-computed values; malformed text gets ParseError; a seeded mutator.
#include <catch2/catch.hpp>

#include <random>

#include "jitx/import.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {

// The shape of jax.jit(lambda x, w: (jax.nn.relu(x @ w), jax.nn.relu(x @ w).sum(1))).lower(...).as_text().
const char* kMlp = R"(module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<3x4xf32>) -> (tensor<2x4xf32> {jax.result_info = "[0]"}, tensor<2xf32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc(#loc2)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %2 = stablehlo.maximum %0, %1 : tensor<2x4xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
    return %2, %3 : tensor<2x4xf32>, tensor<2xf32>
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("x.py":3:0)
)";

const char* kCalls = R"(module @jit_g {
  func.func public @main(%arg0: tensor<4xi32>) -> (tensor<4xi32>, tensor<i32>) {
    %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
    %0:2 = call @helper(%arg0, %c) : (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
    %1 = "stablehlo.transpose"(%0#0) <{permutation = array<i64: 0>}> : (tensor<4xi32>) -> tensor<4xi32>
    %c_0 = stablehlo.constant dense<-100> : tensor<i32>
    %2 = stablehlo.reduce(%0#1 init: %c_0) across dimensions = [0] : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
     reducer(%a: tensor<i32>, %b: tensor<i32>)  {
      %3 = stablehlo.maximum %a, %b : tensor<i32>
      stablehlo.return %3 : tensor<i32>
    }
    return %1, %2 : tensor<4xi32>, tensor<i32>
  }
  func.func private @helper(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<4xi32>
    %1 = "stablehlo.subtract"(%arg0, %arg1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    return %0, %1 : tensor<4xi32>, tensor<4xi32>
  }
}
)";

const char* kConstants = R"(module @jit_h {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<3xf32>
    %cst_1 = stablehlo.constant dense<"0x0000803F0000004000004040"> : tensor<3xf32>
    %0 = stablehlo.compare  GT, %arg0, %cst_1,  FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %1 = stablehlo.select %0, %arg0, %cst_1 : tensor<3xi1>, tensor<3xf32>
    %2 = stablehlo.iota dim = 0 : tensor<6xi32>
    %3 = stablehlo.slice %2 [1:6:2] : (tensor<6xi32>) -> tensor<3xi32>
    %4 = stablehlo.convert %3 : (tensor<3xi32>) -> tensor<3xf32>
    %5 = stablehlo.add %1, %4 : tensor<3xf32>
    %6 = "stablehlo.compare"(%5, %5) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    %7 = "stablehlo.select"(%6, %cst, %5) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %c = stablehlo.constant dense<[[true, false, true]]> : tensor<1x3xi1>
    %8 = stablehlo.reshape %c : (tensor<1x3xi1>) -> tensor<3xi1>
    %9 = stablehlo.select %8, %7, %cst_1 : tensor<3xi1>, tensor<3xf32>
    return %9 : tensor<3xf32>
  }
}
)";

template <class T>
std::vector<T> vec(const Array& a) {
  return a.to_vector<T>();
}

}  // namespace

TEST_CASE("import_stablehlo: the MLP block in JAX's pretty form matches a double loop", "[import]") {
  auto m = import_stablehlo(kMlp);
  REQUIRE(m.in_avals().size() == 2);
  REQUIRE(m.out_avals().size() == 2);
  CHECK(m.out_avals()[0].str() == "f32[2,4]");
  auto c = m.compile();
  std::vector<float> x = {1, -2, 3, 0.5f, 1.5f, -1}, w(12);
  for (int k = 0; k < 12; ++k) w[k] = 0.25f * static_cast<float>(k) - 1.0f;
  auto outs = c(array(x, {2, 3}), array(w, {3, 4}));
  REQUIRE(outs.size() == 2);
  auto y = vec<float>(outs[0]), s = vec<float>(outs[1]);
  for (int i = 0; i < 2; ++i) {
    double row = 0;
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += double(x[i * 3 + k]) * w[k * 4 + j];
      acc = std::max(acc, 0.0);
      row += acc;
      CHECK(y[i * 4 + j] == Approx(acc).margin(1e-5));
    }
    CHECK(s[i] == Approx(row).margin(1e-5));
  }
  CHECK(c.cost_analysis().count("flops") == 1);
  CHECK(c.memory_analysis().argument_size_in_bytes == (6 + 12) * 4);
  CHECK(c.as_text().find("HloModule") != std::string::npos);
  CHECK(m.as_text().find("stablehlo.dot_general") != std::string::npos);
}

TEST_CASE("import_stablehlo: calls, multiple results, generic ops and a reducer region", "[import]") {
  auto c = import_stablehlo(kCalls).compile();
  auto outs = c(array<int32_t>({5, -6, 7, 8}));
  // helper: (x * [1,2,3,4], x - [1,2,3,4]) = ([5,-12,21,32], [4,-8,4,4]); max of the second = 4
  CHECK(vec<int32_t>(outs[0]) == std::vector<int32_t>{5, -12, 21, 32});
  CHECK(outs[1].item<int32_t>() == 4);
}

TEST_CASE("import_stablehlo: constants (hex float, hex blob, nested lists), compare, select, iota, slice", "[import]") {
  auto c = import_stablehlo(kConstants).compile();
  auto out = vec<float>(c(array<float>({0.5f, 2.5f, 5.0f}))[0]);
  // select(x > [1,2,3], x, [1,2,3]) + [1,3,5] = [2, 5.5, 10]; then mask [T,F,T] keeps it, else [1,2,3]
  CHECK(out == std::vector<float>{2.0f, 2.0f, 10.0f});
}

TEST_CASE("import_stablehlo: arguments are checked against the signature", "[import]") {
  auto c = import_stablehlo(kMlp).compile();
  auto x = array(std::vector<float>(6, 1.0f), {2, 3});
  CHECK_THROWS_WITH(c(x), Catch::Contains("takes 2 argument(s), got 1"));
  CHECK_THROWS_AS(c(x, array(std::vector<float>(8, 1.0f), {2, 4})), ShapeError);
  CHECK_THROWS_WITH(c(x, array(std::vector<float>(8, 1.0f), {2, 4})),
                    Catch::Contains("argument 1: expected shape f32[3,4], got f32[2,4]"));
  CHECK_THROWS_AS(c(x, array(std::vector<int32_t>(12, 1), {3, 4})), TypeError);
  CHECK_THROWS_WITH(c(x, array(std::vector<int32_t>(12, 1), {3, 4})), Catch::Contains("argument 1: expected dtype"));
}

TEST_CASE("import_stablehlo: malformed text is a ParseError with line and column", "[import]") {
  std::string bad = "func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %0 = stablehlo.add %arg0, %nope : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n";
  try {
    import_stablehlo(bad);
    FAIL("no ParseError");
  } catch (const ParseError& e) {
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).find("%nope is not defined") != std::string::npos);
  }
  CHECK_THROWS_AS(import_stablehlo("module @m {\n func.func public @main("), ParseError);
  CHECK_THROWS_WITH(import_stablehlo("func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n return %a : "
                                     "tensor<?xf32>\n}"),
                    Catch::Contains("dynamic shapes are not supported"));
  CHECK_THROWS_WITH(import_stablehlo("func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xf32> {}"),
                    Catch::Contains("complex is unsupported"));
  CHECK_THROWS_WITH(import_stablehlo("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                                     "  %0 = stablehlo.fft %a, type = FFT, length = [2] : tensor<2xf32>\n"
                                     "  return %0 : tensor<2xf32>\n}"),
                    Catch::Contains("stablehlo.fft is not supported by import_stablehlo"));
  CHECK_THROWS_AS(import_stablehlo("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                                   "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n"
                                   "  return %c : tensor<2xf32>\n}"), ParseError);
}

TEST_CASE("import_stablehlo: 2000 seeded mutations either import or throw a jitx error", "[import][import_fuzz]") {
  std::mt19937 gen(1234);
  const std::string seeds[] = {kMlp, kCalls, kConstants};
  const char alphabet[] = "%#:=,()[]{}<>\"x0123456789abf.- \n";
  int ok = 0, parse_errors = 0, other_errors = 0;
  for (int it = 0; it < 2000; ++it) {
    std::string s = seeds[it % 3];
    int edits = 1 + static_cast<int>(gen() % 3);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t p = gen() % s.size();
      switch (gen() % 4) {
        case 0: s.resize(p); break;                                        // truncate
        case 1: s[p] = alphabet[gen() % (sizeof(alphabet) - 1)]; break;    // flip
        case 2: s.erase(p, 1 + gen() % 8); break;                          // delete
        default: s.insert(p, 1, alphabet[gen() % (sizeof(alphabet) - 1)]);  // insert
      }
    }
    try {
      import_stablehlo(s);
      ++ok;
    } catch (const ParseError&) {
      ++parse_errors;
    } catch (const Error&) {
      ++other_errors;  // a well-formed but unsupported or ill-typed module (CompileError)
    }
  }
  CHECK(parse_errors > 1000);
  CHECK(ok + parse_errors + other_errors == 2000);
}

TEST_CASE("import_stablehlo: a splat constant fills every element (its value read once, then copied)",
          "[import][import_fuzz]") {
  // Each element was parsed from the text anew (2^28, the largest allowed, took tens of seconds: the
  // parser fuzzer's timeout).
  auto m = import_stablehlo("func.func @main(%a: tensor<f32>) -> tensor<65536xf32> {\n"
                            "  %c = stablehlo.constant dense<2.5> : tensor<65536xf32>\n"
                            "  return %c : tensor<65536xf32>\n}");
  auto out = m.compile()(jitx::full({}, 1.0f));
  REQUIRE(out.size() == 1);
  auto v = out[0].to_vector<float>();
  REQUIRE(v.size() == 65536u);
  CHECK(v.front() == 2.5f);
  CHECK(v[54321] == 2.5f);
  CHECK(v.back() == 2.5f);
  auto b = import_stablehlo("func.func @main() -> tensor<3xi1> {\n"
                            "  %c = stablehlo.constant dense<true> : tensor<3xi1>\n"
                            "  return %c : tensor<3xi1>\n}").compile()(std::vector<Array>{});
  CHECK(b.at(0).to_vector<bool>() == std::vector<bool>{true, true, true});
}

// As jax.export writes chlo ops (erf, sinh, asin, ...): a stablehlo.composite whose decomposition is a function.
const char* kComposite = R"(module @jit_f {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32>) {
    %0 = stablehlo.composite "my.scale_add" %arg0, %arg0 {composite_attributes = {k = 3 : i64}, decomposition = @my.scale_add.impl, version = 1 : i32} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc(#loc)
    return %0 : tensor<3xf32>
  } loc(#loc)
  func.func private @my.scale_add.impl(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32> {
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<3xf32>
    %0 = stablehlo.multiply %arg0, %cst : tensor<3xf32>
    %1 = stablehlo.add %0, %arg1 : tensor<3xf32>
    return %1 : tensor<3xf32>
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
)";

TEST_CASE("import_stablehlo: a stablehlo.composite runs its decomposition", "[import]") {
  auto c = import_stablehlo(kComposite).compile();
  auto outs = c(array<float>({1.5f, -2.f, 0.25f}));
  CHECK(vec<float>(outs[0]) == std::vector<float>{6.f, -8.f, 1.f});  // 3x + x
  // Without a decomposition: a ParseError naming it.
  std::string bad = kComposite;
  bad.replace(bad.find("decomposition = @my.scale_add.impl, "), 36, "");
  CHECK_THROWS_WITH(import_stablehlo(bad), Catch::Contains("decomposition"));
}
