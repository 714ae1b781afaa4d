// A whole module in MLIR's generic form, and import_stablehlo's ops that become bit arithmetic on a float's integer image: chlo.next_after and
// stablehlo.reduce_precision (pretty `format = e5m10` and generic exponent_bits/mantissa_bits), against
// std::nextafter and against a round trip through float16, on edge values (zeros, equal operands, NaN, overflow).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "jitx/import.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {
// As JAX prints jax.jit(jnp.nextafter).lower(x, y).as_text() (JAX 0.10.2), for f32[8] and f64[8].
std::string next_after_module(const char* t) {
  return fmt::format(R"(module @jit_nextafter {{
  func.func public @main(%arg0: tensor<8x{0}>, %arg1: tensor<8x{0}>) -> (tensor<8x{0}> {{jax.result_info = "result"}}) {{
    %0 = chlo.next_after %arg0, %arg1 : tensor<8x{0}>, tensor<8x{0}> -> tensor<8x{0}>
    return %0 : tensor<8x{0}>
  }}
}}
)", t);
}

template <class T>
void check_next_after(const char* mlir_type) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> x = {1.5, -2.25, 0.0, -0.0, 3.0, inf, 7.0, nan};
  std::vector<T> y = {2.0, 5.0, -1.0, 1.0, 3.0, 0.0, nan, 1.0};
  auto c = import_stablehlo(next_after_module(mlir_type)).compile();
  auto got = c(array(x, {8}), array(y, {8}))[0].template to_vector<T>();
  for (size_t k = 0; k < x.size(); ++k) {
    INFO("nextafter(" << x[k] << ", " << y[k] << ")");
    T want = std::nextafter(x[k], y[k]);
    if (std::isnan(want)) {
      CHECK(std::isnan(got[k]));
    } else {
      CHECK(got[k] == want);
      CHECK(std::signbit(got[k]) == std::signbit(want));
    }
  }
}
}  // namespace

TEST_CASE("import_stablehlo: chlo.next_after matches std::nextafter", "[import]") {
  check_next_after<float>("f32");
  check_next_after<double>("f64");
}

TEST_CASE("import_stablehlo: reduce_precision to e5m10 matches a round trip through float16", "[import]") {
  // Normal float16 values round to nearest even; above 65504 they overflow to infinity (70000 is past the
  // rounding midpoint), below float16's smallest subnormal they become signed zeros, NaN stays NaN.
  std::vector<float> x = {1.0f, 0.1f, -3.14159f, 1.00048828125f, 1.00146484375f, 70000.0f, -1e-9f, 65504.0f};
  const char* pretty = R"(module @jit_f {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
)";
  const char* generic = R"(func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.reduce_precision"(%arg0) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
)";
  Array a = array(x, {8});
  auto want = a.astype(DType::float16).astype(DType::float32).to_vector<float>();
  CHECK(want[5] == std::numeric_limits<float>::infinity());
  CHECK(want[3] == 1.0f);  // a tie rounds to even
  for (const char* text : {pretty, generic}) {
    auto got = import_stablehlo(text).compile()(a)[0].to_vector<float>();
    for (size_t k = 0; k < x.size(); ++k) {
      INFO(x[k]);
      CHECK(got[k] == want[k]);
      CHECK(std::signbit(got[k]) == std::signbit(want[k]));
    }
  }
  auto nan = import_stablehlo(pretty).compile()(array(std::vector<float>(8, std::nanf("")), {8}))[0];
  CHECK(std::isnan(nan.to_vector<float>()[0]));
}

// jax.jit(f).lower(x, i).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True,
// enable_debug_info=False) (JAX 0.10.2) for
//   def f(x, i):
//     y = lax.dynamic_slice(jnp.pad(x, 1), (i, i), (2, 2))
//     return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0 + y), (i, y))[1], jnp.argsort(x[0])
const char* kGeneric = R"mlir("builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x3xf32>, tensor<i32>) -> (tensor<2x2xf32>, tensor<3xi64>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg7: tensor<3x3xf32>, %arg8: tensor<i32>):
    %19 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %20 = "func.call"(%arg7, %19) <{callee = @_pad}> : (tensor<3x3xf32>, tensor<i64>) -> tensor<5x5xf32>
    %21 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %22 = "stablehlo.compare"(%arg8, %21) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %23 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %24 = "stablehlo.add"(%arg8, %23) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %25 = "stablehlo.select"(%22, %24, %arg8) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %26 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %27 = "stablehlo.compare"(%arg8, %26) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %28 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %29 = "stablehlo.add"(%arg8, %28) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %30 = "stablehlo.select"(%27, %29, %arg8) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %31 = "stablehlo.dynamic_slice"(%20, %25, %30) <{slice_sizes = array<i64: 2, 2>}> : (tensor<5x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
    %32:3 = "stablehlo.while"(%31, %arg8, %31) ({
    ^bb0(%arg12: tensor<2x2xf32>, %arg13: tensor<i32>, %arg14: tensor<2x2xf32>):
      %42 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %43 = "stablehlo.compare"(%arg13, %42) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%43) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg9: tensor<2x2xf32>, %arg10: tensor<i32>, %arg11: tensor<2x2xf32>):
      %36 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %37 = "stablehlo.add"(%arg10, %36) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %38 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %39 = "stablehlo.broadcast_in_dim"(%38) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x2xf32>
      %40 = "stablehlo.multiply"(%arg11, %39) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      %41 = "stablehlo.add"(%40, %arg9) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      "stablehlo.return"(%arg9, %37, %41) : (tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>) -> ()
    }) : (tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>)
    %33 = "stablehlo.slice"(%arg7) <{limit_indices = array<i64: 1, 3>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<3x3xf32>) -> tensor<1x3xf32>
    %34 = "stablehlo.reshape"(%33) : (tensor<1x3xf32>) -> tensor<3xf32>
    %35 = "func.call"(%34) <{callee = @argsort}> : (tensor<3xf32>) -> tensor<3xi64>
    "func.return"(%32#2, %35) : (tensor<2x2xf32>, tensor<3xi64>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x3xf32>, tensor<i64>) -> tensor<5x5xf32>, res_attrs = [{}], sym_name = "_pad", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<3x3xf32>, %arg6: tensor<i64>):
    %17 = "stablehlo.convert"(%arg6) : (tensor<i64>) -> tensor<f32>
    %18 = "stablehlo.pad"(%arg5, %17) <{edge_padding_high = array<i64: 1, 1>, edge_padding_low = array<i64: 1, 1>, interior_padding = array<i64: 0, 0>}> : (tensor<3x3xf32>, tensor<f32>) -> tensor<5x5xf32>
    "func.return"(%18) : (tensor<5x5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3xf32>) -> tensor<3xi64>, res_attrs = [{}], sym_name = "argsort", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3xi64>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i64>, %arg4: tensor<i64>):
      %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %3 = "stablehlo.compare"(%arg1, %2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %5 = "stablehlo.select"(%3, %4, %arg1) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %6 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %7 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %8 = "stablehlo.select"(%6, %7, %5) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %10 = "stablehlo.compare"(%arg2, %9) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %12 = "stablehlo.select"(%10, %11, %arg2) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %13 = "stablehlo.compare"(%arg2, %arg2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %14 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.select"(%13, %14, %12) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %16 = "stablehlo.compare"(%8, %15) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%16) : (tensor<i1>) -> ()
    }) : (tensor<3xf32>, tensor<3xi64>) -> (tensor<3xf32>, tensor<3xi64>)
    "func.return"(%1#1) : (tensor<3xi64>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

)mlir";

TEST_CASE("import_stablehlo: a module in MLIR's generic form (builtin.module, func.func, func.call)", "[import]") {
  auto c = import_stablehlo(kGeneric).compile();
  Array x = array<float>({2, -1, 0.5f, -1, 0, 1, 2, 3, 4}, {3, 3});
  auto outs = c(x, Array::scalar_int(1, DType::int32));
  REQUIRE(outs.size() == 2);
  // y = x[0:2, 0:2] = [[2, -1], [-1, 0]]; two iterations of c * 2 + y from y give 7 y; argsort([2, -1, 0.5]).
  CHECK(outs[0].to_vector<float>() == std::vector<float>{14, -7, -7, 0});
  CHECK(outs[1].to_vector<int64_t>() == std::vector<int64_t>{1, 2, 0});
  // Every third character deleted in turn: each import either succeeds or throws a jitx error, never crashes.
  std::string text = kGeneric;
  int errors = 0;
  for (size_t p = 0; p < text.size(); p += 3) {
    std::string m = text;
    m.erase(p, 1);
    try {
      import_stablehlo(m);
    } catch (const Error&) {
      ++errors;
    }
  }
  CHECK(errors > 0);
}

TEST_CASE("import_stablehlo: sharding annotations (sdy.mesh, sdy.sharding, custom_call @Sharding) pass through",
          "[import]") {
  // jax.jit(f).lower(x).as_text() (JAX 0.10.2) with x placed on a one-device mesh and a sharding constraint, and
  // the custom_call form of a sharding annotation.
  const char* text = R"(module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}
  func.func public @main(%arg0: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x3xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x3xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<4x3xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{"x"}, {}]> : tensor<4x3xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x3xf32>
    %5 = stablehlo.add %3, %4 : tensor<4x3xf32>
    return %5 : tensor<4x3xf32>
  }
}
)";
  auto c = import_stablehlo(text).compile();
  std::vector<float> x(12);
  for (int k = 0; k < 12; ++k) x[k] = 0.5f * static_cast<float>(k) - 2.0f;
  auto got = c(array(x, {4, 3}))[0].to_vector<float>();
  for (int k = 0; k < 12; ++k) CHECK(got[k] == x[k] * 2.0f + 1.0f);
}

TEST_CASE("import_stablehlo: dense_resource constants read their blob from the dialect_resources section",
          "[import]") {
  // MLIR's resource form of a constant: the blob is its 4-byte alignment (little endian) then the data;
  // f32 1.5, -2, 3 are 0x3FC00000, 0xC0000000, 0x40400000.
  std::string text = R"(module @jit_f {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %cst = stablehlo.constant dense_resource<blob1> : tensor<3xf32>
    %0 = stablehlo.multiply %arg0, %cst : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000C03F000000C000004040"
    }
  }
#-}
)";
  auto got = import_stablehlo(text).compile()(array<float>({2, 3, -1}, {3}))[0].to_vector<float>();
  CHECK(got == std::vector<float>{3, -6, -3});
  std::string missing = text;
  missing.replace(missing.find("blob1:"), 5, "other");
  CHECK_THROWS_AS(import_stablehlo(missing), ParseError);
  CHECK_THROWS_WITH(import_stablehlo(missing), Catch::Contains("dense_resource<blob1>"));
  std::string elided = text;
  elided.replace(elided.find("dense_resource<blob1>"), 21, "dense_resource<__elided__>");
  CHECK_THROWS_WITH(import_stablehlo(elided), Catch::Contains("elided"));
  std::string short_blob = text;
  short_blob.replace(short_blob.find("00004040\""), 8, "");
  CHECK_THROWS_WITH(import_stablehlo(short_blob), Catch::Contains("a dense_resource blob of 12 bytes"));
}

TEST_CASE("import_stablehlo: a two-key sort comparator must be lexicographic", "[import]") {
  auto module = [](const std::string& combine) {
    return R"(func.func public @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0:2 = "stablehlo.sort"(%a, %b) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%p: tensor<i32>, %q: tensor<i32>, %r: tensor<i32>, %s: tensor<i32>):
    %lt0 = stablehlo.compare LT, %p, %q, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq0 = stablehlo.compare EQ, %p, %q, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %lt1 = stablehlo.compare LT, %r, %s, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
)" + combine + R"(
    stablehlo.return %res : tensor<i1>
  }) : (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  return %0#1 : tensor<4xi32>
}
)";
  };
  std::string lexicographic = R"(    %tie = stablehlo.and %eq0, %lt1 : tensor<i1>
    %res = stablehlo.or %lt0, %tie : tensor<i1>)";
  auto c = import_stablehlo(module(lexicographic)).compile();
  // keys (1, 0, 1, 0), then (4, 3, 2, 1): sorted pairs (0,1) (0,3) (1,2) (1,4).
  auto got = c(array<int32_t>({1, 0, 1, 0}, {4}), array<int32_t>({4, 3, 2, 1}, {4}))[0].to_vector<int32_t>();
  CHECK(got == std::vector<int32_t>{1, 3, 2, 4});
  // lt0 | lt1 without the tie test on the first key is no ordering jitx can sort by.
  std::string no_tie = R"(    %res = stablehlo.or %lt0, %lt1 : tensor<i1>)";
  CHECK_THROWS_WITH(import_stablehlo(module(no_tie)), Catch::Contains("not lexicographic"));
}

TEST_CASE("import_stablehlo: clamp with scalar bounds and the legacy stablehlo.dot", "[import]") {
  const char* text = R"(func.func public @main(%x: tensor<2x3xf32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  %lo = stablehlo.constant dense<-1.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.5> : tensor<f32>
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %1 = "stablehlo.dot"(%x, %v) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2xf32>
}
)";
  auto outs = import_stablehlo(text).compile()(array<float>({-3, 0.5f, 2, 1, -0.25f, 4}, {2, 3}),
                                               array<float>({1, 2, 3}, {3}));
  CHECK(outs[0].to_vector<float>() == std::vector<float>{-1, 0.5f, 1.5f, 1, -0.25f, 1.5f});
  // rows . (1, 2, 3): -3 + 1 + 6 = 4 and 1 - 0.5 + 12 = 12.5
  CHECK(outs[1].to_vector<float>() == std::vector<float>{4, 12.5f});
}
