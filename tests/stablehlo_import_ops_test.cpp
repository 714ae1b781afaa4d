// import_stablehlo's ops with regions, dimension numbers and windows: modules exactly as JAX prints them (pasted
// with JAX's inputs and outputs), jitx's own export read back (export -> import -> the eager result), and the
// clear errors for what jitx cannot represent.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "jitx/import.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {

template <class T>
Array host(std::vector<T> v, std::vector<int64_t> shape) {
  return array(v, shape);
}

struct JaxCase {
  const char* name;
  const char* text;
  std::vector<Array> ins, outs;
};

/// got == want: same dtype and shape, integers exact, floats within |d| <= 1e-5 + 1e-4 |want| (f32: JAX's XLA
/// and jitx sum in other orders) or 1e-12 + 1e-10 |want| (f64).
void check_same(const Array& got, const Array& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.aval().str() == want.aval().str());
  if (!is_floating(want.dtype())) {
    CHECK(got.astype(DType::int64).to_vector<int64_t>() == want.astype(DType::int64).to_vector<int64_t>());
    return;
  }
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  bool f64 = want.dtype() == DType::float64;
  for (size_t k = 0; k < g.size(); ++k) {
    INFO("element " << k);
    if (std::isnan(w[k])) {
      CHECK(std::isnan(g[k]));
      continue;
    }
    CHECK(std::abs(g[k] - w[k]) <= (f64 ? 1e-12 + 1e-10 * std::abs(w[k]) : 1e-5 + 1e-4 * std::abs(w[k])));
  }
}

void run_jax_case(const JaxCase& c) {
  INFO(c.name);
  auto m = import_stablehlo(c.text);
  auto outs = m.compile()(c.ins);
  REQUIRE(outs.size() == c.outs.size());
  for (size_t k = 0; k < outs.size(); ++k) check_same(outs[k], c.outs[k], fmt::format("output {}", k));
}

// cond_capture: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_cond_capture = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32>, %arg1: tensor<2xf32>, %arg2: tensor<2xf32>) -> (tensor<2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.compare GT, %arg0, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %1 = stablehlo.convert %0 : (tensor<i1>) -> tensor<i32>
    %2 = "stablehlo.case"(%1) ({
      %3 = stablehlo.multiply %arg1, %arg2 : tensor<2xf32>
      stablehlo.return %3 : tensor<2xf32>
    }, {
      %3 = stablehlo.add %arg1, %arg2 : tensor<2xf32>
      stablehlo.return %3 : tensor<2xf32>
    }) : (tensor<i32>) -> tensor<2xf32>
    return %2 : tensor<2xf32>
  }
}
)mlir";
JaxCase c_cond_capture() {
  return {"cond_capture", k_cond_capture,
    {
      host<float>({1.0f}, {}),
      host<float>({-2.295541763305664f, -0.8070694804191589f}, {2}),
      host<float>({0.45641204714775085f, -0.6728264689445496f}, {2})},
    {
      host<float>({-1.8391296863555908f, -1.4798959493637085f}, {2})}};
}

// while_capture: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_while_capture = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0:2 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %arg0) : tensor<3xf32>, tensor<3xf32>
    cond {
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.reduce(%iterArg_0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
      %cst_1 = stablehlo.constant dense<1.000000e+02> : tensor<f32>
      %2 = stablehlo.compare LT, %1, %cst_1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %2 = stablehlo.multiply %iterArg_0, %1 : tensor<3xf32>
      %3 = stablehlo.add %2, %iterArg : tensor<3xf32>
      stablehlo.return %iterArg, %3 : tensor<3xf32>, tensor<3xf32>
    }
    return %0#1 : tensor<3xf32>
  }
}
)mlir";
JaxCase c_while_capture() {
  return {"while_capture", k_while_capture,
    {
      host<float>({1.3198728561401367f, 0.8554130792617798f, 1.0572428703308105f}, {3}),
      host<float>({0.6984653472900391f, 1.3845572471618652f, 0.7576056718826294f}, {3})},
    {
      host<float>({63.88835906982422f, 70.29449462890625f, 57.31754684448242f}, {3})}};
}

// argsort: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_argsort = R"mlir(module @jit_argsort attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xi64> {jax.result_info = "result"}) {
    %0 = call @argsort(%arg0) : (tensor<8xf32>) -> tensor<8xi64>
    return %0 : tensor<8xi64>
  }
  func.func private @argsort(%arg0: tensor<8xf32>) -> tensor<8xi64> {
    %0 = stablehlo.iota dim = 0 : tensor<8xi64>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i64>, %arg4: tensor<i64>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %3 = stablehlo.select %2, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %4 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %7 = stablehlo.select %6, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %8 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %9 = stablehlo.select %8, %cst_4, %7 : tensor<i1>, tensor<f32>
      %10 = stablehlo.compare LT, %5, %9, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %10 : tensor<i1>
    }) : (tensor<8xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8xi64>)
    return %1#1 : tensor<8xi64>
  }
}
)mlir";
JaxCase c_argsort() {
  return {"argsort", k_argsort,
    {
      host<float>({0.9463256001472473f, -0.4887087643146515f, -0.6637555956840515f, -0.46573424339294434f,
          0.24592973291873932f, -0.9126902222633362f, -0.08023234456777573f, 0.7051839828491211f}, {8})},
    {
      host<int64_t>({5, 2, 1, 3, 6, 4, 7, 0}, {8})}};
}

// reduce_argmax_axis1_f64: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_reduce_argmax_axis1_f64 = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xf64>) -> (tensor<3xi64> {jax.result_info = "result"}) {
    %0 = call @argmax(%arg0) : (tensor<3x5xf64>) -> tensor<3xi64>
    return %0 : tensor<3xi64>
  }
  func.func private @argmax(%arg0: tensor<3x5xf64>) -> tensor<3xi64> {
    %0 = stablehlo.iota dim = 1 : tensor<3x5xi64>
    %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<3x5xf64>, tensor<3x5xi64>, tensor<f64>, tensor<i64>) -> (tensor<3xf64>, tensor<3xi64>)
     reducer(%arg1: tensor<f64>, %arg3: tensor<f64>) (%arg2: tensor<i64>, %arg4: tensor<i64>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f64>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i64>
      stablehlo.return %9, %10 : tensor<f64>, tensor<i64>
    }
    return %1#1 : tensor<3xi64>
  }
}
)mlir";
JaxCase c_reduce_argmax_axis1_f64() {
  return {"reduce_argmax_axis1_f64", k_reduce_argmax_axis1_f64,
    {
      host<double>({1.8016348714006858, 0.11881325585269785, -0.2899385810869008, -0.84728967055612,
          -0.6320778204047127, -0.2736137616636846, -1.6040587566770896, 0.49344148060416765,
          1.3755177540785959, 0.7795744538670966, 0.27362052668035713, -1.9466160198826281, 1.0655352234185154,
          0.2113625314364819, -0.7111364096897239}, {3, 5})},
    {
      host<int64_t>({0, 3, 2}, {3})}};
}

// conv2d_grouped: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_conv2d_grouped = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4x4x4xf32>, %arg1: tensor<6x2x3x3xf32>) -> (tensor<1x6x4x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x4x4x4xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x4xf32>
    return %0 : tensor<1x6x4x4xf32>
  }
}
)mlir";
JaxCase c_conv2d_grouped() {
  return {"conv2d_grouped", k_conv2d_grouped,
    {
      host<float>({0.02385788969695568f, -0.34098267555236816f, -1.250360369682312f, -0.40975672006607056f,
          0.804983913898468f, -0.7601295709609985f, -0.5489375591278076f, -0.5912782549858093f,
          -0.08971114456653595f, -0.27042388916015625f, 0.03226124495267868f, -0.7357601523399353f,
          0.5231729745864868f, -1.8043237924575806f, -1.7032668590545654f, 0.9847682118415833f,
          -1.0083309412002563f, -0.12737606465816498f, 1.0165133476257324f, 1.0035454034805298f,
          -0.7674987316131592f, 1.5539593696594238f, 0.17689071595668793f, -1.3755697011947632f,
          -0.24031135439872742f, 0.3742304742336273f, -1.4771991968154907f, 1.1401041746139526f,
          -1.6616414785385132f, -0.16776125133037567f, -1.3683102130889893f, 0.1569744050502777f,
          -0.8213991522789001f, 0.04664696007966995f, 2.3934895992279053f, 0.24321173131465912f,
          0.4882858991622925f, 0.6377970576286316f, 0.46979930996894836f, 1.7973027229309082f,
          -0.31878942251205444f, 0.48102062940597534f, 1.6283032894134521f, -1.6271190643310547f,
          -0.8945879936218262f, -0.2513777017593384f, 1.2189933061599731f, -0.5217764377593994f,
          0.005715486593544483f, -0.03525133803486824f, -1.1019949913024902f, -0.3664373755455017f,
          -0.22555281221866608f, 0.001767715672031045f, 0.14749039709568024f, -0.29284435510635376f,
          2.1187000274658203f, -1.259924054145813f, -0.24984876811504364f, 0.8202512264251709f,
          -0.947538435459137f, 0.26850029826164246f, -0.8755658268928528f, 0.7358442544937134f}, {1, 4, 4, 4}),
      host<float>({0.6424283981323242f, 0.32592839002609253f, 0.11217498779296875f, 1.1177674531936646f,
          -0.47279390692710876f, 0.5359166860580444f, -0.49995535612106323f, -0.591199517250061f,
          -1.2431915998458862f, -0.6573503613471985f, -1.8249660730361938f, -0.43304964900016785f,
          1.4240654706954956f, 1.5520974397659302f, -0.40332522988319397f, -0.09694404900074005f,
          -0.6959032416343689f, -0.4184543788433075f, 1.2400882244110107f, 0.4996679425239563f,
          0.5283803343772888f, 0.18282337486743927f, 0.8376840353012085f, -2.339972972869873f,
          1.06753671169281f, -1.160023808479309f, 0.05282197147607803f, -0.9754915237426758f,
          0.3503055274486542f, -0.1593855768442154f, -0.1752748191356659f, 0.7114627361297607f,
          0.07600652426481247f, -0.3463919162750244f, -0.04256778955459595f, 0.8395095467567444f,
          -0.4916602373123169f, 0.2290390580892563f, -0.2551007866859436f, -1.3129332065582275f,
          0.5515778660774231f, -0.2788849472999573f, -1.1166573762893677f, 0.9416071176528931f,
          -0.021760854870080948f, -0.1586318463087082f, -0.6083663702011108f, 0.16368786990642548f,
          1.1504336595535278f, 0.18875624239444733f, -0.4209209382534027f, -0.04136081412434578f,
          0.37505489587783813f, -0.5110170245170593f, 1.5465487241744995f, 0.7138028740882874f,
          0.6799005270004272f, -0.4389289617538452f, -0.894546627998352f, 1.2195398807525635f,
          -0.4765164852142334f, -0.253779798746109f, 0.7806659936904907f, -2.4187514781951904f,
          -0.5513431429862976f, 0.036986060440540314f, -0.2766367495059967f, 1.570738434791565f,
          -0.08762626349925995f, -0.4684407711029053f, -0.7165597081184387f, 0.7391467690467834f,
          -0.4874269664287567f, -0.34910550713539124f, -0.09016292542219162f, -0.7183268666267395f,
          -0.7254494428634644f, -0.7287670373916626f, -1.540597915649414f, -0.24999643862247467f,
          -1.0325933694839478f, 1.009832501411438f, -0.1785658895969391f, 0.0074639590457081795f,
          -0.1932358592748642f, 0.8425813317298889f, -1.2347204685211182f, -0.8992701768875122f,
          -0.383810430765152f, 0.1704263985157013f, 0.02929025888442993f, -0.5378075242042542f,
          -0.15479083359241486f, -0.45387378334999084f, -0.0012904418399557471f, -0.17610357701778412f,
          0.7164585590362549f, -0.4972591996192932f, -0.6108724474906921f, 0.3912513256072998f,
          -1.7146599292755127f, 1.7040019035339355f, 1.3915382623672485f, -1.6575626134872437f,
          1.2819691896438599f, -0.5161553025245667f, 0.22224396467208862f, 1.1098875999450684f}, {6, 2, 3, 3})},
    {
      host<float>({-1.3547477722167969f, -2.877476453781128f, 2.7235107421875f, 3.3654227256774902f,
          -0.34122440218925476f, 2.9772112369537354f, 0.8022422194480896f, -5.884950637817383f,
          3.438746690750122f, 2.452138662338257f, -2.826101779937744f, 2.191342353820801f, -3.5087621212005615f,
          -1.5771855115890503f, -1.3993629217147827f, -5.4030656814575195f, 0.4540867507457733f,
          4.868238925933838f, -1.2356444597244263f, 0.0611414834856987f, 1.9380817413330078f,
          1.0708165168762207f, 0.11537479609251022f, -2.6495885848999023f, -0.873150110244751f,
          3.466524839401245f, -1.7448588609695435f, -3.6643428802490234f, 3.133833885192871f,
          3.0093162059783936f, -6.765406131744385f, 2.377790689468384f, -0.33589330315589905f,
          -2.5611472129821777f, 0.5450113415718079f, 2.307476282119751f, 0.18211375176906586f,
          -0.6041770577430725f, 2.0083327293395996f, -0.15255843102931976f, 0.9170288443565369f,
          -2.3899953365325928f, -0.12750989198684692f, 1.9555498361587524f, 0.804630696773529f,
          -3.031832218170166f, 1.9914594888687134f, 0.5912821888923645f, 1.3406522274017334f,
          3.4630048274993896f, -2.8970625400543213f, -2.078097343444824f, -2.5654969215393066f,
          1.2221227884292603f, 3.8366241455078125f, 3.5942726135253906f, 6.124938011169434f,
          2.2780604362487793f, -0.8719420433044434f, 3.3469648361206055f, -2.1334140300750732f,
          -0.617053747177124f, 0.8849861025810242f, 2.838624954223633f, -0.08355388790369034f,
          -1.0277743339538574f, -5.480395317077637f, -3.184882164001465f, -2.1749019622802734f,
          -3.8955183029174805f, -0.44434359669685364f, -6.4074482917785645f, 3.926514148712158f,
          -2.416985034942627f, -1.143188714981079f, -1.147652506828308f, -0.6175375580787659f,
          3.630310297012329f, -3.899456262588501f, -0.3323308527469635f, -0.7424027323722839f,
          -1.3688801527023315f, 0.07298232614994049f, -2.711075782775879f, -0.43497568368911743f,
          -5.780821800231934f, 0.7378785610198975f, 2.898529052734375f, -4.49710750579834f, 2.6486761569976807f,
          -1.4688271284103394f, -1.0889633893966675f, -3.722536563873291f, -0.6508930325508118f,
          3.696077585220337f, -3.57212233543396f}, {1, 6, 4, 4})}};
}

// max_pool: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_max_pool = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x2xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
    return %1 : tensor<1x2x2x2xf32>
  }
}
)mlir";
JaxCase c_max_pool() {
  return {"max_pool", k_max_pool,
    {
      host<float>({-0.6639691591262817f, -1.0797550678253174f, -0.04676005244255066f, -0.15444828569889069f,
          0.4447269141674042f, -2.3634016513824463f, -2.5164847373962402f, -0.27091100811958313f,
          -0.7880220413208008f, -0.003570577362552285f, -0.05653727799654007f, 1.068359375f,
          0.5976234078407288f, 0.7933123707771301f, 2.2723617553710938f, -0.1847877949476242f,
          -0.6326422095298767f, -1.9913966655731201f, 0.7738471627235413f, -0.6596733331680298f,
          0.22454683482646942f, 0.3301486372947693f, 1.7150380611419678f, -2.273164749145508f,
          -1.5846824645996094f, 0.475055068731308f, -0.09418507665395737f, -0.2538508474826813f,
          1.0619761943817139f, -0.6903571486473083f, 2.1946218013763428f, -0.10979365557432175f}, {1, 4, 4, 2})},
    {
      host<float>({-0.04676005244255066f, 1.068359375f, 2.2723617553710938f, 0.7933123707771301f,
          0.7738471627235413f, 0.475055068731308f, 2.1946218013763428f, 0.3301486372947693f}, {1, 2, 2, 2})}};
}

// scatter_add: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_scatter_add = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x2xf32>, %arg1: tensor<4xi32>, %arg2: tensor<4x2xf32>) -> (tensor<5x2xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<4xi1>, tensor<4xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %6 = "stablehlo.scatter"(%arg0, %5, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %7 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<5x2xf32>, tensor<4x1xi32>, tensor<4x2xf32>) -> tensor<5x2xf32>
    return %6 : tensor<5x2xf32>
  }
}
)mlir";
JaxCase c_scatter_add() {
  return {"scatter_add", k_scatter_add,
    {
      host<float>({-1.0463374853134155f, 1.0511554479599f, -1.8023542165756226f, -0.9468972682952881f,
          0.9556966423988342f, 1.6602574586868286f, 0.4692356288433075f, 1.7856031656265259f,
          1.1050348281860352f, -0.4767581522464752f}, {5, 2}),
      host<int32_t>({0, 4, 0, 2}, {4}),
      host<float>({-0.5604574084281921f, -1.2394088506698608f, -0.17712777853012085f, -0.40442338585853577f,
          0.09729521721601486f, -0.1013181209564209f, -0.31191709637641907f, -0.045190200209617615f}, {4, 2})},
    {
      host<float>({-1.5094996690750122f, -0.28957152366638184f, -1.8023542165756226f, -0.9468972682952881f,
          0.6437795162200928f, 1.6150672435760498f, 0.4692356288433075f, 1.7856031656265259f,
          0.9279070496559143f, -0.881181538105011f}, {5, 2})}};
}

// gather_take_axis1: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_gather_take_axis1 = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xf32>, %arg1: tensor<2xi32>) -> (tensor<3x2xf32> {jax.result_info = "result"}) {
    %0 = call @_take(%arg0, %arg1) : (tensor<3x5xf32>, tensor<2xi32>) -> tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
  func.func private @_take(%arg0: tensor<3x5xf32>, %arg1: tensor<2xi32>) -> tensor<3x2xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<2xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %c_1 = stablehlo.constant dense<4> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<2x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x1xi32>) -> tensor<2x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<2x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [1] : (tensor<2x1xi1>, tensor<i1>) -> tensor<2xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 3, 1>}> : (tensor<3x5xf32>, tensor<2x1xi32>) -> tensor<3x2xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [1] : (tensor<2xi1>) -> tensor<3x2xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x2xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<3x2xi1>, tensor<3x2xf32>
    return %16 : tensor<3x2xf32>
  }
  func.func private @_where(%arg0: tensor<2xi1>, %arg1: tensor<2xi32>, %arg2: tensor<2xi32>) -> tensor<2xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<2xi1>, tensor<2xi32>
    return %0 : tensor<2xi32>
  }
}
)mlir";
JaxCase c_gather_take_axis1() {
  return {"gather_take_axis1", k_gather_take_axis1,
    {
      host<float>({0.06737098097801208f, 1.0516330003738403f, 0.7667500376701355f, -0.4685235917568207f,
          0.6114768385887146f, -1.7031155824661255f, 1.0440384149551392f, -0.48609694838523865f,
          -0.6214002370834351f, 0.0776531845331192f, 0.4743502140045166f, -0.29702892899513245f,
          -0.8904634118080139f, 0.5344750881195068f, 1.6450833082199097f}, {3, 5}),
      host<int32_t>({2, 2}, {2})},
    {
      host<float>({0.7667500376701355f, 0.7667500376701355f, -0.48609694838523865f, -0.48609694838523865f,
          -0.8904634118080139f, -0.8904634118080139f}, {3, 2})}};
}

// top_k: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_top_k = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xf32>) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<3xi32> {jax.result_info = "result[1]"}) {
    %values, %indices = chlo.top_k(%arg0, k = 3) : tensor<10xf32> -> (tensor<3xf32>, tensor<3xi32>)
    return %values, %indices : tensor<3xf32>, tensor<3xi32>
  }
}
)mlir";
JaxCase c_top_k() {
  return {"top_k", k_top_k,
    {
      host<float>({0.47224754095077515f, 0.023038683459162712f, -0.5132558345794678f, 0.6973527669906616f,
          0.5273101329803467f, -0.9082682728767395f, -0.5938464999198914f, 1.546852469444275f,
          -0.13267290592193604f, -0.09803242981433868f}, {10})},
    {
      host<float>({1.546852469444275f, 0.6973527669906616f, 0.5273101329803467f}, {3}),
      host<int32_t>({7, 3, 4}, {3})}};
}

// dynamic_update_slice: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_dynamic_update_slice = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<i32>) -> (tensor<4x3xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg2, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.add %arg2, %c_0 : tensor<i32>
    %2 = stablehlo.select %0, %1, %arg2 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.dynamic_update_slice %arg0, %arg1, %2, %c_1 : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
    return %3 : tensor<4x3xf32>
  }
}
)mlir";
JaxCase c_dynamic_update_slice() {
  return {"dynamic_update_slice", k_dynamic_update_slice,
    {
      host<float>({-1.2473090887069702f, -0.32743537425994873f, -0.5322736501693726f, 0.15456177294254303f,
          0.45798197388648987f, 0.28049609065055847f, 0.17178912460803986f, -1.2920502424240112f,
          1.3617548942565918f, 1.5017887353897095f, -1.634100079536438f, -0.10099875926971436f}, {4, 3}),
      host<float>({-0.9010089635848999f, 0.4916470944881439f, 0.305876225233078f, -0.7968184947967529f,
          0.34603676199913025f, -0.2858484387397766f}, {2, 3}),
      host<int32_t>({1}, {})},
    {
      host<float>({-1.2473090887069702f, -0.32743537425994873f, -0.5322736501693726f, -0.9010089635848999f,
          0.4916470944881439f, 0.305876225233078f, -0.7968184947967529f, 0.34603676199913025f,
          -0.2858484387397766f, 1.5017887353897095f, -1.634100079536438f, -0.10099875926971436f}, {4, 3})}};
}

// pad_interior: jax.jit(f, keep_unused=True).lower(*args).as_text(), inputs and outputs from
// tools/jax_export_corpus.py (JAX 0.10.2, x64; loc annotations dropped).
const char* k_pad_interior = R"mlir(module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<8x4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [1, -1], high = [0, 1], interior = [2, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
)mlir";
JaxCase c_pad_interior() {
  return {"pad_interior", k_pad_interior,
    {
      host<float>({-0.955934464931488f, -0.4482059180736542f, 1.4029730558395386f, -0.06915304809808731f,
          0.7307577133178711f, -1.3067902326583862f, 0.6656008958816528f, 0.6647974252700806f,
          -0.05857222154736519f, -1.4860306978225708f, 0.48060470819473267f, 0.17284634709358215f}, {3, 4})},
    {
      host<float>({0.0f, 0.0f, 0.0f, 0.0f, -0.4482059180736542f, 1.4029730558395386f, -0.06915304809808731f,
          0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, -1.3067902326583862f, 0.6656008958816528f,
          0.6647974252700806f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, -1.4860306978225708f,
          0.48060470819473267f, 0.17284634709358215f, 0.0f}, {8, 4})}};
}

// jax.export.export(jax.jit(f))(f32[3,4], f32[4,2]).mlir_module() for f(x, w) = (relu(x @ w).sum(0),
// jnp.sort(x, axis=0)) (JAX 0.10.2): its sort comparator reads constants of the enclosing function.
const char* kExported = R"mlir(#loc = loc(unknown)
#loc1 = loc("x")
#loc2 = loc("w")
#loc10 = loc("sort")
#loc21 = loc("sort:"(#loc10))
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32> loc("x"), %arg1: tensor<4x2xf32> loc("w")) -> (tensor<2xf32> {jax.result_info = "result[0]"}, tensor<3x4xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc27)
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32> loc(#loc28)
    %1 = call @relu(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32> loc(#loc29)
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<3x2xf32>, tensor<f32>) -> tensor<2xf32> loc(#loc27)
    %3 = call @sort(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32> loc(#loc30)
    return %2, %3 : tensor<2xf32>, tensor<3x4xf32> loc(#loc26)
  } loc(#loc)
  func.func private @relu(%arg0: tensor<3x2xf32> loc(unknown)) -> tensor<3x2xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x2xf32> loc(#loc9)
    %1 = stablehlo.maximum %arg0, %0 : tensor<3x2xf32> loc(#loc9)
    return %1 : tensor<3x2xf32> loc(#loc)
  } loc(#loc20)
  func.func private @sort(%arg0: tensor<3x4xf32> loc(unknown)) -> tensor<3x4xf32> {
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32> loc(#loc)
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32> loc("sort:"(#loc10)), %arg2: tensor<f32> loc("sort:"(#loc10))):
      %1 = stablehlo.compare EQ, %arg1, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc11)
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f32> loc(#loc12)
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc13)
      %4 = stablehlo.select %3, %cst, %2 : tensor<i1>, tensor<f32> loc(#loc12)
      %5 = stablehlo.compare EQ, %arg2, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc11)
      %6 = stablehlo.select %5, %cst_0, %arg2 : tensor<i1>, tensor<f32> loc(#loc12)
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc13)
      %8 = stablehlo.select %7, %cst, %6 : tensor<i1>, tensor<f32> loc(#loc12)
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc14)
      stablehlo.return %9 : tensor<i1> loc(#loc10)
    }) : (tensor<3x4xf32>) -> tensor<3x4xf32> loc(#loc10)
    return %0 : tensor<3x4xf32> loc(#loc)
  } loc(#loc32)
} loc(#loc)
#loc3 = loc("<stdin>":5:11 to :36)
#loc4 = loc("<stdin>":6:6 to :117)
#loc5 = loc("<stdin>":5:23 to :28)
#loc6 = loc("<stdin>":5:11 to :29)
#loc7 = loc("<stdin>":5:38 to :57)
#loc8 = loc("jit")
#loc9 = loc("max")
#loc11 = loc("eq")
#loc12 = loc("select_n")
#loc13 = loc("ne")
#loc14 = loc("lt_to")
#loc15 = loc("f"(#loc3))
#loc16 = loc("<module>"(#loc4))
#loc17 = loc("f"(#loc5))
#loc18 = loc("f"(#loc6))
#loc19 = loc("f"(#loc7))
#loc20 = loc("jit:"(#loc8))
#loc22 = loc(callsite(#loc15 at #loc16))
#loc23 = loc(callsite(#loc17 at #loc16))
#loc24 = loc(callsite(#loc18 at #loc16))
#loc25 = loc(callsite(#loc19 at #loc16))
#loc26 = loc("jit(f)"(#loc16))
#loc27 = loc("jit(f)/reduce_sum"(#loc22))
#loc28 = loc("jit(f)/dot_general"(#loc23))
#loc29 = loc("jit(f)/jit(relu)"(#loc24))
#loc30 = loc("jit(f)/jit(sort)"(#loc25))
#loc31 = loc("jit(f)/jit"(#loc25))
#loc32 = loc("jit:"(#loc31))
)mlir";

/// jitx's StableHLO export of f read back: the imported module's result must equal f's eager result.
template <class F, class... A>
void round_trip(const std::string& what, const F& f, const A&... args) {
  INFO(what);
  std::string text = jit(f).lower(args...).as_text();
  INFO(text);
  auto outs = import_stablehlo(text).compile()(std::vector<Array>{args...});
  REQUIRE(outs.size() == 1);
  check_same(outs[0], f(args...), "the round trip");
}

Array randn(std::vector<int64_t> shape, uint32_t seed) {
  return random::normal(random::PRNGKey(seed), shape);
}

}  // namespace

TEST_CASE("import_stablehlo: while, case and if with captured values, as JAX prints them", "[import]") {
  run_jax_case(c_cond_capture());
  run_jax_case(c_while_capture());
}

TEST_CASE("import_stablehlo: sort comparators, argmax reducers and top_k, as JAX prints them", "[import]") {
  run_jax_case(c_argsort());
  run_jax_case(c_reduce_argmax_axis1_f64());
  run_jax_case(c_top_k());
}

TEST_CASE("import_stablehlo: convolution, reduce_window, gather, scatter, pad, dynamic_update_slice from JAX",
          "[import]") {
  run_jax_case(c_conv2d_grouped());
  run_jax_case(c_max_pool());
  run_jax_case(c_scatter_add());
  run_jax_case(c_gather_take_axis1());
  run_jax_case(c_dynamic_update_slice());
  run_jax_case(c_pad_interior());
}

TEST_CASE("import_stablehlo: jax.export's mlir_module() with a comparator reading the function's constants",
          "[import]") {
  auto c = import_stablehlo(kExported).compile();
  Array x = array<float>({1, -2, 3, 0.5f, 1.5f, -1, 2, -3, 0.25f, 4, -0.5f, 1}, {3, 4});
  Array w = array<float>({1, -1, 0.5f, 2, -1, 1, 2, 0.25f}, {4, 2});
  auto outs = c(x, w);
  REQUIRE(outs.size() == 2);
  // relu(x @ w): rows 0 and 1 are negative, row 2 is (4.75, 7.5); the columns of x sorted (printed by JAX).
  CHECK(outs[0].to_vector<float>() == std::vector<float>{4.75f, 7.5f});
  CHECK(outs[1].to_vector<float>() == std::vector<float>{0.25f, -2, -0.5f, -3, 1, -1, 2, 0.5f, 1.5f, 4, 3, 1});
}

TEST_CASE("import_stablehlo: jitx's export of control flow reads back", "[import]") {
  Array x = randn({3}, 1), y = randn({3}, 2);
  round_trip("while with a captured value", [](Array a, Array b) {
    auto r = lax::while_loop([](const std::tuple<Array, Array>& c) { return std::get<0>(c) < 4; },
                             [&](const std::tuple<Array, Array>& c) {
                               Array i = std::get<0>(c) + 1;
                               Array v = std::get<1>(c) * 0.5f + b;
                               return std::make_tuple(i, v);
                             },
                             std::make_tuple(0, a));
    return std::get<1>(r);
  }, x, y);
  for (float p : {1.0f, -1.0f})
    round_trip(fmt::format("cond with a captured value, predicate {}", p), [](Array q, Array a, Array b) {
      return lax::cond(q > 0.0f, [&](Array v) { return v * b; }, [&](Array v) { return jnp::sin(v) - b; }, a);
    }, Array::scalar(p, DType::float32), x, y);
  for (int32_t i : {0, 1, 2, 7})
    round_trip(fmt::format("switch on {}", i), [](Array k, Array a) {
      return lax::switch_(k, std::make_tuple([](Array v) { return v + 1.0f; }, [](Array v) { return v * 3.0f; },
                                             [](Array v) { return jnp::tanh(v); }), a);
    }, Array::scalar_int(i, DType::int32), x);
  Array ws = randn({3, 4, 4}, 3), h = randn({2, 4}, 4);
  round_trip("scan over layers", [](Array w, Array h0) {
    auto r = lax::scan([](Array c, Array wi) { return std::make_pair(jnp::tanh(jnp::matmul(c, wi)), c); }, h0, w);
    return std::get<0>(r);
  }, ws, h);
}

TEST_CASE("import_stablehlo: jitx's export of sorts, reductions and indexing reads back", "[import]") {
  Array x = randn({2, 6}, 5);
  Array keys = jnp::floor(randn({7}, 6) * 2.0f), vals = randn({7}, 7);
  round_trip("sort", [](Array a) { return lax::sort(a, -1); }, x);
  round_trip("sort of (keys, values), one key", [](Array k, Array v) { return lax::sort({k, v}, 0, true, 1)[1]; },
             keys, vals);
  round_trip("sort on two keys", [](Array k, Array v) { return lax::sort({k, v}, 0, true, 2)[1]; }, keys, vals);
  round_trip("argmax", [](Array a) { return jnp::argmax(a, 1); }, x);
  round_trip("argmin of ints", [](Array a) { return jnp::argmin(a, 0); }, jnp::floor(x * 3.0f).astype(DType::int32));
  round_trip("top_k values", [](Array a) { return lax::top_k(a, 3).first; }, x);
  round_trip("top_k indices", [](Array a) { return lax::top_k(a, 2).second; }, x);
  Array idx = array<int32_t>({4, 0, 4, 2}, {4});
  round_trip("take", [](Array a, Array i) { return jnp::take(a, i, 1); }, x, idx);
  round_trip("scatter add with repeated indices", [](Array a, Array i) {
    return jnp::at(a, i).add(ones({4}, DType::float32));
  }, randn({6}, 8), idx);
  round_trip("scatter set", [](Array a, Array i) { return jnp::at(a, i).set(arange(4).astype(DType::float32)); },
             randn({6}, 9), array<int32_t>({1, 3, 5, 0}, {4}));
  round_trip("pad with interior and negative edges", [](Array a) {
    return lax::pad(a, Array::scalar(-1, DType::float32), {{1, 0, 1}, {-1, 2, 0}});
  }, x);
  round_trip("dynamic_slice", [](Array a, Array i) { return lax::dynamic_slice(a, {i, i}, {1, 3}); }, x,
             Array::scalar_int(1, DType::int32));
  round_trip("dynamic_update_slice", [](Array a, Array i) {
    return lax::dynamic_update_slice(a, zeros({1, 2}, DType::float32), {i, i * 2});
  }, x, Array::scalar_int(1, DType::int32));
  round_trip("cumsum", [](Array a) { return jnp::cumsum(a, 1); }, x);
}

TEST_CASE("import_stablehlo: jitx's export of convolutions and pooling reads back", "[import]") {
  Array img = randn({1, 5, 5, 4}, 10), w = randn({3, 3, 2, 6}, 11);
  auto nhwc = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  round_trip("grouped NHWC convolution with strides and dilation", [&](Array a, Array k) {
    return lax::conv_general_dilated(a, k, {2, 1}, {{1, 1}, {2, 0}}, {}, {1, 2}, nhwc, 2);
  }, img, w);
  round_trip("lhs-dilated NCHW convolution", [](Array a, Array k) {
    return lax::conv_general_dilated(a, k, {1, 1}, {{1, 1}, {0, 1}}, {2, 2});
  }, randn({2, 3, 4, 4}, 12), randn({2, 3, 2, 2}, 13));
  round_trip("max pooling", [](Array a) {
    return lax::reduce_window_max(a, {{1, 2, 2, 1}, {1, 2, 2, 1}, {{0, 0}, {0, 1}, {1, 0}, {0, 0}}, {}, {}});
  }, img);
  round_trip("sum pooling with dilations", [](Array a) {
    return lax::reduce_window_sum(a, {{2, 2}, {1, 1}, {{1, 1}, {0, 0}}, {1, 2}, {2, 1}});
  }, randn({4, 5}, 14));
}

TEST_CASE("import_stablehlo: a sort with a descending comparator (lax.top_k's decomposition)", "[import]") {
  std::string desc = k_argsort;
  desc.replace(desc.find("compare LT"), 10, "compare GT");
  auto c = import_stablehlo(desc).compile();
  // Descending in JAX's canonical TOTALORDER: NaN first, then inf, 3, the two 1s in their order, -0 and 0 tied (in
  // their order), -inf last.
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto out = c(jnp::array(std::vector<float>{1.f, nan, -inf, 3.f, 1.f, inf, -0.f, 0.f}));
  CHECK(out[0].to_vector<int64_t>() == std::vector<int64_t>{1, 5, 3, 0, 4, 6, 7, 2});
  // Integer keys descend through their complement (INT_MIN and INT_MAX included), ties in their order.
  auto ic = import_stablehlo(R"mlir(func.func public @main(%x: tensor<6xi32>) -> tensor<6xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<6xi32>
  %1:2 = "stablehlo.sort"(%x, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<6xi32>, tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>)
  return %1#1 : tensor<6xi32>
})mlir").compile();
  auto idx = ic(jnp::array(std::vector<int32_t>{3, std::numeric_limits<int32_t>::min(), 7, 3,
                                                std::numeric_limits<int32_t>::max(), -1}));
  CHECK(idx[0].to_vector<int32_t>() == std::vector<int32_t>{4, 2, 0, 3, 5, 1});
}

TEST_CASE("import_stablehlo: what jitx cannot represent is a CompileError naming the op", "[import]") {
  auto wrap = [](const std::string& body, const std::string& args, const std::string& result) {
    return "func.func public @main(" + args + ") -> " + result + " {\n" + body + "\n}\n";
  };
  CHECK_THROWS_WITH(import_stablehlo(wrap(R"(  %0 = stablehlo.custom_call @lapack_sgesdd(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>)", "%a: tensor<2xf32>", "tensor<2xf32>")), Catch::Contains("lapack_sgesdd"));
  CHECK_THROWS_WITH(import_stablehlo(wrap(R"(  %s, %o = stablehlo.rng_bit_generator %k, algorithm = DEFAULT : (tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>)
  return %o : tensor<4xui32>)", "%k: tensor<4xui32>", "tensor<4xui32>")),
                    Catch::Contains("stablehlo.rng_bit_generator with a u32[4] state is not supported"));
  // A general reducer region is inlined; one that reads a value of the function is refused.
  CHECK_THROWS_WITH(import_stablehlo(wrap(R"(  %0 = "stablehlo.reduce_window"(%a, %z) <{window_dimensions = array<i64: 2>}> ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %1 = stablehlo.subtract %p, %z : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>)", "%a: tensor<4xf32>, %z: tensor<f32>", "tensor<3xf32>")),
                    Catch::Contains("stablehlo.reduce_window with a reducer region that reads enclosing values"));
  // A while body that returns fewer values than the loop carries is malformed.
  CHECK_THROWS_AS(import_stablehlo(wrap(R"(  %0:2 = stablehlo.while(%i = %a, %j = %a) : tensor<i32>, tensor<i32>
  cond {
    %c = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %i : tensor<i32>
  }
  return %0#0 : tensor<i32>)", "%a: tensor<i32>", "tensor<i32>")), ParseError);
}

TEST_CASE("import_stablehlo: 2000 seeded mutations of region and indexed ops import or throw a jitx error",
          "[import][import_fuzz]") {
  std::mt19937 gen(4321);
  const std::string seeds[] = {k_cond_capture, k_while_capture,  k_argsort,   k_reduce_argmax_axis1_f64,
                               k_conv2d_grouped, k_max_pool,      k_scatter_add, k_gather_take_axis1,
                               k_top_k,          k_dynamic_update_slice, k_pad_interior};
  const size_t num_seeds = sizeof(seeds) / sizeof(seeds[0]);
  const char alphabet[] = "%#:=,()[]{}<>\"^x0123456789abfio.- \n";
  // Whole tokens of the region and indexed ops' syntax, so a mutation can also make a plausible but wrong op.
  const char* tokens[] = {"({", "})", "^bb0(", "%iterArg", "%arg1", " cond {", "} do {", "stablehlo.return ",
                          "#stablehlo.gather<", "index_vector_dim = 1", "]x[", "]->[", "[b, 0, 1, f]",
                          "window = {", "k = 3", "sizes = [2]", "TOTALORDER", "reducer(", "init: ", "%0#1",
                          "dense<0> : tensor<2x2xi64>", "array<i64: 1, 2>", "tensor<i1>", "tensor<3x?xf32>"};
  int ok = 0, parse_errors = 0, other_errors = 0;
  for (int it = 0; it < 2000; ++it) {
    std::string s = seeds[it % num_seeds];
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
      import_stablehlo(s);
      ++ok;
    } catch (const ParseError&) {
      ++parse_errors;
    } catch (const Error&) {
      ++other_errors;
    }
  }
  CHECK(parse_errors > 1000);
  CHECK(ok + parse_errors + other_errors == 2000);
}

// jax.jit(jax.grad(lambda x: (lax.reduce_window(x, -inf, lax.max, (2, 2), (1, 1), "VALID") * arange(9.).reshape(3,
// 3)).sum())).lower(x).as_text() (JAX 0.10.2): overlapping windows with ties pick their first maximum.
const char* kMaxPoolGrad = R"mlir(module @jit__lambda {
  func.func public @main(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<9xf32>
    %1 = stablehlo.reshape %0 : (tensor<9xf32>) -> tensor<3x3xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %4 = stablehlo.pad %arg0, %cst_0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = "stablehlo.select_and_scatter"(%4, %1, %cst_1) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %7 = stablehlo.compare GE, %arg1, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    }, {
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %7 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<4x4xf32>, tensor<3x3xf32>, tensor<f32>) -> tensor<4x4xf32>
    return %5 : tensor<4x4xf32>
  }
}
)mlir";

TEST_CASE("import_stablehlo: select_and_scatter (max pooling's gradient) with overlapping windows and ties",
          "[import]") {
  auto c = import_stablehlo(kMaxPoolGrad).compile();
  Array x = array<float>({1, 3, 3, 0, 2, 3, 1, 1, 0, 5, 5, 2, 4, 1, 2, 2}, {4, 4});
  // JAX's result (checked by hand: window (i, j) adds 3i + j to its first maximum in row-major order).
  CHECK(c(x)[0].to_vector<float>() == std::vector<float>{0, 1, 2, 0, 0, 0, 0, 0, 0, 20, 13, 0, 0, 0, 0, 0});
}
