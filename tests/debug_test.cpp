// Debugging inside jit: debug::print (captured through the print sink and compared exactly), debug::callback,
// pure_callback and config().debug_nans/debug_infs, eagerly and under jit, vmap, grad, scan, while_loop and cond.
// The expected lines follow JAX 0.10 (tools/debug_reference.py prints JAX's output for the same programs).
#include <atomic>
#include <mutex>

#include "test_util.h"

using namespace jitx;

namespace {

/// Captures debug::print's lines for its lifetime.
struct Capture {
  std::mutex mu;
  std::vector<std::string> lines;
  Capture() {
    debug::set_print_sink([this](const std::string& s) {
      std::lock_guard<std::mutex> l(mu);
      lines.push_back(s);
    });
  }
  ~Capture() { debug::set_print_sink(nullptr); }
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> l(mu);
    return std::exchange(lines, {});
  }
};
using Lines = std::vector<std::string>;

/// Sets config().debug_nans/debug_infs for its lifetime.
struct NanFlags {
  bool nans, infs;
  NanFlags(bool n, bool i) : nans(config().debug_nans), infs(config().debug_infs) {
    config().debug_nans = n;
    config().debug_infs = i;
  }
  ~NanFlags() {
    config().debug_nans = nans;
    config().debug_infs = infs;
  }
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const FloatingPointError& e) {
    return std::string("FloatingPointError: ") + e.what();
  } catch (const Error& e) {
    return std::string("Error: ") + e.what();
  }
  return "no exception";
}

}  // namespace

TEST_CASE("debug::print eagerly prints at once, with fmt's formatting", "[debug]") {
  Capture cap;
  debug::print("x = {} at step {}", Array(2.5f), 3);
  debug::print("v = {}, {:.3f}, {}", jitx::array({1.f, 2.f, 3.f}), Array(0.5), "text");
  CHECK(cap.take() == Lines{"x = 2.5 at step 3", "v = [1., 2., 3.], 0.500, text"});
}

TEST_CASE("debug::print under jit runs when the program runs, every call, in program order", "[debug]") {
  Capture cap;
  auto f = jit([](const Array& x) {
    debug::print("x = {}", x);
    Array y = x * 2.0f;
    debug::print("y = {:.2f} sum {}", y.sum(), 7);
    Array z = y + 1.0f;  // the next print's value is unused by the result: it still runs
    debug::print("unused {}", z);
    return y;
  });
  Array r = f(jitx::array({1.f, 2.f}));
  CHECK(r.to_vector<float>() == std::vector<float>{2.f, 4.f});
  CHECK(cap.take() == Lines{"x = [1., 2.]", "y = 6.00 sum 7", "unused [3., 5.]"});
  f(jitx::array({0.f, 1.f})).block_until_ready();  // no retrace: the print is in the program
  CHECK(cap.take() == Lines{"x = [0., 1.]", "y = 2.00 sum 7", "unused [1., 3.]"});
  CHECK(f.num_compiles() == 1);
}

TEST_CASE("debug::print keeps its order inside scan, fori_loop and while_loop bodies", "[debug]") {
  Capture cap;
  auto f = jit([](const Array& xs) {
    auto [c, ys] = lax::scan(
        [](const Array& c, const Array& x) {
          debug::print("scan carry {} x {}", c, x);
          return std::make_pair(c + x, c * x);
        },
        Array(0.0f), xs);
    Array w = lax::while_loop([](const Array& i) { return i < 3; },
                              [](const Array& i) {
                                debug::print("while i = {}", i);
                                return i + 1;
                              },
                              Array(0));
    Array v = lax::fori_loop(
        0, 2,
        [](const Array& i, const Array& acc) {
          debug::print("fori {} acc {}", i, acc);
          return acc * 2.0f;
        },
        Array(1.0f));
    return c + ys.sum() + w.astype(DType::float32) + v - 4.0f;
  });
  Array r = f(jitx::array({1.f, 2.f, 3.f}));
  // carry 0,1,3; ys = 0*1, 1*2, 3*3 = 11; c = 6; w = 3
  CHECK(r.item<float>() == 20.f);
  CHECK(cap.take() == Lines{"scan carry 0.0 x 1.0", "scan carry 1.0 x 2.0", "scan carry 3.0 x 3.0", "while i = 0",
                            "while i = 1", "while i = 2", "fori 0 acc 1.0", "fori 1 acc 2.0"});
}

TEST_CASE("debug::print in cond prints only the branch taken", "[debug]") {
  Capture cap;
  auto f = jit([](const Array& x) {
    return lax::cond(
        x > 0.0f,
        [](const Array& v) {
          debug::print("positive {}", v);
          return v * 2.0f;
        },
        [](const Array& v) {
          debug::print("not positive {}", v);
          return -v;
        },
        x);
  });
  CHECK(f(Array(3.0f)).item<float>() == 6.f);
  CHECK(f(Array(-1.0f)).item<float>() == 1.f);
  CHECK(cap.take() == Lines{"positive 3.0", "not positive -1.0"});
}

TEST_CASE("debug::print under vmap prints once per batch element, as JAX", "[debug]") {
  Capture cap;
  auto g = [](const Array& x, const Array& y) {
    debug::print("{} {}", x, y);
    return x * y;
  };
  // JAX: vmap(f, in_axes=(0, None))(jnp.arange(2.), 5.) prints "0.0 5.0" then "1.0 5.0".
  Array r =
      vmap(g, InAxes(std::vector<Axis>{0, std::nullopt}))(jitx::array({0.0, 1.0}), Array::scalar(5.0, DType::float64));
  CHECK(r.to_vector<double>() == std::vector<double>{0.0, 5.0});
  CHECK(cap.take() == Lines{"0.0 5.0", "1.0 5.0"});
  Array r2 = jit(vmap(g, InAxes(std::vector<Axis>{0, std::nullopt})))(jitx::array({2.0, 3.0}),
                                                                      Array::scalar(1.0, DType::float64));
  CHECK(r2.to_vector<double>() == std::vector<double>{2.0, 3.0});
  CHECK(cap.take() == Lines{"2.0 1.0", "3.0 1.0"});
}

TEST_CASE("debug::print under grad prints the primal values and does not change the gradient", "[debug]") {
  Capture cap;
  auto f = [](const Array& x) {
    debug::print("g {} {}", x, 3);
    return x * x;
  };
  // JAX: jax.grad(f)(2.0) prints "g 2.0 3" and returns 4.0.
  CHECK(grad(f)(Array::scalar(2.0, DType::float64)).item<double>() == 4.0);
  CHECK(cap.take() == Lines{"g 2.0 3"});
  CHECK(jit(grad(f))(Array::scalar(3.0, DType::float64)).item<double>() == 6.0);
  CHECK(cap.take() == Lines{"g 3.0 3"});
}

TEST_CASE("debug::print with a bad format string is a TypeError at the user's line", "[debug]") {
  Capture cap;
  int line = __LINE__ + 1;
  std::string m = message_of([] { debug::print("{} {}", Array(1.0f)); });
  CHECK(m.find("[debug.print]") != std::string::npos);
  CHECK(m.find(fmt::format("debug_test.cpp:{}", line)) != std::string::npos);
}

TEST_CASE("debug::print formats scalars as NumPy's str and format specs as Python's format()", "[debug]") {
  Capture cap;
  // JAX: jax.debug.print("{}", x) of 0-d arrays prints NumPy scalars' str.
  debug::print("{} {} {} {} {}", Array::scalar(1.0 / 3, DType::float64), Array::scalar(1.0 / 3, DType::float32),
               Array::scalar(0.1, DType::float16), Array::scalar(1e20, DType::float64), Array(true));
  // An integer takes a float spec (3.00); a bool a width (  True).
  debug::print("{:.2f} {:>6}", Array::scalar_int(3, DType::int32), Array(true));
  CHECK(cap.take() == Lines{"0.3333333333333333 0.33333334 0.1 1e+20 True", "3.00   True"});
  // A spec on an array that is not 0-d: JAX's TypeError (numpy.ndarray.__format__).
  CHECK_THROWS_AS(debug::print("{:.2f}", jitx::array({1.0, 2.0})), TypeError);
}

TEST_CASE("debug::callback calls host code with the values, in order, under jit and vmap", "[debug]") {
  std::vector<std::vector<float>> seen;
  auto f = jit([&](const Array& x) {
    debug::callback(
        [&](const Array& v, const Array& w) {
          seen.push_back(v.to_vector<float>());
          seen.push_back(w.to_vector<float>());
        },
        x, x * 10.0f);
    return x + 1.0f;
  });
  f(jitx::array({1.f, 2.f})).block_until_ready();
  CHECK(seen == std::vector<std::vector<float>>{{1.f, 2.f}, {10.f, 20.f}});
  seen.clear();
  vmap([&](const Array& x) {
    debug::callback([&](const Array& v) { seen.push_back(v.to_vector<float>()); }, x);
    return x;
  })(jitx::array({4.f, 5.f}))
      .block_until_ready();
  CHECK(seen == std::vector<std::vector<float>>{{4.f}, {5.f}});
}

TEST_CASE("pure_callback returns the host function's results, checked against the declaration", "[debug]") {
  std::atomic<int> calls{0};
  auto host_sin = [&](const Array& x) {
    ++calls;
    std::vector<double> v = x.to_vector<double>();
    for (auto& e : v) e = std::sin(e);
    return jitx::array(v, x.shape());
  };
  Array x = jitx::array({0.5, 1.0, -2.0});
  auto f = jit([&](const Array& a) { return pure_callback(host_sin, ShapedArray{a.shape(), a.dtype()}, a) * 2.0; });
  auto r = f(x).to_vector<double>();
  REQUIRE(r.size() == 3);
  CHECK(r[0] == 2 * std::sin(0.5));
  CHECK(r[1] == 2 * std::sin(1.0));
  CHECK(r[2] == 2 * std::sin(-2.0));
  CHECK(calls.load() == 1);
  // Eagerly, and two results.
  auto two = pure_callback(
      [](const Array& a) {
        return std::vector<Array>{a, jitx::array(std::vector<int32_t>{7}, {1})};
      },
      {ShapedArray{{3}, DType::float64}, ShapedArray{{1}, DType::int32}}, x);
  CHECK(two[1].to_vector<int32_t>() == std::vector<int32_t>{7});
  // An unused pure callback may be removed (JAX allows it): jitx's DCE does.
  calls = 0;
  jit([&](const Array& a) {
    (void)pure_callback(host_sin, ShapedArray{a.shape(), a.dtype()}, a);
    return a + 1.0;
  })(x)
      .block_until_ready();
  CHECK(calls.load() == 0);
  // vmap: sequential, one call per element.
  calls = 0;
  Array m = jitx::array(std::vector<double>{0.1, 0.2, 0.3, 0.4}, {2, 2});
  auto mv = vmap([&](const Array& a) { return pure_callback(host_sin, ShapedArray{a.shape(), a.dtype()}, a); })(m);
  auto mr = mv.to_vector<double>();
  CHECK(calls.load() == 2);
  CHECK(mr == std::vector<double>{std::sin(0.1), std::sin(0.2), std::sin(0.3), std::sin(0.4)});
}

TEST_CASE("pure_callback: wrong result shapes or dtypes and grad are clear errors", "[debug]") {
  Array x = jitx::array({1.0, 2.0});
  auto same = [](const Array& a) { return a; };
  std::string m = message_of([&] {
    jit([&](const Array& a) {
      return pure_callback(same, ShapedArray{{3}, DType::float64}, a);
    })(x)
        .block_until_ready();
  });
  CHECK(m.find("[pure_callback] result 0 of the callback has shape (2,), but result_shape_dtypes declares f64[3]") !=
        std::string::npos);
  m = message_of([&] { pure_callback(same, ShapedArray{{2}, DType::float32}, x).block_until_ready(); });
  INFO(m);
  CHECK(m.find("has dtype f64, but result_shape_dtypes declares f32[2]") != std::string::npos);
  m = message_of([&] {
    grad([&](const Array& a) {
      return pure_callback(same, ShapedArray{{}, DType::float64}, a);
    })(Array::scalar(1.0, DType::float64));
  });
  CHECK(m.find("[pure_callback] pure callbacks do not support JVP") != std::string::npos);
}

TEST_CASE("debug_nans: the first primitive that made a NaN, with the user's line", "[debug]") {
  NanFlags flags(true, false);
  Array minus_one = Array::scalar(-1.0, DType::float64);
  int line = __LINE__ + 3;
  auto f = jit([](const Array& x) {
    Array y = jnp::sin(x);
    Array z = jnp::log(y - 1.0);
    return z * 2.0;
  });
  std::string m = message_of([&] { f(minus_one); });
  CHECK(m.find("FloatingPointError: [log] invalid value (nan) encountered in log") == 0);
  CHECK(m.find(fmt::format("debug_test.cpp:{}", line)) != std::string::npos);
  // Eagerly: at once.
  int eager_line = __LINE__ + 1;
  m = message_of([&] { jnp::sqrt(minus_one); });
  CHECK(m.find("FloatingPointError: [sqrt] invalid value (nan) encountered in sqrt") == 0);
  CHECK(m.find(fmt::format("debug_test.cpp:{}", eager_line)) != std::string::npos);
  // A NaN inside a scan is reported at the scan, as JAX does.
  m = message_of([&] {
    jit([](const Array& x) {
      return lax::scan([](const Array& c, const Array&) { return std::make_pair(jnp::log(c - 2.0), c); }, x,
                       jnp::zeros({3}, DType::float64))
          .first;
    })(Array::scalar(5.0, DType::float64));
  });
  CHECK(m.find("FloatingPointError: [scan] invalid value (nan) encountered in scan") == 0);
}

TEST_CASE("debug_nans: no false positives, NaN arguments as JAX reports them", "[debug]") {
  Array nan_in;
  {
    NanFlags off(false, false);
    nan_in = jitx::array({1.0, std::nan("")});
    // Off: a NaN result is returned, nothing checked.
    CHECK(std::isnan(
        jit([](const Array& x) { return jnp::log(x - 2.0); })(Array::scalar(1.0, DType::float64)).item<double>()));
  }
  NanFlags flags(true, false);
  // A NaN argument that the function masks out: no error (JAX: OK).
  auto masked = jit([](const Array& x) { return jnp::where(x > 0.0, x, 0.0); });
  CHECK(message_of([&] { masked(nan_in).block_until_ready(); }) == "no exception");
  // A NaN argument that reaches the output through an op: JAX names the op (add); so does jitx.
  std::string m = message_of([&] { jit([](const Array& x) { return x + 1.0; })(nan_in); });
  CHECK(m.find("FloatingPointError: [add] invalid value (nan) encountered in add") == 0);
  // Passed straight through: no primitive made it; JAX says the de-optimized function did not produce it.
  m = message_of([&] { jit([](const Array& x) { return x; })(nan_in); });
  CHECK(m.find("FloatingPointError: [jit(") == 0);
  CHECK(m.find("did not produce one: it came from an argument") != std::string::npos);
  // Infs are not NaNs.
  CHECK(message_of([&] { jit([](const Array& x) { return 1.0 / x; })(Array::scalar(0.0, DType::float64)); }) ==
        "no exception");
}

TEST_CASE("debug_infs: an inf names its primitive, a NaN alone is not reported", "[debug]") {
  NanFlags flags(false, true);
  std::string m = message_of([] { jit([](const Array& x) { return 1.0 / x; })(Array::scalar(0.0, DType::float64)); });
  CHECK(m.find("FloatingPointError: [div] invalid value (inf) encountered in div") == 0);
  CHECK(message_of([] { jit([](const Array& x) { return jnp::log(x); })(Array::scalar(-1.0, DType::float64)); }) ==
        "no exception");
}

TEST_CASE("debug effects survive the optimiser: not merged, not removed, printed as side-effecting", "[debug]") {
  Capture cap;
  auto f = jit([](const Array& x) {
    debug::print("same {}", x);
    debug::print("same {}", x);  // identical twice: CSE must not merge them
    Array unused = x * 3.0f;
    debug::callback([](const Array&) {}, unused);  // its operand is used by nothing else: DCE must keep both
    return x + 1.0f;
  });
  Array x = jitx::array({1.f});
  auto lowered = f.lower(x);
  std::string shlo = lowered.as_text();
  CHECK(shlo.find("call_target_name = \"jitx.host_callback\", has_side_effect = true") != std::string::npos);
  std::string hlo = lowered.compile().as_text();
  size_t calls = 0;
  for (size_t p = hlo.find("jitx.host_callback"); p != std::string::npos; p = hlo.find("jitx.host_callback", p + 1))
    ++calls;
  CHECK(calls == 3);
  f(x).block_until_ready();
  CHECK(cap.take() == Lines{"same [1.]", "same [1.]"});
}

TEST_CASE("a jitx computation inside a callback is a clear RuntimeError, not a hang", "[debug]") {
  // The callback runs on the stream that runs its program: a value it computes with jitx would wait for that
  // stream for ever. Event::wait refuses instead, and the error reaches the program's results.
  auto uses_jitx = [](const Array& v) { (void)jnp::sum(v * 2.0f).item<float>(); };
  auto f = jit([&](const Array& x) {
    debug::callback(uses_jitx, x);
    return x + 1.0f;
  });
  CHECK_THROWS_WITH(f(jitx::array({1.f, 2.f})).block_until_ready(),
                    Catch::Contains("host callback") && Catch::Contains("not supported"));
  // Eagerly, the callback runs on the caller's thread when the stream is idle (then jitx works inside it) and on
  // the stream otherwise: either the right value or the same clear error, never a hang.
  float eager_sum = 0;
  try {
    debug::callback([&](const Array& v) { eager_sum = jnp::sum(v * 2.0f).item<float>(); }, jitx::array({3.f, 4.f}));
    CHECK(eager_sum == 14.f);
  } catch (const RuntimeError& e) {
    CHECK_THAT(e.what(), Catch::Contains("not supported"));
  }
  auto host_twice = [](const Array& v) { return jnp::multiply(v, 2.0f).block_until_ready(); };
  auto g = jit([&](const Array& x) { return pure_callback(host_twice, ShapedArray{x.shape(), x.dtype()}, x); });
  CHECK_THROWS_WITH(g(jitx::array({1.f})).block_until_ready(), Catch::Contains("not supported"));
  // Plain C++ on the values the callback receives works, and jitx runs normally afterwards.
  std::vector<float> seen;
  jit([&](const Array& x) {
    debug::callback([&](const Array& v) { seen = v.to_vector<float>(); }, x);
    return x;
  })(jitx::array({5.f})).block_until_ready();
  CHECK(seen == std::vector<float>{5.f});
  CHECK(jnp::sum(jitx::array({1.f, 2.f})).item<float>() == 3.f);
}

TEST_CASE("debug_nans names pure_callback for a NaN it returns, eagerly and under jit (as JAX)", "[debug]") {
  NanFlags flags(true, false);
  auto nan_cb = [](const Array& x) {
    return pure_callback([](const Array&) { return Array::scalar(NAN, DType::float64); },
                         ShapedArray{{}, DType::float64}, x) +
           1.0;
  };
  std::string eager = message_of([&] { nan_cb(Array::scalar(1.0, DType::float64)); });
  CHECK(eager.find("FloatingPointError") != std::string::npos);
  CHECK(eager.find("[pure_callback]") != std::string::npos);
  std::string jitted = message_of([&] { jit(nan_cb)(Array::scalar(1.0, DType::float64)).block_until_ready(); });
  CHECK(jitted.find("[pure_callback]") != std::string::npos);
}
