// The api walk's table (tests/api_walk_test.cpp): one entry per public function name, from a family or with its
// own cases. Keep it sorted by header; other branches add their functions here.
#pragma once

namespace {

#define JITX_U(ns, n) {#ns "::" #n, [](Walk& w) { unary(w, [](const Array& x) { return ns::n(x); }); }}
#define JITX_B(ns, n, is_lax) \
  {#ns "::" #n, [](Walk& w) { binary(w, [](const Array& x, const Array& y) { return ns::n(x, y); }, is_lax); }}
#define JITX_UI(ns, n) {#ns "::" #n, [](Walk& w) { unary_int(w, [](const Array& x) { return ns::n(x); }); }}
#define JITX_BI(ns, n) \
  {#ns "::" #n, [](Walk& w) { binary_int(w, [](const Array& x, const Array& y) { return ns::n(x, y); }); }}
#define JITX_R(ns, n, empty_ok) \
  {#ns "::" #n,                 \
   [](Walk& w) { reduction(w, [](const Array& x, std::vector<int64_t> axes) { return ns::n(x, axes); }, empty_ok); }}
#define JITX_AX(ns, n, shape) \
  {#ns "::" #n, [](Walk& w) { along_axis(w, [](const Array& x, int64_t axis) { return ns::n(x, axis); }, shape); }}

using Case = std::pair<std::string, std::function<void(Walk&)>>;
using A = const std::vector<Array>&;
using Pad3 = std::vector<std::array<int64_t, 3>>;

// jnp (numpy.h, numpy_extra.h)
const std::vector<Case> kNumpy = {
    {"jnp::promote_numeric",
     [](Walk& w) {
       w.err("(2,3) and (4,)", {f23(), f4()},
             [](A a) { return jnp::promote_numeric(a[0], a[1], "promote_numeric").first; });
       // Two bools run in int32; a bool next to an integer takes the integer's type.
       w.ok("bool and bool", {ones({3}) > 0.0, ones({3}) > 0.0},
            [](A a) { return jnp::promote_numeric(a[0], a[1], "promote_numeric").first; }, {3});
     }},
    JITX_B(jnp, add, false),
    JITX_B(jnp, subtract, false),
    JITX_B(jnp, multiply, false),
    JITX_B(jnp, divide, false),
    JITX_B(jnp, true_divide, false),
    JITX_B(jnp, floor_divide, false),
    JITX_B(jnp, remainder, false),
    JITX_B(jnp, mod, false),
    JITX_B(jnp, power, false),
    JITX_B(jnp, maximum, false),
    JITX_B(jnp, minimum, false),
    JITX_B(jnp, arctan2, false),
    JITX_B(jnp, equal, false),
    JITX_B(jnp, not_equal, false),
    JITX_B(jnp, less, false),
    JITX_B(jnp, less_equal, false),
    JITX_B(jnp, greater, false),
    JITX_B(jnp, greater_equal, false),
    JITX_B(jnp, logical_and, false),
    JITX_B(jnp, logical_or, false),
    JITX_B(jnp, logical_xor, false),
    JITX_BI(jnp, bitwise_and),
    JITX_BI(jnp, bitwise_or),
    JITX_BI(jnp, bitwise_xor),
    JITX_BI(jnp, left_shift),
    JITX_BI(jnp, right_shift),
    JITX_B(jnp, fmod, false),
    JITX_B(jnp, logaddexp, false),
    JITX_B(jnp, isclose, false),
    {"jnp::outer",
     [](Walk& w) {
       w.ok("(2,3), (4,)", {f23(), f4()}, [](A a) { return jnp::outer(a[0], a[1]); }, {6, 4});
       w.ok("(0,3), ()", {z03(), s0()}, [](A a) { return jnp::outer(a[0], a[1]); }, {0, 1});
       w.invalid([](A a) { return jnp::outer(a[0], a[0]); });
     }},
    {"jnp::allclose",
     [](Walk& w) {
       w.err("(2,3), (4,)", {f23(), f4()}, [](A a) { return jnp::allclose(a[0], a[1]); });
       w.ok("(0,3), (3,)", {z03(), ones({3})}, [](A a) { return jnp::allclose(a[0], a[1]); }, {});
       w.invalid([](A a) { return jnp::allclose(a[0], a[0]); });
     }},
    {"jnp::ravel",
     [](Walk& w) {
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::ravel(a[0]); }, {0});
       w.ok("f32[]", {s0()}, [](A a) { return jnp::ravel(a[0]); }, {1});
       w.invalid([](A a) { return jnp::ravel(a[0]); });
     }},
    JITX_U(jnp, negative),
    JITX_U(jnp, abs),
    JITX_U(jnp, sign),
    JITX_U(jnp, floor),
    JITX_U(jnp, ceil),
    JITX_U(jnp, exp),
    JITX_U(jnp, exp2),
    JITX_U(jnp, expm1),
    JITX_U(jnp, log),
    JITX_U(jnp, log1p),
    JITX_U(jnp, log2),
    JITX_U(jnp, log10),
    JITX_U(jnp, sqrt),
    JITX_U(jnp, cbrt),
    JITX_U(jnp, square),
    JITX_U(jnp, reciprocal),
    JITX_U(jnp, tanh),
    JITX_U(jnp, sin),
    JITX_U(jnp, cos),
    JITX_U(jnp, tan),
    JITX_U(jnp, arcsin),
    JITX_U(jnp, arccos),
    JITX_U(jnp, arctan),
    JITX_U(jnp, sinh),
    JITX_U(jnp, cosh),
    JITX_U(jnp, arcsinh),
    JITX_U(jnp, arccosh),
    JITX_U(jnp, arctanh),
    JITX_U(jnp, isfinite),
    JITX_U(jnp, isnan),
    JITX_U(jnp, isinf),
    JITX_U(jnp, logical_not),
    JITX_UI(jnp, bitwise_not),
    JITX_UI(jnp, invert),
    JITX_U(jnp, round),
    JITX_U(jnp, nan_to_num),
    JITX_R(jnp, sum, true),
    JITX_R(jnp, prod, true),
    JITX_R(jnp, max, false),
    JITX_R(jnp, min, false),
    JITX_R(jnp, all, true),
    JITX_R(jnp, any, true),
    JITX_R(jnp, mean, true),
    JITX_R(jnp, var, true),
    JITX_R(jnp, std, true),
    JITX_R(jnp, nansum, true),
    JITX_R(jnp, nanmean, true),
    JITX_R(jnp, nanmax, false),
    JITX_R(jnp, nanmin, false),
    JITX_AX(jnp, argmax, {2}),
    JITX_AX(jnp, argmin, {2}),
    JITX_AX(jnp, cumsum, Shape({2, 3})),
    JITX_AX(jnp, cumprod, Shape({2, 3})),
    JITX_AX(jnp, sort, Shape({2, 3})),
    JITX_AX(jnp, argsort, Shape({2, 3})),
    {"jnp::matmul",
     [](Walk& w) {
       w.err("(2,3) @ (2,3)", {f23(), f23()}, [](A a) { return jnp::matmul(a[0], a[1]); });
       w.err("0-d operands", {s0(), s0()}, [](A a) { return jnp::matmul(a[0], a[1]); });
       w.ok("(0,3) @ (3,2)", {z03(), ones({3, 2})}, [](A a) { return jnp::matmul(a[0], a[1]); }, {0, 2});
       w.invalid([](A a) { return jnp::matmul(a[0], a[0]); });
     }},
    {"jnp::dot",
     [](Walk& w) {
       w.err("(2,3) . (2,3)", {f23(), f23()}, [](A a) { return jnp::dot(a[0], a[1]); });
       w.ok("scalar . (2,3)", {s0(), f23()}, [](A a) { return jnp::dot(a[0], a[1]); }, {2, 3});
     }},
    {"jnp::einsum",
     [](Walk& w) {
       w.err("'ij,jk->il'", {f23(), f23()}, [](A a) { return jnp::einsum("ij,jk->il", {a[0], a[1]}); });
       w.err("'ij,jk->ik' with (2,3), (2,3)", {f23(), f23()},
             [](A a) { return jnp::einsum("ij,jk->ik", {a[0], a[1]}); });
       w.err("one operand for two", {f23()}, [](A a) { return jnp::einsum("ij,jk->ik", {a[0]}); });
       w.err("'ijk' on rank 2", {f23()}, [](A a) { return jnp::einsum("ijk->k", {a[0]}); });
       w.err("'i$->i'", {f23()}, [](A a) { return jnp::einsum("i$->i", {a[0]}); });
       w.ok("'ij->ji'", {f23()}, [](A a) { return jnp::einsum("ij->ji", {a[0]}); }, {3, 2});
     }},
    {"jnp::reshape",
     [](Walk& w) {
       w.err("(4, 4)", {f23()}, [](A a) { return jnp::reshape(a[0], {4, 4}); });
       w.err("(-1, -1)", {f23()}, [](A a) { return jnp::reshape(a[0], {-1, -1}); });
       w.err("(-2, 3)", {f23()}, [](A a) { return jnp::reshape(a[0], {-2, -3}); });
       w.err("(2^62+3, 4)", {f23()}, [](A a) { return jnp::reshape(a[0], {kHuge + 3, 4}); });
       w.ok("(3, -1)", {f23()}, [](A a) { return jnp::reshape(a[0], {3, -1}); }, {3, 2});
       w.ok("f32[0,3] to (3, 0)", {z03()}, [](A a) { return jnp::reshape(a[0], {3, 0}); }, {3, 0});
       w.invalid([](A a) { return jnp::reshape(a[0], {6}); });
     }},
    {"jnp::transpose",
     [](Walk& w) {
       w.err("(0, 0)", {f23()}, [](A a) { return jnp::transpose(a[0], {0, 0}); });
       w.err("(0,)", {f23()}, [](A a) { return jnp::transpose(a[0], {0}); });
       w.err("(0, 2)", {f23()}, [](A a) { return jnp::transpose(a[0], {0, 2}); });
       w.ok("(-1, 0)", {f23()}, [](A a) { return jnp::transpose(a[0], {-1, 0}); }, {3, 2});
     }},
    {"jnp::swapaxes",
     [](Walk& w) {
       w.err("0, 2", {f23()}, [](A a) { return jnp::swapaxes(a[0], 0, 2); });
       w.err("-3, 0", {f23()}, [](A a) { return jnp::swapaxes(a[0], -3, 0); });
       w.ok("0, -1", {f23()}, [](A a) { return jnp::swapaxes(a[0], 0, -1); }, {3, 2});
     }},
    {"jnp::expand_dims",
     [](Walk& w) {
       w.err("axis 3", {f23()}, [](A a) { return jnp::expand_dims(a[0], {3}); });
       w.err("axes (0, 0)", {f23()}, [](A a) { return jnp::expand_dims(a[0], {0, 0}); });
       w.ok("axis -1", {f23()}, [](A a) { return jnp::expand_dims(a[0], {-1}); }, {2, 3, 1});
     }},
    {"jnp::squeeze",
     [](Walk& w) {
       w.err("axis 1 of size 3", {f23()}, [](A a) { return jnp::squeeze(a[0], {1}); });
       w.err("axis 5", {f23()}, [](A a) { return jnp::squeeze(a[0], {5}); });
       w.ok("no size-1 axis", {f23()}, [](A a) { return jnp::squeeze(a[0]); }, {2, 3});
     }},
};

const std::vector<Case> kNumpy2 = {
    {"jnp::broadcast_to",
     [](Walk& w) {
       w.err("to (4, 3)", {f23()}, [](A a) { return jnp::broadcast_to(a[0], {4, 3}); });
       w.err("to (3,)", {f23()}, [](A a) { return jnp::broadcast_to(a[0], {3}); });
       w.err("to (-1, 3)", {f4()}, [](A a) { return jnp::broadcast_to(a[0], {-1, 4}); });
       w.err("to (2^62, 2, 4)", {f4()}, [](A a) { return jnp::broadcast_to(a[0], {kHuge, 2, 4}); });
       w.ok("f32[0,3] to (2, 0, 3)", {z03()}, [](A a) { return jnp::broadcast_to(a[0], {2, 0, 3}); }, {2, 0, 3});
     }},
    {"jnp::concatenate",
     [](Walk& w) {
       w.err("no arrays", {f23()}, [](A) { return jnp::concatenate({}); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::concatenate({a[0], a[0]}, 2); });
       w.err("(2,3) with (4,)", {f23(), f4()}, [](A a) { return jnp::concatenate({a[0], a[1]}); });
       w.ok("with f32[0,3]", {f23(), z03()}, [](A a) { return jnp::concatenate({a[0], a[1]}); }, {2, 3});
     }},
    {"jnp::stack",
     [](Walk& w) {
       w.err("no arrays", {f23()}, [](A) { return jnp::stack({}); });
       w.err("axis 3", {f23()}, [](A a) { return jnp::stack({a[0], a[0]}, 3); });
       w.err("(2,3) with (0,3)", {f23(), z03()}, [](A a) { return jnp::stack({a[0], a[1]}); });
       w.ok("axis -1", {f23()}, [](A a) { return jnp::stack({a[0], a[0]}, -1); }, {2, 3, 2});
     }},
    {"jnp::flip",
     [](Walk& w) {
       w.err("axis 2", {f23()}, [](A a) { return jnp::flip(a[0], {2}); });
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::flip(a[0]); }, {0, 3});
     }},
    {"jnp::where",
     [](Walk& w) {
       w.err("(2,3), (4,), (2,3)", {b23(), f4(), f23()}, [](A a) { return jnp::where(a[0], a[1], a[2]); });
       w.ok("a float condition", {f23(), f23(), s0()}, [](A a) { return jnp::where(a[0], a[1], a[2]); }, {2, 3});
       w.invalid([](A a) { return jnp::where(a[0], 1.0f, 2.0f); });
     }},
    {"jnp::clip",
     [](Walk& w) {
       w.err("bounds of shape (4,)", {f23(), f4()}, [](A a) { return jnp::clip(a[0], a[1], std::nullopt); });
       w.ok("no bounds", {f23()}, [](A a) { return jnp::clip(a[0], std::nullopt, std::nullopt); }, {2, 3});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::clip(a[0], Array(0.0f), Array(1.0f)); }, {0, 3});
     }},
    {"jnp::astype",
     [](Walk& w) {
       w.err("DType(200)", {f23()}, [](A a) { return jnp::astype(a[0], static_cast<DType>(200)); });
       w.ok("bool", {f23()}, [](A a) { return jnp::astype(a[0], DType::bool_); }, {2, 3});
       w.invalid([](A a) { return jnp::astype(a[0], DType::int32); });
     }},
    {"jnp::slice_axis",
     [](Walk& w) {
       w.err("axis 2", {f23()}, [](A a) { return jnp::slice_axis(a[0], 2, 0, 1); });
       w.err("step 0", {f23()}, [](A a) { return jnp::slice_axis(a[0], 1, 0, 2, 0); });
       w.ok("start past the end", {f23()}, [](A a) { return jnp::slice_axis(a[0], 1, 7, 9); }, {2, 0});
       w.ok("huge bounds", {f23()}, [](A a) { return jnp::slice_axis(a[0], 1, -kHuge, kHuge); }, {2, 3});
     }},
    {"jnp::take",
     [](Walk& w) {
       Array idx = testing::make_int({0, 5, -9}, DType::int32);
       w.err("mode 'bogus'", {f23(), idx}, [](A a) { return jnp::take(a[0], a[1], 1, "bogus"); });
       w.err("axis 2", {f23(), idx}, [](A a) { return jnp::take(a[0], a[1], 2); });
       w.err("float indices", {f23(), f23()}, [](A a) { return jnp::take(a[0], a[1], 1); });
       w.ok("out-of-range indices", {f23(), idx}, [](A a) { return jnp::take(a[0], a[1], 1); }, {2, 3});
       w.ok("from f32[0,3] clipped", {z03(), idx}, [](A a) { return jnp::take(a[0], a[1], 1, "clip"); }, {0, 3});
     }},
    {"jnp::at",
     [](Walk& w) {
       Array idx = testing::make_int({0, 7}, DType::int32);
       w.err("set with values of shape (4,)", {f23(), idx, f4()}, [](A a) { return jnp::at(a[0], a[1]).set(a[2]); });
       w.err("float indices", {f23(), f4()}, [](A a) { return jnp::at(a[0], a[1]).get(); });
       w.err("three index arrays for rank 2", {f23(), idx},
             [](A a) { return jnp::at(a[0], {a[1], a[1], a[1]}).add(1.0f); });
       w.ok("out-of-range add", {f23(), idx}, [](A a) { return jnp::at(a[0], a[1]).add(1.0f); }, {2, 3});
       w.ok("min on f32[0,3]", {z03(), idx}, [](A a) { return jnp::at(a[0], a[1]).min(1.0f); }, {0, 3});
       w.ok("mul, max", {f23(), idx}, [](A a) { return jnp::at(jnp::at(a[0], a[1]).mul(2.0f), a[1]).max(0.0f); },
            {2, 3});
     }},
    {"jnp::broadcast_shapes",
     [](Walk& w) {
       w.err("(2, 3) and (4,)", {}, [](A) { return zeros(jnp::broadcast_shapes({{2, 3}, {4}})); });
       w.err("(-1,) and (3,)", {}, [](A) { return zeros(jnp::broadcast_shapes({{-1}, {3}})); });
       w.ok("(0, 1) and (3,)", {}, [](A) { return zeros(jnp::broadcast_shapes({{0, 1}, {3}})); }, {0, 3});
     }},
    {"jnp::promote_and_broadcast",
     [](Walk& w) {
       w.err("(2,3) and (4,)", {f23(), f4()},
             [](A a) { return jnp::promote_and_broadcast(a[0], a[1], "promote_and_broadcast").first; });
       // A 0-d operand stays 0-d (lax's binary ops take a scalar next to an array); others broadcast.
       w.ok("i32 and f32[]", {i23(), s0()},
            [](A a) { return jnp::promote_and_broadcast(a[0], a[1], "promote_and_broadcast").second; }, {});
       w.ok("i32[2,3] and f32[3]", {i23(), ones({3})},
            [](A a) { return jnp::promote_and_broadcast(a[0], a[1], "promote_and_broadcast").second; }, {2, 3});
     }},
    {"jnp::result_type",
     [](Walk& w) {
       w.err("no arrays", {}, [](A) { return zeros({1}, jnp::result_type({})); });
       w.ok("i32, f32", {i23(), f23()}, [](A a) { return zeros({1}, jnp::result_type({a[0], a[1]})); }, {1});
       w.invalid([](A a) { return zeros({1}, jnp::result_type({a[0]})); });
     }},
    {"jnp::tril",
     [](Walk& w) {
       w.either("rank 1", {f4()}, [](A a) { return jnp::tril(a[0]); });
       w.ok("k 2^62", {f23()}, [](A a) { return jnp::tril(a[0], kHuge); }, {2, 3});
       w.ok("f32[0,3], k -5", {z03()}, [](A a) { return jnp::tril(a[0], -5); }, {0, 3});
     }},
    {"jnp::triu",
     [](Walk& w) {
       w.either("rank 1", {f4()}, [](A a) { return jnp::triu(a[0]); });
       w.ok("k -2^62", {f23()}, [](A a) { return jnp::triu(a[0], -kHuge); }, {2, 3});
     }},
    {"jnp::roll",
     [](Walk& w) {
       w.err("axis 2", {f23()}, [](A a) { return jnp::roll(a[0], 1, 2); });
       w.err("3 shifts, 2 axes", {f23()}, [](A a) { return jnp::roll(a[0], {1, 2, 3}, {0, 1}); });
       w.ok("shift 2^62", {f23()}, [](A a) { return jnp::roll(a[0], kHuge, 1); }, {2, 3});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::roll(a[0], 3); }, {0, 3});
     }},
    {"jnp::tile",
     [](Walk& w) {
       w.err("reps (-1,)", {f23()}, [](A a) { return jnp::tile(a[0], {-1}); });
       w.err("reps (2^62, 4)", {f23()}, [](A a) { return jnp::tile(a[0], {kHuge, 4}); });
       w.ok("reps (0, 2)", {f23()}, [](A a) { return jnp::tile(a[0], {0, 2}); }, {0, 6});
     }},
    {"jnp::repeat",
     [](Walk& w) {
       w.err("repeats -1", {f23()}, [](A a) { return jnp::repeat(a[0], -1, 0); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::repeat(a[0], 2, 2); });
       w.err("3 counts for axis of 2", {f23()},
             [](A a) { return jnp::repeat(a[0], std::vector<int64_t>{1, 2, 3}, 0); });
       w.err("repeats 2^62", {f23()}, [](A a) { return jnp::repeat(a[0], kHuge, 0); });
       w.ok("repeats 0", {f23()}, [](A a) { return jnp::repeat(a[0], 0, 1); }, {2, 0});
     }},
    {"jnp::pad",
     [](Walk& w) {
       w.err("negative width", {f23()}, [](A a) { return jnp::pad(a[0], jnp::PadWidth{{-1, 0}}); });
       w.err("mode 'bogus'", {f23()}, [](A a) { return jnp::pad(a[0], 1, "bogus"); });
       w.err("3 pairs for rank 2", {f23()}, [](A a) { return jnp::pad(a[0], jnp::PadWidth{{1, 1}, {1, 1}, {1, 1}}); });
       w.err("width 2^62", {f23()}, [](A a) { return jnp::pad(a[0], kHuge); });
       w.either("mode 'median'", {f23()}, [](A a) { return jnp::pad(a[0], 1, "median"); });
       w.either("'edge' of f32[0,3]", {z03()}, [](A a) { return jnp::pad(a[0], 1, "edge"); });
       w.ok("'reflect'", {f23()}, [](A a) { return jnp::pad(a[0], 1, "reflect"); }, {4, 5});
     }},
    {"jnp::searchsorted",
     [](Walk& w) {
       w.err("2-d a", {f23(), f4()}, [](A a) { return jnp::searchsorted(a[0], a[1]); });
       w.err("side 'middle'", {f4(), f4()}, [](A a) { return jnp::searchsorted(a[0], a[1], "middle"); });
       w.ok("empty a", {zeros({0}), f23()}, [](A a) { return jnp::searchsorted(a[0], a[1]); }, {2, 3});
     }},
    {"jnp::nonzero",
     [](Walk& w) {
       w.err("size -1", {f23()}, [](A a) { return jnp::nonzero(a[0], -1)[0]; });
       w.ok("size 4", {f23()}, [](A a) { return jnp::nonzero(a[0], 4)[1]; }, {4});
       w.ok("f32[0,3], size 2", {z03()}, [](A a) { return jnp::nonzero(a[0], 2)[0]; }, {2});
     }},
    {"jnp::linalg::norm",
     [](Walk& w) {
       w.err("ord 'bogus'", {f23()}, [](A a) { return jnp::linalg::norm(a[0], "bogus"); });
       w.err("axis 3", {f23()}, [](A a) { return jnp::linalg::norm(a[0], std::nullopt, std::vector<int64_t>{3}); });
       w.err("three axes", {f23()},
             [](A a) { return jnp::linalg::norm(a[0], std::nullopt, std::vector<int64_t>{0, 1, 0}); });
       w.err("'fro' of a vector", {f4()}, [](A a) { return jnp::linalg::norm(a[0], "fro"); });
       w.either("matrix ord 2", {f23()}, [](A a) { return jnp::linalg::norm(a[0], 2.0); });
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::linalg::norm(a[0]); }, {});
     }},
    // this stop's additions (argwhere/flatnonzero; the jnp creation functions; jnp::linalg's decompositions)
    {"jnp::argwhere",
     [](Walk& w) {
       w.err("size -1", {f23()}, [](A a) { return jnp::argwhere(a[0], -1); });
       w.ok("size 4", {f23()}, [](A a) { return jnp::argwhere(a[0], 4); }, {4, 2});
       w.ok("f32[0,3], size 2", {z03()}, [](A a) { return jnp::argwhere(a[0], 2); }, {2, 2});
       w.invalid([](A a) { return jnp::argwhere(a[0], 2); });
     }},
    {"jnp::flatnonzero",
     [](Walk& w) {
       w.err("size -1", {f23()}, [](A a) { return jnp::flatnonzero(a[0], -1); });
       w.ok("size 4", {f23()}, [](A a) { return jnp::flatnonzero(a[0], 4); }, {4});
       w.ok("f32[0,3], size 2", {z03()}, [](A a) { return jnp::flatnonzero(a[0], 2); }, {2});
       w.invalid([](A a) { return jnp::flatnonzero(a[0], 2); });
     }},
    {"jnp::empty",
     [](Walk& w) {
       w.err("shape (-1, 2)", {}, [](A) { return jnp::empty({-1, 2}); });
       w.err("dtype 200", {}, [](A) { return jnp::empty({2}, DType(200)); });
       w.ok("shape (0, 3)", {}, [](A) { return jnp::empty({0, 3}); }, {0, 3});
     }},
    {"jnp::identity",
     [](Walk& w) {
       w.err("n -1", {}, [](A) { return jnp::identity(-1); });
       w.err("dtype 200", {}, [](A) { return jnp::identity(2, DType(200)); });
       w.ok("n 0", {}, [](A) { return jnp::identity(0); }, {0, 0});
     }},
    {"jnp::zeros_like",
     [](Walk& w) {
       w.err("dtype 200", {f23()}, [](A a) { return jnp::zeros_like(a[0], DType(200)); });
       w.ok("f32[0,3], i32", {z03()}, [](A a) { return jnp::zeros_like(a[0], DType::int32); }, {0, 3});
       w.invalid([](A a) { return jnp::zeros_like(a[0], DType::int32); });
     }},
    {"jnp::ones_like",
     [](Walk& w) {
       w.err("dtype 200", {f23()}, [](A a) { return jnp::ones_like(a[0], DType(200)); });
       w.ok("f32[0,3], i32", {z03()}, [](A a) { return jnp::ones_like(a[0], DType::int32); }, {0, 3});
       w.invalid([](A a) { return jnp::ones_like(a[0], DType::int32); });
     }},
    {"jnp::empty_like",
     [](Walk& w) {
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::empty_like(a[0]); }, {0, 3});
       w.invalid([](A a) { return jnp::empty_like(a[0]); });
     }},
    {"jnp::full_like",
     [](Walk& w) {
       w.err("dtype 200", {f23()}, [](A a) { return jnp::full_like(a[0], 1.0, DType(200)); });
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::full_like(a[0], 2.0); }, {0, 3});
       w.invalid([](A a) { return jnp::full_like(a[0], 2.0); });
     }},
    {"jnp::linalg::cholesky",
     [](Walk& w) {
       w.err("f32[2,3] (not square)", {f23()}, [](A a) { return jnp::linalg::cholesky(a[0]); });
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::cholesky(a[0]); });
       w.ok("f32[2,0,0]", {zeros({2, 0, 0})}, [](A a) { return jnp::linalg::cholesky(a[0]); }, {2, 0, 0});
       w.invalid([](A a) { return jnp::linalg::cholesky(a[0]); });
     }},
    {"jnp::linalg::inv",
     [](Walk& w) {
       w.err("f32[2,3] (not square)", {f23()}, [](A a) { return jnp::linalg::inv(a[0]); });
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::inv(a[0]); });
       w.ok("f32[2,0,0]", {zeros({2, 0, 0})}, [](A a) { return jnp::linalg::inv(a[0]); }, {2, 0, 0});
       w.invalid([](A a) { return jnp::linalg::inv(a[0]); });
     }},
    {"jnp::linalg::det",
     [](Walk& w) {
       w.err("f32[2,3] (not square)", {f23()}, [](A a) { return jnp::linalg::det(a[0]); });
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::det(a[0]); });
       w.ok("f32[2,0,0]", {zeros({2, 0, 0})}, [](A a) { return jnp::linalg::det(a[0]); }, {2});
       w.invalid([](A a) { return jnp::linalg::det(a[0]); });
     }},
    {"jnp::linalg::slogdet",
     [](Walk& w) {
       w.err("f32[2,3] (not square)", {f23()}, [](A a) { return jnp::linalg::slogdet(a[0]).logabsdet; });
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::slogdet(a[0]).logabsdet; });
       w.ok("f32[2,0,0]", {zeros({2, 0, 0})}, [](A a) { return jnp::linalg::slogdet(a[0]).logabsdet; }, {2});
       w.invalid([](A a) { return jnp::linalg::slogdet(a[0]).logabsdet; });
     }},
    {"jnp::linalg::eigh",
     [](Walk& w) {
       w.err("f32[2,3] (not square)", {f23()}, [](A a) { return jnp::linalg::eigh(a[0]).eigenvalues; });
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::eigh(a[0]).eigenvalues; });
       w.ok("f32[2,0,0]", {zeros({2, 0, 0})}, [](A a) { return jnp::linalg::eigh(a[0]).eigenvalues; }, {2, 0});
       w.invalid([](A a) { return jnp::linalg::eigh(a[0]).eigenvalues; });
     }},
    {"jnp::linalg::eigvalsh",
     [](Walk& w) {
       w.err("f32[2,3] (not square)", {f23()}, [](A a) { return jnp::linalg::eigvalsh(a[0]); });
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::eigvalsh(a[0]); });
       w.ok("f32[2,0,0]", {zeros({2, 0, 0})}, [](A a) { return jnp::linalg::eigvalsh(a[0]); }, {2, 0});
       w.invalid([](A a) { return jnp::linalg::eigvalsh(a[0]); });
     }},
    {"jnp::linalg::matrix_power",
     [](Walk& w) {
       w.err("f32[2,3] (not square)", {f23()}, [](A a) { return jnp::linalg::matrix_power(a[0], 3); });
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::matrix_power(a[0], 3); });
       w.ok("f32[2,0,0]", {zeros({2, 0, 0})}, [](A a) { return jnp::linalg::matrix_power(a[0], 3); }, {2, 0, 0});
       w.invalid([](A a) { return jnp::linalg::matrix_power(a[0], 3); });
     }},
    {"jnp::linalg::solve",
     [](Walk& w) {
       w.err("a f32[2,3]", {f23(), f4()}, [](A a) { return jnp::linalg::solve(a[0], a[1]); });
       w.err("b f32[4] for a (3,3)", {ones({3, 3}), f4()}, [](A a) { return jnp::linalg::solve(a[0], a[1]); });
       w.ok("(0,0), (0,)", {zeros({0, 0}), zeros({0})}, [](A a) { return jnp::linalg::solve(a[0], a[1]); }, {0});
       w.invalid([](A a) { return jnp::linalg::solve(a[0], a[0]); });
     }},
    {"jnp::linalg::qr",
     [](Walk& w) {
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::qr(a[0]).R; });
       w.err("mode 'bogus'", {f23()}, [](A a) { return jnp::linalg::qr(a[0], "bogus").R; });
       w.ok("f32[2,3]", {f23()}, [](A a) { return jnp::linalg::qr(a[0]).R; }, {2, 3});
       w.invalid([](A a) { return jnp::linalg::qr(a[0]).R; });
     }},
    {"jnp::linalg::svd",
     [](Walk& w) {
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::svd(a[0]).S; });
       w.ok("f32[2,3]", {f23()}, [](A a) { return jnp::linalg::svd(a[0]).S; }, {2});
       w.invalid([](A a) { return jnp::linalg::svd(a[0]).S; });
     }},
    {"jnp::linalg::svdvals",
     [](Walk& w) {
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::svdvals(a[0]); });
       w.ok("f32[2,3]", {f23()}, [](A a) { return jnp::linalg::svdvals(a[0]); }, {2});
       w.invalid([](A a) { return jnp::linalg::svdvals(a[0]); });
     }},
    {"jnp::linalg::pinv",
     [](Walk& w) {
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return jnp::linalg::pinv(a[0]); });
       w.ok("f32[2,3]", {f23()}, [](A a) { return jnp::linalg::pinv(a[0]); }, {3, 2});
       w.invalid([](A a) { return jnp::linalg::pinv(a[0]); });
     }},
    {"jnp::linalg::lstsq",
     [](Walk& w) {
       w.err("a f32[4] (rank 1)", {f4(), f4()}, [](A a) { return jnp::linalg::lstsq(a[0], a[1]).x; });
       w.err("b f32[4] for a (2,3)", {f23(), f4()}, [](A a) { return jnp::linalg::lstsq(a[0], a[1]).x; });
       w.ok("a (2,3), b (2,)", {f23(), ones({2})}, [](A a) { return jnp::linalg::lstsq(a[0], a[1]).x; }, {3});
       w.invalid([](A a) { return jnp::linalg::lstsq(a[0], a[0]).x; });
     }},
};

}  // namespace

#include "api_walk_table_lax.h"

#undef JITX_U
#undef JITX_UI
#undef JITX_BI
#undef JITX_B
#undef JITX_R
#undef JITX_AX
