// The CPU runtime: loops and branches as compiled programs (no interpreter), buffer assignment of loop carries and
// scan outputs in place, donation writing into the donated buffer, several devices, and asynchronous execution
// (errors reach the waiter; concurrent callers share an executable).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include "backend_test_util.h"
#include "hlo/evaluator/evaluator.h"
#include "core/trace.h"
#include "hlo/analysis/buffer_assignment.h"
#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "jitx/jitx.h"
#include "runtime/concrete.h"
#include "runtime/runtime.h"
#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;
using Catch::Matchers::Contains;
using detail::Literal;

namespace {

Array f32(const std::vector<double>& v, Shape s) { return make(v, std::move(s), DType::float32); }

detail::Literal literal_of(const Array& a) { return detail::concrete_buffer(a, "test")->literal(); }

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

/// Runs the compiled program's optimised HLO on the interpreter (the oracle) and compares every output with what
/// the compiled executable returned (within the table's sum bound: loop bodies of a few dozen dependent ops, sums
/// among them); on cpu, also requires that nothing ran on the interpreter.
template <class C>
void check_native(const C& compiled, const std::vector<Array>& args, const std::vector<Array>& got, int min_loops,
                  int min_branches) {
  if (default_platform() == "cpu") {
    auto st = compiled.executable_stats();
    INFO(compiled.as_text());
    CHECK(st.at("whole_module_fallback") == 0);
    CHECK(st.at("interpreter_fallbacks") == 0);
    CHECK(st.at("while_loops") >= min_loops);
    CHECK(st.at("conditionals") >= min_branches);
  }
  auto m = hlo::parse_hlo(compiled.as_text());
  std::vector<detail::Literal> lits;
  for (auto& a : args) lits.push_back(literal_of(a));
  evaluator::Value want = evaluator::evaluate(*m, lits);
  REQUIRE(want.tuple.size() == got.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const auto& w = want.tuple[k].array;
    auto g = literal_of(got[k]);
    INFO("output " << k);
    REQUIRE(g.dims == w.dims);
    REQUIRE(g.dtype == w.dtype);
    for (int64_t i = 0; i < w.size(); ++i) {
      if (is_floating(w.dtype)) {
        double gv = g.get_f64(i), wv = w.get_f64(i);
        Tol t = tol(w.dtype, Bound::kSum);
        CHECK(std::fabs(gv - wv) <= t.atol + t.rtol * std::fabs(wv));
      } else {
        CHECK(g.get_i64(i) == w.get_i64(i));
      }
    }
  }
}

const hlo::Instruction* find_op(const hlo::Computation& c, hlo::Opcode op) {
  for (auto& i : c.instructions)
    if (i->opcode == op) return i.get();
  return nullptr;
}

}  // namespace

TEST_CASE("cpu control flow: while, scan, cond and switch run as compiled programs and match the interpreter",
          "[control][cpu]") {
  SECTION("while_loop with a pytree carry and a data-dependent trip count") {
    auto f = jit([](Array x, Array limit) {
      auto [n, y] = lax::while_loop([&](const std::pair<Array, Array>& c) { return jnp::sum(c.second) < limit; },
                                    [](const std::pair<Array, Array>& c) {
                                      return std::make_pair(c.first + 1, c.second * 1.5f + 0.25f);
                                    },
                                    std::make_pair(Array(0), x));
      return std::vector<Array>{n, y};
    });
    std::vector<Array> args{f32(uniform(5, 0.1, 1), {5}), Array::scalar(200.0, DType::float32)};
    auto c = f.lower(args[0], args[1]).compile();
    auto got = c(args[0], args[1]);
    CHECK(got[0].item<int>() > 3);
    check_native(c, args, got, 1, 0);
  }
  SECTION("scan: carry and stacked ys, forward and reverse, unrolled with a remainder") {
    for (bool reverse : {false, true}) {
      for (int64_t unroll : {1, 3}) {
        auto f = jit([=](Array c0, Array xs) {
          auto [c, ys] = lax::scan(
              [](Array c, Array x) { return std::make_pair(jnp::tanh(c * 0.5f + x), jnp::sum(c * x)); }, c0, xs,
              {.reverse = reverse, .unroll = unroll});
          return std::vector<Array>{c, ys};
        });
        std::vector<Array> args{f32(uniform(4, -1, 1), {4}), f32(uniform(7 * 4, -1, 1), {7, 4})};
        auto c = f.lower(args[0], args[1]).compile();
        INFO("reverse=" << reverse << " unroll=" << unroll);
        check_native(c, args, c(args[0], args[1]), 1, 0);
      }
    }
  }
  SECTION("cond on a predicate and switch_ on a clamped index") {
    auto f = jit([](Array p, Array i, Array x) {
      Array a = lax::cond(p, [](Array v) { return jnp::exp(v); }, [](Array v) { return v * v - 1.0f; }, x);
      Array b = lax::switch_(i, std::tuple{[](Array v) { return v + 1.0f; }, [](Array v) { return jnp::sin(v); },
                                           [](Array v) { return -v; }},
                             a);
      return std::vector<Array>{a, b};
    });
    Array x = f32(uniform(6, -1, 1), {2, 3});
    for (bool p : {true, false}) {
      for (int i : {-1, 0, 1, 2, 5}) {
        std::vector<Array> args{Array(p), Array(i), x};
        auto c = f.lower(args[0], args[1], args[2]).compile();
        INFO("p=" << p << " i=" << i);
        check_native(c, args, c(args[0], args[1], args[2]), 0, 2);
      }
    }
  }
  SECTION("nested: scan inside while inside cond, closing over outer values") {
    auto f = jit([](Array p, Array w, Array xs) {
      Array r = lax::cond(
          p,
          [&](Array x0) {
            return lax::while_loop([](const std::pair<Array, Array>& c) { return c.first < 3; },
                                   [&](const std::pair<Array, Array>& c) {
                                     auto [s, ys] = lax::scan(
                                         [&](Array a, Array x) { return std::make_pair(a * 0.9f + x * w, a); },
                                         c.second, xs);
                                     return std::make_pair(c.first + 1, s + jnp::sum(ys) * 0.01f);
                                   },
                                   std::make_pair(Array(0), x0))
                .second;
          },
          [](Array x0) { return x0 * 2.0f; }, jnp::sum(xs, {0}));
      return std::vector<Array>{r};
    });
    for (bool p : {true, false}) {
      std::vector<Array> args{Array(p), Array::scalar(0.75, DType::float32), f32(uniform(5 * 3, -1, 1), {5, 3})};
      auto c = f.lower(args[0], args[1], args[2]).compile();
      check_native(c, args, c(args[0], args[1], args[2]), 2, 1);
    }
  }
  SECTION("fori_loop with traced bounds, an empty range, a zero-length scan") {
    auto f = jit([](Array x, Array n) {
      Array y = lax::fori_loop(Array(1), n, [](Array i, Array v) { return v + i.astype(DType::float32) * v; }, x);
      auto [c, ys] = lax::scan([](Array c, Array x) { return std::make_pair(c + x, c); }, y, zeros({0, 2}));
      return std::vector<Array>{y, c, ys};
    });
    for (int n : {5, -3}) {
      std::vector<Array> args{f32(uniform(2, -1, 1), {2}), Array(n)};
      auto c = f.lower(args[0], args[1]).compile();
      check_native(c, args, c(args[0], args[1]), 1, 0);
    }
  }
  SECTION("carries that swap places are double-buffered, not updated in place") {
    auto f = jit([](Array a, Array b) {
      auto [x, y] = lax::fori_loop(0, 5, [](Array, const std::pair<Array, Array>& c) {
        return std::make_pair(c.second * 2.0f, c.first + 1.0f);
      }, std::make_pair(a, b));
      return std::vector<Array>{x, y};
    });
    std::vector<double> av = uniform(3, -1, 1), bv = uniform(3, -1, 1);
    std::vector<Array> args{f32(av, {3}), f32(bv, {3})};
    auto c = f.lower(args[0], args[1]).compile();
    auto got = c(args[0], args[1]);
    check_native(c, args, got, 1, 0);
    // A C++ reference in f32: (a, b) -> (2b, a + 1), five times.
    std::vector<float> a(av.begin(), av.end()), b(bv.begin(), bv.end());
    for (auto& v : a) v = float(v);
    for (int it = 0; it < 5; ++it)
      for (int k = 0; k < 3; ++k) {
        float na = b[k] * 2.0f, nb = a[k] + 1.0f;
        a[k] = na;
        b[k] = nb;
      }
    auto x = got[0].to_vector<float>(), y = got[1].to_vector<float>();
    for (int k = 0; k < 3; ++k) {
      CHECK(x[k] == a[k]);
      CHECK(y[k] == b[k]);
    }
  }
}

TEST_CASE("buffer assignment: a loop body updates its carry in place, a scan writes ys into the output",
          "[control][analysis]") {
  SECTION("while_loop: every carry of an elementwise update stays in its buffer") {
    auto f = jit([](Array x) {
      return lax::while_loop([](const std::pair<Array, Array>& c) { return c.first < 10; },
                             [](const std::pair<Array, Array>& c) {
                               return std::make_pair(c.first + 1, c.second * 1.5f + 0.25f);
                             },
                             std::make_pair(Array(0), x));
    });
    Array x = f32(uniform(64, -1, 1), {64});
    auto m = hlo::parse_hlo(f.lower(x).compile().as_text());
    const hlo::Instruction* w = find_op(*m->entry, hlo::Opcode::kWhile);
    REQUIRE(w);
    hlo::BufferOptions o;
    o.carry_in_place = true;
    auto ba = hlo::assign_buffers(*w->called[1], o);
    INFO(ba.str());
    REQUIRE(ba.output_aliases.size() == 2);
    CHECK(ba.output_aliases[0] == 0);
    CHECK(ba.output_aliases[1] == 1);
    CHECK(ba.str().find("output 1 is written over parameter 1") != std::string::npos);
    // Without the option nothing aliases: the body would need a second buffer for each carry.
    auto plain = hlo::assign_buffers(*w->called[1]);
    CHECK(plain.output_aliases[1] == -1);
  }
  SECTION("scan: the body's dynamic-update-slice writes ys in place, and ys starts in the entry's output buffer") {
    auto f = jit([](Array c0, Array xs) {
      return lax::scan([](Array c, Array x) { return std::make_pair(c + x, jnp::sum(c * x)); }, c0, xs);
    });
    Array c0 = f32(uniform(4, -1, 1), {4}), xs = f32(uniform(9 * 4, -1, 1), {9, 4});
    auto m = hlo::parse_hlo(f.lower(c0, xs).compile().as_text());
    const hlo::Instruction* w = find_op(*m->entry, hlo::Opcode::kWhile);
    REQUIRE(w);
    const hlo::Computation& body = *w->called[1];
    const hlo::Instruction* dus = find_op(body, hlo::Opcode::kDynamicUpdateSlice);
    REQUIRE(dus);
    int64_t ys_slot = -1;
    for (size_t k = 0; k < body.root->operands.size(); ++k)
      if (body.root->operand(k) == dus) ys_slot = static_cast<int64_t>(k);
    REQUIRE(ys_slot >= 0);
    hlo::BufferOptions o;
    o.carry_in_place = true;
    auto ba = hlo::assign_buffers(body, o);
    INFO(ba.str());
    CHECK(ba.output_aliases[ys_slot] == ys_slot);
    // In the entry, the while's ys is an output, and its zero initial value is computed straight into it.
    auto eba = hlo::assign_buffers(*m);
    INFO(eba.str());
    int64_t ys_value = -1;
    for (size_t v = 0; v < eba.values.size(); ++v)
      if (eba.values[v].defining == w && eba.values[v].tuple_index == ys_slot) ys_value = static_cast<int64_t>(v);
    REQUIRE(ys_value >= 0);
    auto [alloc, off] = eba.slice_of[ys_value];
    CHECK(eba.allocations[alloc].kind == hlo::Allocation::Kind::kOutput);
    const auto* init = w->operand(ys_slot);
    CHECK(eba.slice_of[eba.value_of.at(init)] == eba.slice_of[ys_value]);
  }
}

TEST_CASE("donation: the output is written into the donated argument's buffer", "[cpu][jit]") {
  if (default_platform() != "cpu") return;  // the interpreter allocates every result
  auto step = jit([](Array w, Array g) { return w - 0.1f * g; }, {.donate_argnums = {0}});
  auto wv = uniform(1000, -1, 1), gv = uniform(1000, -1, 1);
  Array w = f32(wv, {1000}), g = f32(gv, {1000});
  const void* w_data = detail::concrete_buffer(w, "test")->storage->data();
  Array w2 = step(w, g);
  w2.block_until_ready();
  CHECK(detail::concrete_buffer(w2, "test")->storage->data() == w_data);
  auto got = w2.to_vector<float>();
  // w - 0.1 g: two roundings, or one where the kernel fuses the multiply into the subtract (XLA:CPU and jitx do).
  auto step_of = [&](size_t i) {
    float w = float(wv[i]), g = float(gv[i]);
    return std::make_pair(w - 0.1f * g, std::fma(-0.1f, g, w));
  };
  for (size_t i = 0; i < wv.size(); ++i) {
    auto [two, fused] = step_of(i);
    CHECK((got[i] == two || got[i] == fused));
  }
  CHECK(step.lower(w2, g).compile().memory_analysis().alias_size_in_bytes == 4000);

  SECTION("memory someone else still holds is copied first, never overwritten") {
    auto lit = detail::Literal::make(DType::float32, {1000});
    for (int64_t i = 0; i < 1000; ++i) lit.set_f64(i, wv[i]);
    Array shared = detail::make_concrete(runtime::Buffer::from_literal(lit, runtime::Client::get().default_device()));
    Array out = step(shared, g);
    out.block_until_ready();
    CHECK(detail::concrete_buffer(out, "test")->storage->data() != lit.data());
    for (int64_t i = 0; i < 1000; ++i) CHECK(lit.get_f64(i) == float(wv[i]));  // untouched
    auto o = out.to_vector<float>();
    for (size_t i = 0; i < wv.size(); ++i) {
      auto [two, fused] = step_of(i);
      CHECK((o[i] == two || o[i] == fused));
    }
  }
  SECTION("a donated argument read after the output is written does not alias it") {
    // out0 = x * 2 could take x's buffer only if nothing read x later; out1 = x[::-1] + 1 reads it afterwards.
    auto f = jit([](Array x) { return std::make_pair(x * 2.0f, jnp::flip(x) + 1.0f); }, {.donate_argnums = {0}});
    Array x = f32(wv, {1000});
    auto [a, b] = f(x);
    auto av = a.to_vector<float>(), bv = b.to_vector<float>();
    for (size_t i = 0; i < wv.size(); ++i) {
      CHECK(av[i] == float(wv[i]) * 2.0f);
      CHECK(bv[i] == float(wv[999 - i]) + 1.0f);
    }
  }
}

TEST_CASE("donation: Adam's three updates are one multi-output kernel writing each output over its argument",
          "[cpu][jit]") {
  if (default_platform() != "cpu") return;  // the interpreter allocates every result
  auto adam = jit(
      [](Array p, Array m, Array v, Array g) {
        Array m2 = 0.9f * m + 0.1f * g;
        Array v2 = 0.999f * v + 0.001f * (g * g);
        Array p2 = p - 0.01f * m2 / (jnp::sqrt(v2) + 1e-8f);
        return std::make_tuple(p2, m2, v2);
      },
      {.donate_argnums = {0, 1, 2}});
  const size_t n = 5003;  // not a multiple of any vector width
  auto pv = uniform(n, -1, 1), mv = uniform(n, -1, 1), vv = uniform(n, 0.01, 1), gv = uniform(n, -1, 1);
  Array p = f32(pv, {int64_t(n)}), m = f32(mv, {int64_t(n)}), v = f32(vv, {int64_t(n)}), g = f32(gv, {int64_t(n)});
  auto compiled = adam.lower(p, m, v, g).compile();
  std::string text = compiled.as_text();
  INFO(text);
  // One kernel: every output of the step computed from one read of p, m, v and g.
  CHECK(count_of(text, "kind=kLoop") == 1);
  CHECK(count_of(text, "get-tuple-element(%fusion") == 3);
  auto mem = compiled.memory_analysis();
  CHECK(mem.alias_size_in_bytes == int64_t(3 * n * 4));
  CHECK(mem.temp_size_in_bytes == 0);
  const void* data[3] = {detail::concrete_buffer(p, "test")->storage->data(),
                         detail::concrete_buffer(m, "test")->storage->data(),
                         detail::concrete_buffer(v, "test")->storage->data()};
  auto [p2, m2, v2] = adam(p, m, v, g);
  p2.block_until_ready();
  CHECK(detail::concrete_buffer(p2, "test")->storage->data() == data[0]);
  CHECK(detail::concrete_buffer(m2, "test")->storage->data() == data[1]);
  CHECK(detail::concrete_buffer(v2, "test")->storage->data() == data[2]);
  auto pg = p2.to_vector<float>(), mg = m2.to_vector<float>(), vg = v2.to_vector<float>();
  // Against double precision from the f32 inputs: a few f32 roundings (f32: rtol 1e-5 after the division).
  for (size_t i = 0; i < n; ++i) {
    double pi = float(pv[i]), mi = float(mv[i]), vi = float(vv[i]), gi = float(gv[i]);
    double mw = 0.9 * mi + 0.1 * gi, vw = 0.999 * vi + 0.001 * gi * gi, pw = pi - 0.01 * mw / (std::sqrt(vw) + 1e-8);
    INFO("element " << i);
    CHECK(std::fabs(mg[i] - mw) <= 1e-6 + 1e-6 * std::fabs(mw));
    CHECK(std::fabs(vg[i] - vw) <= 1e-6 * std::fabs(vw));
    CHECK(std::fabs(pg[i] - pw) <= 1e-6 + 1e-5 * std::fabs(pw));
  }
}

TEST_CASE("multi-output loop fusion: an output written over a donated argument another output still reads",
          "[cpu][jit]") {
  // s = exp(a) * b is returned and read by s + a: one kernel writes both, and s (or s + a) may take a's buffer
  // while the other output's element still needs a's old value. Checked at sizes that take the plain loop, the
  // vectorised loop and the streaming path (large outputs).
  for (int64_t n : {7, 4099, 1 << 20}) {
    INFO("n = " << n);
    auto f = jit([](Array a, Array b) {
      Array s = jnp::exp(a) * b;
      return std::make_pair(s + a, s);
    }, {.donate_argnums = {0}});
    auto av = uniform(size_t(n), -2, 2), bv = uniform(size_t(n), -2, 2);
    Array a = f32(av, {n}), b = f32(bv, {n});
    auto text = f.lower(a, b).compile().as_text();
    CHECK(count_of(text, "get-tuple-element(%fusion") == 2);
    auto [x, y] = f(a, b);
    auto xg = x.to_vector<float>(), yg = y.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      double s = std::exp(double(float(av[i]))) * float(bv[i]);
      double tol = 4e-7 * std::max(1.0, std::fabs(s)) + 1e-6 * std::fabs(s);  // f32 exp: a few ulp
      if (std::fabs(yg[i] - s) > tol || std::fabs(xg[i] - (s + float(av[i]))) > tol + 4e-7 * std::fabs(av[i])) {
        FAIL("element " << i << ": got " << xg[i] << ", " << yg[i] << "; want " << s + float(av[i]) << ", " << s);
      }
    }
  }
}

TEST_CASE("devices: calls run on the device of their committed arguments, each device on its own stream", "[jit]") {
  auto ds = devices();
  if (ds.size() < 2) {
    WARN("needs two devices (the test main sets two unless JITX_CPU_DEVICE_COUNT says otherwise)");
    return;
  }
  auto xv = uniform(8, -1, 1), yv = uniform(8, -1, 1);
  Array x = f32(xv, {8}), y = f32(yv, {8});
  auto f = jit([](Array a, Array b) { return a * b + 1.0f; });
  auto check_values = [&](const Array& r) {
    auto got = r.to_vector<float>();
    for (size_t i = 0; i < 8; ++i) {  // rounded twice, or once as a fused multiply-add
      float two = float(xv[i]) * float(yv[i]) + 1.0f, fused = std::fma(float(xv[i]), float(yv[i]), 1.0f);
      CHECK((got[i] == two || got[i] == fused));
    }
  };
  // Uncommitted arguments: the default device.
  Array r0 = f(x, y);
  CHECK(device_of(r0) == default_device());
  check_values(r0);
  // Committed to device 1 (one argument is enough): the call runs there, and its result stays there.
  Array x1 = device_put(x, ds[1]);
  Array r1 = f(x1, y);
  CHECK(device_of(r1) == ds[1]);
  check_values(r1);
  CHECK(device_of(f(r1, r1)) == ds[1]);
  CHECK(device_of(x1 + 1.0f) == ds[1]);  // eager ops follow too
  // Committed to two different devices: an error naming both arguments and devices.
  Array y0 = device_put(y, ds[0]);
  CHECK_THROWS_AS(f(x1, y0), RuntimeError);
  CHECK_THROWS_WITH(f(x1, y0), Catch::Contains("args[0] is on " + ds[1].str()) &&
                                   Catch::Contains("args[1] is on " + ds[0].str()));
  CHECK_THROWS_WITH(x1 + y0, Catch::Contains("committed to different devices"));

  // Each device has its own stream: device 1 computes while device 0's stream is blocked.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> timed_out{false};
  ds[0].get()->stream.enqueue([released, &timed_out] {
    if (released.wait_for(std::chrono::seconds(20)) != std::future_status::ready) timed_out = true;
  });
  Array r2 = f(x1, y);
  r2.block_until_ready();
  CHECK_FALSE(timed_out.load());
  release.set_value();
  ds[0].get()->stream.synchronize();
  CHECK_FALSE(timed_out.load());
  check_values(r2);
}

namespace {
/// Runs an HLO module on a backend with the given arguments on the default device.
std::vector<detail::Literal> run_hlo(runtime::Backend& b, std::shared_ptr<const hlo::Module> m,
                                     const std::vector<detail::Literal>& args) {
  auto exe = b.compile(m);
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;
  for (auto& a : args) bufs.push_back(runtime::Buffer::from_literal(a, runtime::Client::get().default_device()));
  auto outs = exe->execute(bufs, runtime::Client::get().default_device());
  std::vector<detail::Literal> r;
  for (auto& o : outs) r.push_back(o->literal());
  return r;
}

detail::Literal random_f32(std::vector<int64_t> dims) {
  auto l = detail::Literal::make(DType::float32, dims);
  auto v = uniform(static_cast<size_t>(l.size()), -1, 1);
  for (int64_t i = 0; i < l.size(); ++i) l.set_f64(i, v[i]);
  return l;
}
detail::Literal s32_scalar(int64_t v) {
  auto l = detail::Literal::make(DType::int32, {});
  l.set_i64(0, v);
  return l;
}
}  // namespace

TEST_CASE("cpu control flow in HLO: carries copied, swapped, constant and passed twice, a bool carry as the "
          "condition, branch indices out of range", "[control][cpu]") {
  // The body returns: a counter (in place), x1 = x * 0.5 + y (x is also returned as y1, so x1 needs a second
  // buffer), y1 = x (a parameter, copied), a constant, and the condition's flag (the condition returns its
  // parameter as it is). The loop is entered with x passed twice.
  const char* text = R"(HloModule m

%cond (c0: s32[], c1: f32[4], c2: f32[4], c3: f32[4], c4: pred[]) -> pred[] {
  %c0 = s32[] parameter(0)
  %c1 = f32[4] parameter(1)
  %c2 = f32[4] parameter(2)
  %c3 = f32[4] parameter(3)
  ROOT %c4 = pred[] parameter(4)
}

%body (b0: s32[], b1: f32[4], b2: f32[4], b3: f32[4], b4: pred[]) -> (s32[], f32[4], f32[4], f32[4], pred[]) {
  %b0 = s32[] parameter(0)
  %b1 = f32[4] parameter(1)
  %b2 = f32[4] parameter(2)
  %b3 = f32[4] parameter(3)
  %b4 = pred[] parameter(4)
  %one = s32[] constant(1)
  %i1 = s32[] add(%b0, %one)
  %half = f32[] constant(0.5)
  %hb = f32[4] broadcast(%half), broadcast_dimensions={}
  %xm = f32[4] multiply(%b1, %hb)
  %x1 = f32[4] add(%xm, %b2)
  %k = f32[4] constant({1, 2, 3, 4})
  %five = s32[] constant(5)
  %flag = pred[] compare(%i1, %five), compare_type=SIGNED, direction=LT
  ROOT %t = (s32[], f32[4], f32[4], f32[4], pred[]) tuple(%i1, %x1, %b1, %k, %flag)
}

%br0 (a0: f32[4], a1: s32[]) -> (f32[4]) {
  %a0 = f32[4] parameter(0)
  %a1 = s32[] parameter(1)
  %e = f32[4] exponential(%a0)
  ROOT %r0 = (f32[4]) tuple(%e)
}

%br1 (d0: f32[4], d1: s32[]) -> (f32[4]) {
  %d0 = f32[4] parameter(0)
  %d1 = s32[] parameter(1)
  ROOT %r1 = (f32[4]) tuple(%d0)
}

ENTRY %main (x: f32[4], idx: s32[]) -> (s32[], f32[4], f32[4], f32[4], f32[4]) {
  %x = f32[4] parameter(0)
  %idx = s32[] parameter(1)
  %zero = s32[] constant(0)
  %true = pred[] constant(true)
  %w = (s32[], f32[4], f32[4], f32[4], pred[]) while(%zero, %x, %x, %x, %true), calls=%cond, %body
  %g0 = s32[] get-tuple-element(%w), index=0
  %g1 = f32[4] get-tuple-element(%w), index=1
  %g2 = f32[4] get-tuple-element(%w), index=2
  %g3 = f32[4] get-tuple-element(%w), index=3
  %c = (f32[4]) conditional(%idx, %g1, %g0), calls=%br0, %br1
  %r = f32[4] get-tuple-element(%c), index=0
  ROOT %out = (s32[], f32[4], f32[4], f32[4], f32[4]) tuple(%g0, %g1, %g2, %g3, %r)
}
)";
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  hlo::verify(*m);
  auto cpu = runtime::make_cpu_backend();
  auto interp = runtime::make_interpreter_backend();
  auto stats = cpu->compile(m)->stats();
  CHECK(stats.at("interpreter_fallbacks") == 0);
  CHECK(stats.at("while_loops") == 1);
  CHECK(stats.at("conditionals") == 1);
  for (int64_t idx : {-4, 0, 1, 9}) {
    std::vector<detail::Literal> args{random_f32({4}), s32_scalar(idx)};
    auto want = run_hlo(*interp, m, args);
    auto got = run_hlo(*cpu, m, args);
    REQUIRE(got.size() == want.size());
    INFO("index " << idx);
    CHECK(got[0].get_i64(0) == 5);
    for (size_t k = 0; k < got.size(); ++k)
      for (int64_t i = 0; i < want[k].size(); ++i) {
        Tol t = tol(want[k].dtype, Bound::kSum);
        CHECK(std::fabs(got[k].get_f64(i) - want[k].get_f64(i)) <= t.atol + t.rtol * std::fabs(want[k].get_f64(i)));
      }
  }
}

TEST_CASE("cpu control flow: an error inside a loop body reaches the waiter, naming the op", "[control][cpu]") {
  const char* text = R"(HloModule m

%cond (c0: s32[], c1: f32[4]) -> pred[] {
  %c0 = s32[] parameter(0)
  %c1 = f32[4] parameter(1)
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%c0, %three), compare_type=SIGNED, direction=LT
}

%body (b0: s32[], b1: f32[4]) -> (s32[], f32[4]) {
  %b0 = s32[] parameter(0)
  %b1 = f32[4] parameter(1)
  %one = s32[] constant(1)
  %i1 = s32[] add(%b0, %one)
  %bad = f32[4] custom-call(%b1), custom_call_target="nope"
  ROOT %t = (s32[], f32[4]) tuple(%i1, %bad)
}

ENTRY %main (x: f32[4]) -> (f32[4]) {
  %x = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %w = (s32[], f32[4]) while(%zero, %x), calls=%cond, %body
  %g = f32[4] get-tuple-element(%w), index=1
  ROOT %out = (f32[4]) tuple(%g)
}
)";
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(text);
  auto cpu = runtime::make_cpu_backend();
  auto exe = cpu->compile(m);
  CHECK(exe->stats().at("while_loops") == 1);
  auto outs =
      exe->execute(std::vector{runtime::Buffer::from_literal(random_f32({4}), runtime::Client::get().default_device())},
                   runtime::Client::get().default_device());
  CHECK_THROWS_WITH(outs[0]->literal(), Catch::Contains("%bad"));
}

TEST_CASE("cpu: execution is asynchronous, errors reach the waiter, concurrent callers", "[cpu]") {
  std::shared_ptr<const hlo::Module> m = hlo::parse_hlo(one_op("f32[1000]", "exponential", {"f32[1000]"}));
  auto exe = native().compile(m);
  Literal x = random_literal(hlo::Shape(DType::float32, {1000}), -1, 1);
  auto arg = runtime::Buffer::from_literal(x, &test_device());
  SECTION("a call returns before its work has run") {
    std::promise<void> gate;
    auto opened = gate.get_future().share();
    test_device().stream.enqueue([opened] { opened.wait(); });  // holds the stream
    auto outs = exe->execute(std::vector{arg}, &test_device());
    CHECK(!outs[0]->ready->is_ready());
    gate.set_value();
    Literal y = outs[0]->literal();
    CHECK(outs[0]->ready->is_ready());
    CHECK(y.get_f64(7) == Approx(std::exp(static_cast<float>(x.get_f64(7)))).epsilon(kF32Accuracy.exp_scalar));
  }
  SECTION("an input that failed passes its error on, and a failing op is named") {
    auto bad = runtime::Buffer::pending(DType::float32, {1000}, &test_device());
    bad->ready->set_error(std::make_exception_ptr(RuntimeError("upstream failure")));
    auto outs = exe->execute(std::vector{bad}, &test_device());
    CHECK_THROWS_WITH(outs[0]->literal(), Contains("upstream failure"));
    std::shared_ptr<const hlo::Module> cc =
        hlo::parse_hlo(one_op("f32[4]", "custom-call", {"f32[4]"}, ", custom_call_target=\"nope\""));
    auto outs2 =
        native().compile(cc)->execute(std::vector{runtime::Buffer::from_literal(
                                          random_literal(hlo::Shape(DType::float32, {4}), 0, 1), &test_device())},
                                      &test_device());
    CHECK_THROWS_WITH(outs2[0]->literal(), Contains("%r"));
  }
  SECTION("many threads share one executable") {
    std::atomic<int> wrong{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
      ts.emplace_back([&, t] {
        for (int k = 0; k < 50; ++k) {
          Literal in = Literal::make(DType::float32, {1000});
          for (int64_t i = 0; i < 1000; ++i) in.set_f64(i, 0.001 * ((t * 50 + k + i) % 100));
          auto outs = exe->execute(std::vector{runtime::Buffer::from_literal(in, &test_device())}, &test_device());
          Literal y = outs[0]->literal();
          for (int64_t i = 0; i < 1000; i += 97)
            if (std::fabs(y.get_f64(i) - std::exp(static_cast<float>(in.get_f64(i)))) > kF32Accuracy.exp_threads)
              wrong++;
        }
      });
    for (auto& t : ts) t.join();
    CHECK(wrong == 0);
  }
}

TEST_CASE("donation waits for reads of the donated buffer still queued on another device", "[jit]") {
  auto ds = devices();
  if (ds.size() < 2) {
    WARN("needs two devices (the test main sets two unless JITX_CPU_DEVICE_COUNT says otherwise)");
    return;
  }
  auto wv = uniform(64, -1, 1), xv = uniform(64, -1, 1);
  auto read = jit([](Array a, Array b) { return a + b; });
  auto overwrite = jit([](Array a) { return a * 2.0f - 17.0f; }, {.donate_argnums = {0}});
  for (int round = 0; round < 5; ++round) {
    Array w = f32(wv, {64});  // uncommitted: on the default device, read wherever a computation runs
    Array x1 = device_put(f32(xv, {64}), ds[1]);
    w.block_until_ready();
    x1.block_until_ready();
    // Device 1's stream is held, so its read of w waits in the queue while device 0 overwrites w in place.
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    ds[1].get()->stream.enqueue([released] { released.wait_for(std::chrono::seconds(20)); });
    Array r = read(x1, w);
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      release.set_value();
    });
    Array o = overwrite(w);
    releaser.join();
    auto got = r.to_vector<float>(), out = o.to_vector<float>();
    for (size_t i = 0; i < 64; ++i) {
      CHECK(got[i] == float(xv[i]) + float(wv[i]));  // the value w had when the read was queued
      float two = float(wv[i]) * 2.0f - 17.0f, fused = std::fma(float(wv[i]), 2.0f, -17.0f);
      CHECK((out[i] == two || out[i] == fused));
    }
  }
}
