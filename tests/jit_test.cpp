// jit: the signature-keyed cache, compile logs, cache-miss explanations, pytrees, statics, threads, AOT.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "hlo/ir/hlo_parser.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {
/// Captures jitx's log lines for the duration of a test.
struct LogCapture {
  std::mutex mu;
  std::vector<std::string> lines;
  LogCapture() {
    config().log_compiles = true;
    config().explain_cache_misses = true;
    set_log_sink([this](const std::string& s) {
      std::lock_guard<std::mutex> l(mu);
      lines.push_back(s);
    });
  }
  ~LogCapture() {
    config().log_compiles = false;
    config().explain_cache_misses = false;
    set_log_sink(nullptr);
  }
  std::string all() {
    std::string s;
    for (auto& l : lines) s += l + "\n";
    return s;
  }
  size_t count(const std::string& needle) {
    size_t n = 0;
    for (auto& l : lines) n += l.find(needle) != std::string::npos;
    return n;
  }
};

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
}  // namespace

struct MlpParams {
  Array w, b;
};
JITX_PYTREE(MlpParams, w, b)

struct ScaledLayer {
  Array w;
  float scale = 1.0f;  // a number field: static, part of the cache key
  Array b;
};
JITX_PYTREE(ScaledLayer, w, scale, b)

TEST_CASE("jit compiles once per signature and explains misses", "[jit]") {
  LogCapture log;
  auto f = jit([](Array x, Array y) { return x * 2.0 + y; }, {.name = "affine"});
  auto xs = random_floats(8, 1), ys = random_floats(8, 2);
  Array x = array(xs, {8}), y = array(ys, {8});
  auto r1 = f(x, y).to_vector<float>();
  for (size_t i = 0; i < 8; ++i) CHECK(r1[i] == xs[i] * 2.0f + ys[i]);
  f(x, y);
  f(array(random_floats(8, 3), {8}), y);
  CHECK(f.num_compiles() == 1);
  CHECK(log.count("Compiled 'affine'") == 1);

  // A new shape compiles again, and the explanation names the argument and the part that changed.
  Array x16 = array(random_floats(16, 4), {16});
  Array y16 = array(random_floats(16, 5), {16});
  f(x16, y16);
  CHECK(f.num_compiles() == 2);
  std::string text = log.all();
  CHECK(text.find("TRACING CACHE MISS") != std::string::npos);
  CHECK(text.find("args[0] (shape): seen f32[8], but now given f32[16]") != std::string::npos);

  // A dtype change is named as such.
  f(x.astype(float64), y.astype(float64));
  CHECK(log.all().find("(dtype): seen f32[8], but now given f64[8]") != std::string::npos);
  CHECK(f.num_compiles() == 3);
}

TEST_CASE("a change of config().allow_excess_precision is a cache miss, and the new setting takes effect", "[jit]") {
  LogCapture log;
  // A bf16 product converted to f32: with excess precision it keeps its f32 value (as XLA's simplify-fp-conversions;
  // an HLO rewrite, so on every platform), without it it is rounded to bf16 first.
  auto f = jit([](Array x) { return (x * 1.1).astype(float32); }, {.name = "chain"});
  Array x = array(random_floats(64, 7), {64}).astype(bfloat16);
  bool saved = config().allow_excess_precision;
  config().allow_excess_precision = true;
  auto once = f(x).astype(float32).to_vector<float>();
  config().allow_excess_precision = false;
  auto per_op = f(x).astype(float32).to_vector<float>();
  config().allow_excess_precision = saved;
  CHECK(f.num_compiles() == 2);
  CHECK(log.all().find("config().allow_excess_precision: seen true, now false") != std::string::npos);
  CHECK(once != per_op);
}

TEST_CASE("C++ scalars are traced as weak-typed arrays: a changing value does not recompile", "[jit]") {
  auto step = jit([](Array w, Array lr) { return w - lr * w; });
  Array w = array<float>({1.0f, 2.0f, -4.0f});
  auto a = step(w, 0.5).to_vector<float>();
  auto b = step(w, 0.25).to_vector<float>();
  CHECK(step.num_compiles() == 1);
  auto c = step(w, 0.125f).to_vector<float>();  // a float is a weak f32, a double a weak f64: one more compile
  CHECK(step.num_compiles() == 2);
  CHECK(a == std::vector<float>{0.5f, 1.0f, -2.0f});
  CHECK(b == std::vector<float>{0.75f, 1.5f, -3.0f});
  CHECK(c == std::vector<float>{0.875f, 1.75f, -3.5f});
  // The weak scalar keeps a bf16 array bf16.
  auto out = step(w.astype(bfloat16), 0.5);
  CHECK(out.dtype() == bfloat16);
}

TEST_CASE("a function taking a plain number makes it static: one compile per value", "[jit]") {
  LogCapture log;
  auto f = jit([](Array x, int n) {
    Array r = x;
    for (int i = 0; i < n; ++i) r = r * 2.0;  // a C++ loop unrolls at trace time
    return r;
  }, {.name = "unrolled"});
  Array x = array<float>({1.0f, -3.0f});
  CHECK(f(x, 3).to_vector<float>() == std::vector<float>{8.0f, -24.0f});
  CHECK(f(x, 3).to_vector<float>() == std::vector<float>{8.0f, -24.0f});
  CHECK(f.num_compiles() == 1);
  CHECK(f(x, 1).to_vector<float>() == std::vector<float>{2.0f, -6.0f});
  CHECK(f.num_compiles() == 2);
  CHECK(log.all().find("args[1] (static value): seen 3, but now given 1") != std::string::npos);
}

TEST_CASE("static_argnums bakes an argument in as a concrete value", "[jit]") {
  auto f = jit([](Array x, Array k) {
    // k is concrete while tracing: a C++ branch on it is fine.
    if (k.item<int>() > 0) return x + k;
    return x - k;
  }, {.static_argnums = {1}});
  Array x = array<int32_t>({10, 20});
  CHECK(f(x, 2).to_vector<int32_t>() == std::vector<int32_t>{12, 22});
  CHECK(f(x, -2).to_vector<int32_t>() == std::vector<int32_t>{12, 22});
  CHECK(f(x, 2).to_vector<int32_t>() == std::vector<int32_t>{12, 22});
  CHECK(f.num_compiles() == 2);
}

TEST_CASE("strings, enums and Static<T> are static arguments", "[jit]") {
  enum class Act { kRelu, kTanh };
  auto f = jit([](Array x, const std::string& op, Act act) {
    Array y = op == "double" ? x * 2.0 : x;
    return act == Act::kRelu ? nn::relu(y) : jnp::tanh(y);
  });
  Array x = array<float>({-1.0f, 0.5f});
  CHECK(f(x, std::string("double"), Act::kRelu).to_vector<float>() == std::vector<float>{0.0f, 1.0f});
  CHECK(f(x, std::string("same"), Act::kRelu).to_vector<float>() == std::vector<float>{0.0f, 0.5f});
  auto t = f(x, std::string("same"), Act::kTanh).to_vector<float>();
  CHECK(t[0] == Approx(std::tanh(-1.0f)));
  CHECK(f.num_compiles() == 3);
  auto g = jit([](Array x, Static<int> n) { return x * static_cast<double>(*n); });
  CHECK(g(x, Static{3}).to_vector<float>() == std::vector<float>{-3.0f, 1.5f});
}

TEST_CASE("pytrees: vectors, tuples, pairs, maps, optionals, arrays and user structs", "[jit]") {
  auto f = jit([](const MlpParams& p, const std::vector<Array>& xs, const std::map<std::string, Array>& extra,
                  std::optional<Array> bias) {
    Array acc = jnp::matmul(xs[0], p.w) + p.b;
    for (size_t i = 1; i < xs.size(); ++i) acc = acc + jnp::matmul(xs[i], p.w);
    acc = acc * extra.at("scale");
    if (bias) acc = acc + *bias;
    return std::make_tuple(acc, std::make_pair(jnp::sum(acc), p), std::array<Array, 2>{acc, -acc});
  });
  MlpParams p{array<float>({1, 2, 3, 4}, {2, 2}), array<float>({0.5f, -0.5f})};
  std::vector<Array> xs{array<float>({1, 0}, {1, 2}), array<float>({0, 1}, {1, 2})};
  std::map<std::string, Array> extra{{"scale", Array(2.0f)}};
  auto [acc, pr, arr] = f(p, xs, extra, std::optional<Array>{});
  // x0 @ w = [1,2]; x1 @ w = [3,4]; sum + b = [4.5, 5.5]; * 2 = [9, 11]
  CHECK(acc.to_vector<float>() == std::vector<float>{9.0f, 11.0f});
  CHECK(pr.first.item<float>() == 20.0f);
  CHECK(pr.second.w.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(arr[1].to_vector<float>() == std::vector<float>{-9.0f, -11.0f});
  auto [acc2, pr2, arr2] = f(p, xs, extra, std::optional<Array>{array<float>({1.0f, 1.0f})});
  CHECK(acc2.to_vector<float>() == std::vector<float>{10.0f, 12.0f});
  CHECK(f.num_compiles() == 2);  // optional present vs absent: different tree structure
  xs.push_back(array<float>({1, 1}, {1, 2}));
  f(p, xs, extra, std::optional<Array>{});
  CHECK(f.num_compiles() == 3);  // a longer vector: different structure
}

TEST_CASE("many threads calling one jitted function at once compile it once", "[jit]") {
  auto f = jit([](Array x) { return jnp::sum(jnp::exp(x)); });
  Array x = array<float>({0.0f, 1.0f, 2.0f});
  float expect = 1.0f + std::exp(1.0f) + std::exp(2.0f);
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20; ++i)
        if (std::abs(f(x).item<float>() - expect) > 1e-5f) bad++;
    });
  for (auto& t : ts) t.join();
  CHECK(bad == 0);
  CHECK(f.num_compiles() == 1);
}

TEST_CASE("make_jaxpr prints JAX's syntax", "[jit]") {
  auto text = make_jaxpr([](Array a, Array b) { return a + b; })(zeros({8, 4}), zeros({4})).str();
  CHECK(text ==
        "{ lambda ; a:f32[8,4] b:f32[4]. let\n"
        "    c:f32[8,4] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(8, 4)] b\n"
        "    d:f32[8,4] = add a c\n"
        "  in (d,) }");
  auto t2 = make_jaxpr([](Array x) { return jnp::exp(x) * 2.0; })(ones({3}, bfloat16)).str();
  CHECK(t2 == "{ lambda ; a:bf16[3]. let b:bf16[3] = exp a; c:bf16[3] = mul b 2.0:bf16[] in (c,) }");
  INFO(t2);
}

TEST_CASE("closure constants become constvars", "[jit]") {
  Array table = array<float>({1, 2, 3});
  auto f = jit([&](Array x) { return x * table; });
  CHECK(f(array<float>({2, 2, 2})).to_vector<float>() == std::vector<float>{2, 4, 6});
  auto text = make_jaxpr([&](Array x) { return x * table; })(zeros({3})).str();
  INFO(text);
  CHECK(text.rfind("{ lambda a:f32[3]; b:f32[3]. let", 0) == 0);
}

TEST_CASE("AOT: lower -> as_text -> compile -> call, and a wrong signature throws", "[jit]") {
  auto f = jit([](Array x) { return jnp::sum(x * x, {1}); }, {.name = "sumsq"});
  Array x = array<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto lowered = f.lower(x);
  std::string shlo = lowered.as_text();
  CHECK(shlo.find("module @jit_sumsq") != std::string::npos);
  CHECK(shlo.find("stablehlo.reduce") != std::string::npos);
  CHECK(lowered.jaxpr().str().find("reduce_sum[axes=(1,)]") != std::string::npos);
  auto compiled = lowered.compile();
  CHECK(compiled.as_text().find("HloModule jit_sumsq") != std::string::npos);
  CHECK(compiled(x).to_vector<float>() == std::vector<float>{14.0f, 77.0f});
  CHECK_THROWS_AS(compiled(array<float>({1, 2}, {1, 2})), TypeError);
  CHECK_THROWS_WITH(compiled(array<float>({1, 2}, {1, 2})), Catch::Contains("args[0] (shape): seen f32[2,3]"));
}

TEST_CASE("donated arguments cannot be used after the call", "[jit]") {
  auto step = jit([](Array w, Array g) { return w - 0.5 * g; }, {.donate_argnums = {0}});
  Array w = array<float>({1.0f, 2.0f});
  Array g = array<float>({2.0f, 4.0f});
  Array w2 = step(w, g);
  CHECK(w2.to_vector<float>() == std::vector<float>{0.0f, 0.0f});
  CHECK_THROWS_AS(w.to_vector<float>(), RuntimeError);
  CHECK_THROWS_WITH(w.to_vector<float>(), Catch::Contains("donated"));
  CHECK(g.to_vector<float>() == std::vector<float>{2.0f, 4.0f});  // not donated
}

TEST_CASE("donation shows in the lowered and compiled texts as JAX prints it", "[jit]") {
  // JAX 0.10.2: jit(lambda x, y, z: (sum(x), z * 2, y * 3), donate_argnums=(0, 1, 2)).lower(f32[4] x 3):
  // %arg0 {tf.aliasing_output = 1 : i32}, %arg1 {tf.aliasing_output = 2 : i32}, %arg2 none (no result left);
  // compiled: input_output_alias={ {1}: (0, {}, may-alias), {2}: (1, {}, may-alias) }.
  auto f = jit([](Array x, Array y, Array z) { return std::make_tuple(jnp::sum(x), z * 2, y * 3); },
               JitOptions{}.set_donate_argnums({0, 1, 2}));
  Array a = array<float>({1, 2, 3, 4}), b = array<float>({5, 6, 7, 8}), c = array<float>({9, 1, 2, 3});
  auto lowered = f.lower(a, b, c);
  std::string text = lowered.as_text();
  INFO(text);
  CHECK(text.find("@main(%arg0: tensor<4xf32> {tf.aliasing_output = 1 : i32}, %arg1: tensor<4xf32> "
                  "{tf.aliasing_output = 2 : i32}, %arg2: tensor<4xf32>) -> (") != std::string::npos);
  std::string hlo = lowered.compile().as_text();
  INFO(hlo);
  CHECK(hlo.find("input_output_alias={ {1}: (0, {}, may-alias), {2}: (1, {}, may-alias) }") != std::string::npos);
  CHECK(hlo.find("input_output_alias") < hlo.find('\n'));
  // The compiled text parses back (the header's attributes are skipped), as does XLA's header.
  CHECK(hlo::print_hlo(*hlo::parse_hlo(hlo)).find("ENTRY") != std::string::npos);
  std::string xla = "HloModule m, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }, "
                    "entry_computation_layout={(f32[2]{0})->f32[2]{0}}, allow_spmd_sharding_propagation_to_output="
                    "{true}\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n";
  CHECK(hlo::parse_hlo(xla)->entry->root->opcode == hlo::Opcode::kParameter);
  auto g = jit([](Array x, Array y) { return std::make_tuple(y * 1.0, x * 2); },
               JitOptions{}.set_donate_argnums({0, 1}));
  std::string t2 = g.lower(a, array<double>({1, 2, 3, 4})).as_text();
  INFO(t2);
  CHECK(t2.find("%arg0: tensor<4xf32> {tf.aliasing_output = 1 : i32}, %arg1: tensor<4xf64> "
                "{tf.aliasing_output = 0 : i32}") != std::string::npos);
  // jitx's compiled entry returns a tuple even for one result (`->(f32[4]{0})`), so its index is {0}; nothing
  // donated: no attribute.
  auto h = jit([](Array x) { return x + 1; }, JitOptions{}.set_donate_argnums({0}));
  CHECK(h.lower(a).compile().as_text().find("input_output_alias={ {0}: (0, {}, may-alias) }") != std::string::npos);
  auto k = jit([](Array x) { return x + 1; });
  CHECK(k.lower(a).as_text().find("tf.aliasing_output") == std::string::npos);
  CHECK(k.lower(a).compile().as_text().find("input_output_alias") == std::string::npos);
}

TEST_CASE("jit of jit inlines, and calls return before their results are read", "[jit]") {
  auto inner = jit([](Array x) { return x + 1.0; });
  auto outer = jit([&](Array x) { return inner(x) * 3.0; });
  Array r = outer(array<float>({1.0f, 2.0f}));
  r.block_until_ready();
  CHECK(r.to_vector<float>() == std::vector<float>{6.0f, 9.0f});
  CHECK(inner.num_compiles() == 0);  // inlined into outer's trace
  // block_until_ready on a pytree of results.
  auto pair = jit([](Array x) { return std::make_pair(x, x * x); })(array<float>({3.0f}));
  block_until_ready(pair);
  CHECK(pair.second.item<float>() == 9.0f);
}

TEST_CASE("the jaxpr remembers each equation's source line", "[jit]") {
  int line = __LINE__ + 1;
  auto f = [](Array x) { return jnp::exp(x) + 1.0; };
  auto text = make_jaxpr(f)(zeros({2})).str_with_source_info();
  INFO(text);
  CHECK(text.find(fmt::format("exp a  # jit_test.cpp:{}", line)) != std::string::npos);
  CHECK(text.find(fmt::format("add b 1.0:f32[]  # jit_test.cpp:{}", line)) != std::string::npos);
}

TEST_CASE("dynamic_slice wraps negative start indices as JAX does", "[jit]") {
  Array x = array<int32_t>({0, 1, 2, 3, 4, 5});
  CHECK(lax::dynamic_slice(x, {Array(-2)}, {2}).to_vector<int32_t>() == std::vector<int32_t>{4, 5});
  auto f = jit([](Array v, Array i) { return lax::dynamic_slice(v, {i}, {2}); });
  CHECK(f(x, -3).to_vector<int32_t>() == std::vector<int32_t>{3, 4});
  CHECK(f(x, 1).to_vector<int32_t>() == std::vector<int32_t>{1, 2});
  CHECK(f(x, 9).to_vector<int32_t>() == std::vector<int32_t>{4, 5});  // clamped into range
  auto u = lax::dynamic_update_slice(x, array<int32_t>({9}), {Array(-1)});
  CHECK(u.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3, 4, 9});
  CHECK(x[-1].item<int32_t>() == 5);
}

TEST_CASE("JITX_DUMP_TO writes each stage of a compiled module", "[jit]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "jitx_dump_test";
  fs::remove_all(dir);
  config().dump_to = dir.string();
  auto f = jit([](Array x) { return jnp::sum(jnp::exp(x)); }, {.name = "dumped"});
  f(array<float>({1.0f, 2.0f})).block_until_ready();
  config().dump_to.clear();
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  auto has = [&](const std::string& suffix) {
    for (auto& n : names)
      if (n.find("jit_dumped") == 0 && n.size() >= suffix.size() &&
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        return true;
    return false;
  };
  CHECK(has(".jaxpr.txt"));
  CHECK(has(".stablehlo.mlir"));
  CHECK(has(".before_optimizations.hlo"));
  CHECK(has(".after_optimizations.hlo"));
  for (auto& n : names) CHECK(n.find(".tmp") == std::string::npos);  // nothing half-written
  fs::remove_all(dir);
}

TEST_CASE("number fields of a JITX_PYTREE struct are static, not leaves", "[jit]") {
  auto f = jit([](const ScaledLayer& l, Array x) {
    ScaledLayer out = l;
    out.w = l.w * x * static_cast<double>(l.scale);
    out.b = l.b + x;
    return out;
  });
  ScaledLayer l{array<float>({1.0f, 2.0f}), 3.0f, array<float>({10.0f, 20.0f})};
  ScaledLayer r = f(l, array<float>({2.0f, 2.0f}));
  CHECK(r.w.to_vector<float>() == std::vector<float>{6.0f, 12.0f});
  CHECK(r.b.to_vector<float>() == std::vector<float>{12.0f, 22.0f});
  CHECK(r.scale == 3.0f);
  l.scale = 0.5f;
  CHECK(f(l, array<float>({2.0f, 2.0f})).w.to_vector<float>() == std::vector<float>{1.0f, 2.0f});
  CHECK(f.num_compiles() == 2);
}

TEST_CASE("devices, default_device and device_put", "[jit]") {
  auto ds = devices();
  REQUIRE(!ds.empty());
  CHECK(ds[0] == default_device());
  CHECK(default_device().platform() == default_platform());
  CHECK(default_device().str() == default_platform() + ":0");
  Array x = array<float>({1.5f, -2.0f, 3.0f});
  CHECK(device_of(x) == default_device());
  Array y = device_put(x, ds.back());
  CHECK(device_of(y) == ds.back());
  CHECK(y.to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.0f});
  CHECK((y * 2.0).to_vector<float>() == std::vector<float>{3.0f, -4.0f, 6.0f});
  CHECK_THROWS_AS(make_jaxpr([](Array v) { return device_put(v, default_device()); })(x), TracerError);
}
