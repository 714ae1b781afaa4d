// The nn activations JAX has beside relu/gelu/softplus: values and derivatives (grad and jvp, eager and jit) at
// points spanning the range, the kinks included, against JAX 0.10.2 (jax_enable_x64, CPU) f32 numbers made by:
//   x = jnp.array([-1e4, -30., -6., -3., -1., -0.5, 0., 0.5, 1., 3., 6., 7., 30., 1e4], jnp.float32)
//   f(x).tolist(), jax.vmap(jax.grad(f))(x).tolist()
// with f = nn.relu6, lambda v: nn.elu(v, 0.7), lambda v: nn.leaky_relu(v, 0.2), nn.log_sigmoid,
// lambda v: nn.celu(v, 1.5), nn.selu, nn.hard_tanh, nn.hard_sigmoid, nn.hard_silu, nn.mish, nn.squareplus,
// nn.soft_sign, nn.sparse_plus, nn.sparse_sigmoid, nn.silu.
#include <cmath>
#include <functional>

#include "test_util.h"

using namespace jitx;
using namespace jitx::testing;

namespace {
using Unary = std::function<Array(const Array&)>;
struct Case {
  const char* name;
  Unary f;
  std::vector<double> value, derivative;
  double derivative_atol = 1e-30;
};

void check_close(const Array& got, const std::vector<double>& want, double rtol, double atol, const std::string& what) {
  auto g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO(what << " element " << i << ": got " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i]))
      CHECK(std::isnan(g[i]));
    else
      CHECK(std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]));
  }
}
}  // namespace

TEST_CASE("nn activations: values and derivatives match JAX across the range and at the kinks", "[lax_extra][nn]") {
  std::vector<double> xs{-1e4, -30., -6., -3., -1., -0.5, 0., 0.5, 1., 3., 6., 7., 30., 1e4};
  Array x = make(xs, DType::float32);
  std::vector<Case> cases{
      {"relu6",
       [](const Array& a) { return nn::relu6(a); },
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 6.0, 6.0, 6.0},
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0}},
      {"elu",
       [](const Array& a) { return nn::elu(a, 0.7); },
       {-0.699999988079071, -0.699999988079071, -0.6982648372650146, -0.6651490330696106, -0.44248437881469727,
        -0.27542853355407715, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, 30.0, 10000.0},
       {0.0, 0.0, 0.0017351448768749833, 0.03485092893242836, 0.2575156092643738, 0.4245714545249939, 0.699999988079071,
        1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}},
      {"leaky_relu",
       [](const Array& a) { return nn::leaky_relu(a, 0.2); },
       {-2000.0, -6.0, -1.2000000476837158, -0.6000000238418579, -0.20000000298023224, -0.10000000149011612, 0.0, 0.5,
        1.0, 3.0, 6.0, 7.0, 30.0, 10000.0},
       {0.20000000298023224, 0.20000000298023224, 0.20000000298023224, 0.20000000298023224, 0.20000000298023224,
        0.20000000298023224, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}},
      {"log_sigmoid",
       [](const Array& a) { return nn::log_sigmoid(a); },
       {-10000.0, -30.0, -6.002475738525391, -3.0485873222351074, -1.3132617473602295, -0.9740769863128662,
        -0.6931471824645996, -0.4740769863128662, -0.3132616877555847, -0.04858735203742981, -0.0024756852071732283,
        -0.000911466486286372, -9.357622912219837e-14, -0.0},
       {1.0, 1.0, 0.9975273013114929, 0.9525741338729858, 0.7310585379600525, 0.622459352016449, 0.5,
        0.3775406777858734, 0.26894140243530273, 0.04742587357759476, 0.0024726230185478926, 0.000911051407456398,
        9.357622912219837e-14, 0.0}},
      {"celu",
       [](const Array& a) { return nn::celu(a, 1.5); },
       {-1.5, -1.5, -1.4725265502929688, -1.2969970703125, -0.729874312877655, -0.42520299553871155, 0.0, 0.5, 1.0, 3.0,
        6.0, 7.0, 30.0, 10000.0},
       {0.0, 0.0, 0.018315613269805908, 0.1353352665901184, 0.51341712474823, 0.7165313959121704, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 1.0, 1.0}},
      {"selu",
       [](const Array& a) { return nn::selu(a); },
       {-1.7580993175506592, -1.7580993175506592, -1.7537413835525513, -1.670568823814392, -1.1113307476043701,
        -0.6917582154273987, 0.0, 0.5253505110740662, 1.0507010221481323, 3.1521029472351074, 6.304205894470215,
        7.354907035827637, 31.52103042602539, 10507.009765625},
       {0.0, 0.0, 0.004357938654720783, 0.08753056824207306, 0.6467686295509338, 1.0663411617279053, 1.7580993175506592,
        1.0507010221481323, 1.0507010221481323, 1.0507010221481323, 1.0507010221481323, 1.0507010221481323,
        1.0507010221481323, 1.0507010221481323}},
      {"hard_tanh",
       [](const Array& a) { return nn::hard_tanh(a); },
       {-1.0, -1.0, -1.0, -1.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
       {0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0}},
      {"hard_sigmoid",
       [](const Array& a) { return nn::hard_sigmoid(a); },
       {0.0, 0.0, 0.0, 0.0, 0.3333333432674408, 0.4166666865348816, 0.5, 0.5833333730697632, 0.6666666865348816, 1.0,
        1.0, 1.0, 1.0, 1.0},
       {0.0, 0.0, 0.0, 0.0, 0.1666666716337204, 0.1666666716337204, 0.1666666716337204, 0.1666666716337204,
        0.1666666716337204, 0.0, 0.0, 0.0, 0.0, 0.0}},
      {"hard_silu",
       [](const Array& a) { return nn::hard_silu(a); },
       {-0.0, -0.0, -0.0, -0.0, -0.3333333432674408, -0.2083333432674408, 0.0, 0.2916666865348816, 0.6666666865348816,
        3.0, 6.0, 7.0, 30.0, 10000.0},
       {0.0, 0.0, 0.0, 0.0, 0.1666666716337204, 0.3333333432674408, 0.5, 0.6666666865348816, 0.8333333730697632, 1.0,
        1.0, 1.0, 1.0, 1.0}},
      {"mish",
       [](const Array& a) { return nn::mish(a); },
       {-0.0, -2.807286954981114e-12, -0.014854079112410545, -0.14564745128154755, -0.3034014403820038,
        -0.22074377536773682, 0.0, 0.37524524331092834, 0.8650984764099121, 2.9865355491638184, 5.999927043914795,
        6.999989032745361, 30.0, 10000.0},
       {0.0, -2.7137107665164972e-12, -0.012359967455267906, -0.09339311718940735, 0.05921675264835358,
        0.28951066732406616, 0.6000000238418579, 0.8864244222640991, 1.0490361452102661, 1.0211061239242554,
        1.0001333951950073, 1.000020146369934, 1.0, 1.0}},
      {"squareplus",
       [](const Array& a) { return nn::squareplus(a); },
       {0.0, 0.03329658508300781, 0.1622776985168457, 0.30277562141418457, 0.6180340051651001, 0.7807763814926147, 1.0,
        1.2807763814926147, 1.6180340051651, 3.3027756214141846, 6.162277698516846, 7.140054702758789,
        30.033296585083008, 10000.0},
       {1.2631062418222427e-08, 0.0011074468493461609, 0.02565835416316986, 0.08397485315799713, 0.27639320492744446,
        0.37873217463493347, 0.5, 0.6212677955627441, 0.7236068248748779, 0.9160251617431641, 0.974341630935669,
        0.9807619452476501, 0.9988925457000732, 1.0},
       // squareplus'(-1e4) = (1 + x / sqrt(x^2 + 4)) / 2 cancels in f32: JAX 1.3e-8, jitx 0 (true 1e-8).
       3e-8},
      {"soft_sign",
       [](const Array& a) { return nn::soft_sign(a); },
       {-0.9998999834060669, -0.9677419066429138, -0.8571428656578064, -0.75, -0.5, -0.3333333432674408, 0.0,
        0.3333333432674408, 0.5, 0.75, 0.8571428656578064, 0.875, 0.9677419066429138, 0.9998999834060669},
       {9.997165761888027e-09, 0.0010405797511339188, 0.02040816843509674, 0.0625, 0.25, 0.444444477558136, 1.0,
        0.444444477558136, 0.25, 0.0625, 0.02040816843509674, 0.015625, 0.0010405797511339188, 9.997165761888027e-09}},
      {"sparse_plus",
       [](const Array& a) { return nn::sparse_plus(a); },
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.0625, 0.25, 0.5625, 1.0, 3.0, 6.0, 7.0, 30.0, 10000.0},
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}},
      {"sparse_sigmoid",
       [](const Array& a) { return nn::sparse_sigmoid(a); },
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0},
       {0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 0.5, 0.5, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0}},
      {"silu",
       [](const Array& a) { return nn::swish(a); },
       {-0.0, -2.8072871718215486e-12, -0.014835737645626068, -0.14227762818336487, -0.2689414322376251,
        -0.1887703388929367, 0.0, 0.3112296760082245, 0.7310585975646973, 2.857722282409668, 5.985164642333984,
        6.993622779846191, 30.0, 10000.0},
       {0.0, -2.7137109833569317e-12, -0.012326431460678577, -0.08810410648584366, 0.07232949137687683,
        0.260038822889328, 0.5, 0.7399612069129944, 0.9276705384254456, 1.0881041288375854, 1.0123262405395508,
        1.0054601430892944, 1.0, 1.0}},
  };
  for (const auto& c : cases) {
    Unary f = c.f;
    INFO(c.name);
    check_close(f(x), c.value, 4e-6, 1e-30, "eager");
    check_close(jit([f](Array a) { return f(a); })(x), c.value, 4e-6, 1e-30, "jit");
    auto rev = [f](Array a) { return grad([f](Array b) { return jnp::sum(f(b)); })(a); };
    auto fwd = [f](Array a) { return jvp([f](Array b) { return f(b); }, a, ones_like(a)).second; };
    check_close(rev(x), c.derivative, 4e-5, c.derivative_atol, "grad");
    check_close(jit(rev)(x), c.derivative, 4e-5, c.derivative_atol, "jit(grad)");
    check_close(fwd(x), c.derivative, 4e-5, c.derivative_atol, "jvp");
    check_close(jit(fwd)(x), c.derivative, 4e-5, c.derivative_atol, "jit(jvp)");
  }
  // hard_swish is hard_silu; f64 keeps the same kinks (relu6'(0) = relu6'(6) = 0).
  CHECK(nn::hard_swish(x).to_vector<double>() == nn::hard_silu(x).to_vector<double>());
  Array k = make({0., 6.}, DType::float64);
  CHECK(grad([](Array a) { return jnp::sum(nn::relu6(a)); })(k).to_vector<double>() == std::vector<double>{0, 0});
}

TEST_CASE("nn activations: glu and standardize match JAX", "[lax_extra][nn]") {
  // g = jnp.arange(12., dtype=jnp.float32).reshape(3, 4) / 5 - 1
  // nn.glu(g), nn.glu(g.T, axis=0), nn.standardize(g), nn.standardize(g, axis=0)
  Array g = arange(0.0, 12.0, 1.0, DType::float32).reshape({3, 4}) / 5 - 1;
  std::vector<double> glu{-0.3543437123298645, -0.32104989886283875, -0.10996679961681366, 0.0,
                          0.4386351704597473,  0.6148199439048767};
  std::vector<double> glu0{-0.3543437123298645, -0.10996679961681366, 0.4386351704597473, -0.32104989886283875, 0.0,
                           0.6148199439048767};
  std::vector<double> st{-1.3415061235427856, -0.44716861844062805, 0.44716888666152954, 1.3415066003799438,
                         -1.3415067195892334, -0.44716891646385193, 0.4471690356731415,  1.3415063619613647,
                         -1.3415071964263916, -0.44716891646385193, 0.44716891646385193, 1.3415071964263916};
  std::vector<double> st0{-1.224730372428894,    -1.224730372428894,      -1.2247304916381836,   -1.224730372428894,
                          4.562476618730216e-08, -3.0416508423058985e-08, 4.562476263458848e-08, -9.124952526917696e-08,
                          1.2247306108474731,    1.2247304916381836,      1.224730372428894,     1.224730372428894};
  check_close(nn::glu(g), glu, 2e-6, 0, "glu");
  check_close(jit([](Array a) { return nn::glu(a); })(g), glu, 2e-6, 0, "jit glu");
  check_close(nn::glu(jnp::transpose(g), 0), glu0, 2e-6, 0, "glu axis 0");
  check_close(nn::standardize(g), st, 2e-6, 0, "standardize");
  check_close(jit([](Array a) { return nn::standardize(a); })(g), st, 2e-6, 0, "jit standardize");
  check_close(nn::standardize(g, {0}), st0, 2e-6, 1e-6, "standardize axis 0");
  // Given mean and variance are used as they are.
  check_close(
      nn::standardize(g, {-1}, Array::scalar(1.0, DType::float32), Array::scalar(4.0, DType::float32), 0.0),
      [&] {
        auto v = g.to_vector<double>();
        for (auto& e : v) e = (e - 1) / 2;
        return v;
      }(),
      1e-6, 0, "given");
  CHECK_THROWS_AS(nn::glu(make({1., 2., 3.}, DType::float32)), ShapeError);
}

TEST_CASE("nn activations: result dtypes and weak types of bool and weak-int inputs match JAX", "[lax_extra][nn]") {
  // JAX 0.10.2 x64: softplus/mish of a bool array are weak float64 (the bool meets a Python int), hard_tanh of one
  // is weak int64; of an int32 array they are strong float32 / int32. jitx's weak int (a C++ int literal) stays
  // weak through them (JAX: a Python int gives weak results).
  Array b = array<bool>({true, false}), i = array<int32_t>({1, -2, 3}), w = Array(3);
  struct Want {
    Array got;
    DType dtype;
    bool weak;
    std::vector<double> values;
  };
  std::vector<std::pair<const char*, Want>> cases = {
      {"softplus(bool)", {nn::softplus(b), DType::float64, true, {1.3132616875182228, 0.6931471805599453}}},
      {"mish(bool)", {nn::mish(b), DType::float64, true, {0.8650983882673103, 0.0}}},
      {"hard_tanh(bool)", {nn::hard_tanh(b), DType::int64, true, {1, 0}}},
      {"softplus(int32)", {nn::softplus(i), DType::float32, false, {1.3132617, 0.126928, 3.0485873}}},
      {"hard_tanh(int32)", {nn::hard_tanh(i), DType::int32, false, {1, -1, 1}}},
      {"softplus(weak int)", {nn::softplus(w), DType::float32, true, {3.0485873}}},
      {"mish(weak int)", {nn::mish(w), DType::float32, true, {2.9865355}}},
      {"hard_tanh(weak int)", {nn::hard_tanh(w), DType::int32, true, {1}}},
  };
  for (auto& [name, c] : cases) {
    INFO(name << ": " << c.got.aval().str() << " weak=" << c.got.weak_type());
    CHECK(c.got.dtype() == c.dtype);
    CHECK(c.got.weak_type() == c.weak);
    check_close(c.got, c.values, c.dtype == DType::float64 ? 1e-14 : 1e-6, 0, name);
  }
  // The same under jit (weak types are part of a traced value's type).
  Array js = jit([](Array v) { return nn::softplus(v); })(b);
  CHECK(js.dtype() == DType::float64);
  CHECK(js.weak_type());
  Array jh = jit([](Array v) { return nn::hard_tanh(v); })(b);
  CHECK(jh.dtype() == DType::int64);
  CHECK(jh.weak_type());
}
