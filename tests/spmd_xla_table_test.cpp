// jitx's partitioner against XLA's (issue 17): 28 programs x shardings on 8 CPU devices, the table of
// tools/spmd_xla_table.py. For each, the partitioned program must give the one-device values, and its collectives
// must be XLA's (same kinds and counts) or move no more bytes; the XLA column is what JAX 0.10.2 compiled
// (`tools/spmd_xla_table.py --jax-json`, recorded below). JITX_SPMD_TABLE_JSON=FILE writes jitx's column as JSON for
// `tools/spmd_xla_table.py --report` (benchmarks/results/SPMD_XLA.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>

#include "jitx/jitx.h"
#include "test_util.h"

using namespace jitx;

namespace {

using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;

struct Program {
  std::string name;
  int mesh;  // 1: ('x': 8); 2: ('data': 2, 'model': 4)
  std::vector<Shape> shapes;
  std::vector<PartitionSpec> specs;
  std::vector<std::optional<PartitionSpec>> outs;  // empty: the partitioner's choice
  Fn f;
};

struct Collectives {
  std::map<std::string, int64_t> count;
  int64_t bytes = 0;
};

/// XLA's column: JAX 0.10.2, 8 host devices (tools/spmd_xla_table.py --jax-json).
const std::map<std::string, Collectives>& xla_table();

Array gelu(const Array& x) { return nn::gelu(x, true); }
Array mlp(const std::vector<Array>& a) { return jnp::matmul(gelu(jnp::matmul(a[0], a[1]) + a[2]), a[3]) + a[4]; }
Array layer_norm(const Array& x) {
  Array c = x - jnp::mean(x, {-1}, true);
  return c * lax::rsqrt(jnp::mean(c * c, {-1}, true) + 1e-5f);
}

struct TwoLayer {
  Array w1, w2;
};
std::vector<Array> train_step(const std::vector<Array>& a) {
  auto loss = [](const std::vector<Array>& w, const Array& x, const Array& y) {
    Array d = jnp::matmul(jnp::tanh(jnp::matmul(x, w[0])), w[1]) - y;
    return jnp::mean(d * d);
  };
  auto [l, g] = value_and_grad(loss)(std::vector<Array>{a[0], a[1]}, a[2], a[3]);
  return {a[0] - 0.1f * g[0], a[1] - 0.1f * g[1], l};
}

std::vector<Program> programs() {
  using P = PartitionSpec;
  P rows("x", nullptr), cols(nullptr, "x"), rep;
  std::vector<Program> t;
  auto one = [](std::function<Array(const std::vector<Array>&)> g) {
    return Fn([g](const std::vector<Array>& a) { return std::vector<Array>{g(a)}; });
  };
  t.push_back({"ew_chain", 1, {{64, 32}}, {rows}, {}, one([](auto& a) { return jnp::sin(a[0]) * 2.0f + 1.0f; })});
  t.push_back({"ew_mixed", 1, {{64, 32}, {64, 32}}, {rows, rep}, {}, one([](auto& a) { return a[0] * a[1] + a[1]; })});
  t.push_back({"bias_add", 1, {{64, 32}, {32}}, {cols, P("x")}, {}, one([](auto& a) { return a[0] + a[1]; })});
  auto mm = one([](auto& a) { return jnp::matmul(a[0], a[1]); });
  t.push_back({"matmul_rows", 1, {{64, 32}, {32, 16}}, {rows, rep}, {}, mm});
  t.push_back({"matmul_cols", 1, {{64, 32}, {32, 16}}, {rep, cols}, {}, mm});
  t.push_back({"matmul_contract", 1, {{64, 32}, {32, 16}}, {cols, rows}, {rep}, mm});
  t.push_back({"matmul_contract_rs", 1, {{64, 32}, {32, 16}}, {cols, rows}, {rows}, mm});
  t.push_back({"matmul_2d", 2, {{64, 32}, {32, 16}}, {P("data", "model"), P("model", nullptr)}, {}, mm});
  t.push_back({"batched_matmul", 1, {{8, 16, 32}, {8, 32, 16}}, {P("x", nullptr, nullptr), P("x", nullptr, nullptr)},
               {}, mm});
  t.push_back({"sum_rows", 1, {{64, 32}}, {rows}, {}, one([](auto& a) { return jnp::sum(a[0], {0}); })});
  t.push_back({"max_cols", 1, {{64, 32}}, {cols}, {}, one([](auto& a) { return jnp::max(a[0], {1}); })});
  t.push_back({"softmax_rows", 1, {{64, 32}}, {rows}, {}, one([](auto& a) { return nn::softmax(a[0], -1); })});
  t.push_back({"softmax_sharded_axis", 1, {{64, 32}}, {rows}, {}, one([](auto& a) { return nn::softmax(a[0], 0); })});
  t.push_back({"layer_norm_rows", 1, {{64, 32}}, {rows}, {}, one([](auto& a) { return layer_norm(a[0]); })});
  t.push_back(
      {"layer_norm_features_sharded", 1, {{64, 32}}, {cols}, {}, one([](auto& a) { return layer_norm(a[0]); })});
  t.push_back({"transpose", 1, {{64, 32}}, {rows}, {}, one([](auto& a) { return jnp::transpose(a[0]); })});
  t.push_back({"reshape_flatten", 1, {{64, 32}}, {rows}, {},
               one([](auto& a) { return jnp::reshape(a[0], {2048}) * 2.0f; })});
  std::vector<Shape> mlp_shapes{{64, 32}, {32, 128}, {128}, {128, 32}, {32}};
  t.push_back({"mlp_data_parallel", 1, mlp_shapes, {rows, rep, rep, rep, rep}, {}, one(mlp)});
  t.push_back({"mlp_megatron", 1, mlp_shapes, {rep, cols, P("x"), rows, rep}, {rep}, one(mlp)});
  t.push_back({"mlp_2d", 2, mlp_shapes,
               {P("data", nullptr), P(nullptr, "model"), P("model"), P("model", nullptr), rep}, {}, one(mlp)});
  std::vector<Shape> ts{{32, 64}, {64, 8}, {64, 32}, {64, 8}};
  t.push_back({"train_step_dp", 1, ts, {rep, rep, rows, rows}, {rep, rep, rep}, train_step});
  t.push_back({"train_step_fsdp", 1, ts, {rows, rows, rows, rows}, {rows, rows, rep}, train_step});
  t.push_back({"scan_layers", 1, {{64, 32}, {4, 32, 32}}, {rows, rep}, {}, one([](auto& a) {
                 auto body = [](const Array& h, const Array& wl) {
                   return std::pair{jnp::tanh(jnp::matmul(h, wl)), Array(0.0f)};
                 };
                 return lax::scan(body, a[0], a[1]).first;
               })});
  t.push_back({"with_constraint", 1, {{64, 32}}, {rows}, {}, Fn()});  // f is set where the mesh is known
  t.push_back({"transpose_resharded", 1, {{64, 32}}, {rows}, {rows},
               one([](auto& a) { return jnp::transpose(a[0]) * 2.0f; })});
  t.push_back({"rows_to_cols", 1, {{64, 32}}, {rows}, {cols}, one([](auto& a) { return a[0] * 2.0f; })});
  auto conv_same = [](const Array& x, const Array& k) {
    return jnp::tanh(lax::conv_general_dilated(x, k, {1, 1}, {{1, 1}, {1, 1}}, {}, {},
                                               lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC")));
  };
  t.push_back({"conv_rows", 1, {{4, 16, 16, 8}, {3, 3, 8, 8}}, {P(nullptr, "x", nullptr, nullptr), rep}, {},
               one([conv_same](auto& a) { return conv_same(a[0], a[1]); })});
  t.push_back({"cnn_grad_dp", 1, {{16, 8, 8, 4}, {3, 3, 4, 8}}, {P("x", nullptr, nullptr, nullptr), rep}, {rep},
               one([conv_same](auto& a) {
                 const Array x = a[0];
                 return grad([&](const Array& k) { return jnp::mean(jnp::square(conv_same(x, k))); })(a[1]);
               })});
  return t;
}

/// The collectives of a compiled per-device program: kinds, and bytes moved (all-reduce / all-gather / all-to-all /
/// collective-permute: the result; reduce-scatter: the operand, the result times the group size).
Collectives collectives_of(const std::string& text) {
  Collectives c;
  // A collective made asynchronous counts once, at its start (the done moves nothing).
  static const std::regex line(R"(= ([a-z0-9]+)\[([0-9,]*)\]\S* (all-reduce|all-gather|reduce-scatter|all-to-all|)"
                               R"(collective-permute)(?:-start)?\((.*))");
  static const std::map<std::string, int64_t> size{{"f32", 4}, {"s32", 4}, {"u32", 4}, {"pred", 1}, {"f64", 8},
                                                   {"s64", 8}, {"bf16", 2}, {"f16", 2}};
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    int64_t elems = 1;
    std::stringstream dims(m[2].str());
    for (std::string d; std::getline(dims, d, ',');) elems *= std::stoll(d);
    int64_t b = elems * size.at(m[1].str());
    if (m[3] == "reduce-scatter") {
      std::smatch g;
      std::string rest = m[4].str();
      if (std::regex_search(rest, g, std::regex(R"(replica_groups=\{\{([0-9,]*)\})"))) {
        std::string members = g[1].str();
        b *= static_cast<int64_t>(std::count(members.begin(), members.end(), ',') + 1);
      }
    }
    c.count[m[3].str()]++;
    c.bytes += b;
  }
  return c;
}

std::string kinds_str(const Collectives& c) {
  std::string s;
  for (auto& [k, n] : c.count)
    if (n) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, k);
  return s.empty() ? "none" : s;
}

bool same_kinds(const Collectives& a, const Collectives& b) {
  for (const char* k : {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"}) {
    auto x = a.count.count(k) ? a.count.at(k) : 0, y = b.count.count(k) ? b.count.at(k) : 0;
    if (x != y) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("partitioner vs XLA: 28 programs x shardings on 8 devices, values and collectives", "[spmd][spmd_xla]") {
  if (devices().size() < 8) {
    WARN("needs 8 devices (the test main sets eight unless JITX_CPU_DEVICE_COUNT says otherwise)");
    return;
  }
  Mesh m1 = make_mesh({8}, {"x"}), m2 = make_mesh({2, 4}, {"data", "model"});
  std::string json = "{\"programs\": {";
  int64_t rows = 0;
  for (Program& p : programs()) {
    const Mesh& mesh = p.mesh == 1 ? m1 : m2;
    if (p.name == "with_constraint")
      p.f = [&](const std::vector<Array>& a) {
        return std::vector<Array>{lax::with_sharding_constraint(jnp::exp(a[0]), NamedSharding(m1, P())) + 1.0f};
      };
    INFO(p.name);
    std::vector<Array> host, sharded;
    for (size_t k = 0; k < p.shapes.size(); ++k) {
      host.push_back(random::normal(random::PRNGKey(static_cast<int64_t>(100 + k)), p.shapes[k]) * 0.5);
      sharded.push_back(device_put(host.back(), NamedSharding(mesh, p.specs[k])));
    }
    JitOptions o;
    for (auto& s : p.outs)
      o.out_shardings.push_back(s ? std::optional<Sharding>(NamedSharding(mesh, *s)) : std::nullopt);
    auto f = jit(p.f, o);
    auto want = jit(p.f)(host);
    auto got = f(sharded);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      auto g = got[k].to_vector<double>(), w = want[k].to_vector<double>();
      REQUIRE(g.size() == w.size());
      double worst = 0;
      for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]) / (1 + std::abs(w[i])));
      CHECK(worst < 1e-5);  // f32: partial sums add in another order
    }
    std::string text = f.lower(sharded).compile().as_text();
    Collectives c = collectives_of(text);
    json += fmt::format("{}\"{}\": {{\"collectives\": {{", rows++ ? ", " : "", p.name);
    bool first = true;
    for (auto& [k, n] : c.count) json += fmt::format("{}\"{}\": {}", std::exchange(first, false) ? "" : ", ", k, n);
    json += fmt::format("}}, \"bytes\": {}}}", c.bytes);
    // The issue's two training steps: data parallel all-reduces its gradients and the loss in one combined
    // all-reduce (as XLA's combiner does), with no all-gather; fully sharded all-gathers each parameter once and
    // reduce-scatters each gradient.
    auto n_of = [&](const char* k) { return c.count.count(k) ? c.count.at(k) : 0; };
    if (p.name == "train_step_dp") {
      CHECK(n_of("all-reduce") == 1);
      CHECK(c.bytes == (32 * 64 + 64 * 8 + 1) * 4);  // each gradient and the loss, once
      CHECK(n_of("all-gather") == 0);
    }
    if (p.name == "train_step_fsdp") {
      CHECK(n_of("all-gather") == 2);
      CHECK(n_of("reduce-scatter") == 2);
      CHECK(n_of("all-reduce") == 1);  // the loss
    }
    auto it = xla_table().find(p.name);
    if (it == xla_table().end()) continue;
    const Collectives& x = it->second;
    INFO("jitx: " << kinds_str(c) << ", " << c.bytes << " bytes; XLA: " << kinds_str(x) << ", " << x.bytes
                  << " bytes\n" << text);
    CHECK((same_kinds(c, x) || c.bytes <= x.bytes));
  }
  json += "}}\n";
  if (const char* path = std::getenv("JITX_SPMD_TABLE_JSON")) std::ofstream(path) << json;
  CHECK(rows == 28);
}

namespace {
const std::map<std::string, Collectives>& xla_table() {
  // (name, {kind: count}, bytes moved per device), from /work/venv-jax/bin/python tools/spmd_xla_table.py --jax-json.
  // XLA:CPU combines independent all-reduces into one instruction and never emits a reduce-scatter (an all-reduce
  // and a local slice instead).
  static const std::map<std::string, Collectives> t = {
      {"ew_chain", {{}, 0}},
      {"ew_mixed", {{}, 0}},
      {"bias_add", {{}, 0}},
      {"matmul_rows", {{}, 0}},
      {"matmul_cols", {{}, 0}},
      {"matmul_contract", {{{"all-reduce", 1}}, 4096}},
      {"matmul_contract_rs", {{{"all-reduce", 1}}, 4096}},
      {"matmul_2d", {{{"all-reduce", 1}}, 2048}},
      {"batched_matmul", {{}, 0}},
      {"sum_rows", {{{"all-reduce", 1}}, 128}},
      {"max_cols", {{{"all-reduce", 1}}, 256}},
      {"softmax_rows", {{}, 0}},
      {"softmax_sharded_axis", {{{"all-reduce", 2}}, 256}},
      {"layer_norm_rows", {{}, 0}},
      {"layer_norm_features_sharded", {{{"all-reduce", 2}}, 768}},
      {"transpose", {{}, 0}},
      {"reshape_flatten", {{}, 0}},
      {"mlp_data_parallel", {{}, 0}},
      {"mlp_megatron", {{{"all-reduce", 1}}, 8192}},
      {"mlp_2d", {{{"all-reduce", 1}}, 4096}},
      {"train_step_dp", {{{"all-reduce", 1}}, 10244}},
      {"train_step_fsdp", {{{"all-reduce", 1}, {"all-gather", 2}}, 20484}},
      {"scan_layers", {{}, 0}},
      {"with_constraint", {{{"all-gather", 1}}, 8192}},
      {"transpose_resharded", {{{"all-to-all", 1}}, 1024}},
      {"rows_to_cols", {{{"all-to-all", 1}}, 1024}},
      {"conv_rows", {{{"collective-permute", 2}}, 4096}},
      {"cnn_grad_dp", {{{"all-reduce", 1}}, 1152}},
  };
  return t;
}
}  // namespace
