// jnp's products and index helpers (numpy_shape.h: take_along_axis, tensordot, inner, vdot, kron, cross,
// diagflat, tri, vander, the *_indices functions, unravel_index, ravel_multi_index) against JAX 0.10.2 (x64):
// values, dtypes and weak types written in from JAX, each checked eagerly and under jit, gradients against
// jax.grad, and what JAX refuses refused with the op's name.
#include "numpy_shape_test_util.h"

// Inside the helpers' namespace rather than under a using-directive, so that a unity build (tools/sanitize.sh)
// can put these tests next to other test files without their names meeting.
namespace jitx::testing::shape_pack {

TEST_CASE("jnp::take_along_axis reads along an axis with JAX's modes, fill values, broadcasting and index dtypes",
          "[jnp]") {
  // Negative indices count from the end; out-of-range ones read NaN (fill), the clamped element (clip) or 0
  // (one_hot); promise_in_bounds leaves them to the gather, which clamps without counting from the end.
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), I({0, -1, 3, 4, -5, 2, 1, 0}, {2, 4})},
       {{2, 4}, f64, false, {7.375, 11, kNaN, kNaN, kNaN, 11, 1.5, -8}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0, "clip"); },
       {R({3, 4}), I({0, -1, 3, 4, -5, 2, 1, 0}, {2, 4})},
       {{2, 4}, f64, false, {7.375, 11, 5.875, 0.75, 7.375, 11, 1.5, -8}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0, "one_hot"); },
       {R({3, 4}, i32), I({0, -1, 3, 4, -5, 2, 1, 0}, {2, 4})}, {{2, 4}, i32, false, {-9, -44, 0, 0, 0, -44, 35, 13}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0, "promise_in_bounds"); },
       {R({3, 4}), I({0, -1, 2, 1}, {1, 4})}, {{1, 4}, f64, false, {7.375, 2.25, 5.875, -3.625}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 1); }, {R({3, 4}, i32), I({7, -9, 0}, {3, 1})},
       {{3, 1}, i32, false, {-2147483648, -2147483648, 16}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 1); }, {R({3, 4}, u8), I({7, -9, 0}, {3, 1})},
       {{3, 1}, u8, false, {255, 255, 16}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 1); }, {R({3, 4}, b1), I({7, -9, 0}, {3, 1})},
       {{3, 1}, b1, false, {1, 1, 0}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 1, "fill", -1.5); }, {R({3, 4}, i32), I({7, -9, 0}, {3, 1})},
       {{3, 1}, i32, false, {-1, -1, 16}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], std::nullopt); }, {R({3, 4}), I({11, -1, 12, 3})},
       {{4}, f64, false, {0.75, 0.75, kNaN, -8}});
  // The other axes broadcast (arr's size-1 axes and the indices').
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 1}), I({0, 2, 1}, {1, 3})},
       {{1, 3}, f64, false, {7.375, -2.875, 2.25}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], -1); }, {R({2, 1, 4}), I({3, 0, 1, 1, 2, 3}, {1, 3, 2})},
       {{2, 3, 2}, f64, false, {-8, 7.375, 2.25, 2.25, -2.875, -8, -3.625, 11.75, 6.625, 6.625, 1.5, -3.625}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 1); }, {R({1, 300}), I({-1, 127}, {1, 2}, i8)},
       {{1, 2}, f64, false, {-7.625, 3.25}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), I({3, 0, 2, -3}, {1, 4}, i64)},
       {{1, 4}, f64, false, {kNaN, 2.25, 5.875, -8}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), I({3, 0, 2, 1}, {1, 4}, u32)},
       {{1, 4}, f64, false, {kNaN, 2.25, 5.875, -3.625}});
  // An empty axis gives zeros, whatever the indices (JAX's lax.full); a weak array stays weak.
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({0, 2}), I({0, 1}, {1, 2})},
       {{1, 2}, f64, false, {0, 0}});
  same([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {W(1.5, {2, 2}), I({0, 1}, {1, 2})},
       {{1, 2}, f64, true, {1.5, 1.5}});
  same([](A a) { return jnp::take_along_axis(a[0], jnp::argsort(a[0], 1), 1); }, {R({2, 5}, f64, 3)},
       {{2, 5}, f64, false, {-12.25, -7.125, -2, 3.125, 7.5, -7.875, -2.75, 2.375, 6.75, 11.875}});
  same_grad([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), I({0, -1, 3, 4, -5, 2, 1, 0}, {2, 4})},
            0, {{3, 4}, f64, false, {-8, 0, 0, 5.875, 0, 0, 11, 0, 0, 3, 0, 0}});
  same_grad([](A a) { return jnp::take_along_axis(a[0], a[1], 0, "clip"); },
            {R({3, 4}), I({0, -1, 3, 4, -5, 2, 1, 0}, {2, 4})}, 0,
            {{3, 4}, f64, false, {-11.625, 0, 0, 5.875, 0, 0, 11, 0, 0, 3, 6.625, 1.5}});
  same_grad([](A a) { return jnp::take_along_axis(a[0], a[1], 1); }, {R({2, 3}), I({0, 0, 2, 0, 1, 1, 1, 1}, {2, 4})},
            0, {{2, 3}, f64, false, {5.25, 0, 6.625, 0, 4.5, 0}});
  // vmap over a leading axis: JAX's jax.vmap(lambda x, i: jnp.take_along_axis(x, i, 0)).
  static const auto vf = [](A a) {
    return vmap([](const Array& x, const Array& i) { return jnp::take_along_axis(x, i, 0); })(a[0], a[1]);
  };
  same([](A a) { return vf(a); }, {R({2, 3, 2}), I({0, 2, -1, 5}, {2, 1, 2})},
       {{2, 1, 2}, f64, false, {7.375, 6.625, 5.875, kNaN}});
  // JAX: ValueError: take_along_axis indices must be 1D if axis=None, got shape (1, 2)
  refuses<ShapeError>([](A a) { return jnp::take_along_axis(a[0], a[1], std::nullopt); },
                      {R({3, 4}), I({11, -1}, {1, 2})}, "take_along_axis");
  // JAX: ValueError: indices and arr must have the same number of dimensions; 1 vs. 2
  refuses<ShapeError>([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), I({1})}, "take_along_axis");
  // JAX: TypeError: take_along_axis indices must be of integer type, got float64
  refuses<TypeError>([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), R({1, 1})},
                     "take_along_axis");
  // JAX: TypeError: take_along_axis indices must be of integer type, got bool
  refuses<TypeError>([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), R({1, 1}, b1)},
                     "take_along_axis");
  // JAX: ValueError: Incompatible shapes for broadcasting: shapes=[(1, 3), (1, 4)]
  refuses<ShapeError>([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({3, 4}), I({0, 0, 0}, {1, 3})},
                      "take_along_axis");
  // JAX: ValueError: axis 0 is out of bounds for array of dimension 0
  refuses<ShapeError>([](A a) { return jnp::take_along_axis(a[0], a[1], 0); }, {R({}), I({0}, Shape{})},
                      "take_along_axis");
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>([](A a) { return jnp::take_along_axis(a[0], a[1], 2); },
                      {R({3, 4}), I({0, -1, 3, 4, -5, 2, 1, 0}, {2, 4})}, "take_along_axis");
  // JAX: ValueError: Unknown gather mode "wrap"
  refuses<TypeError>([](A a) { return jnp::take_along_axis(a[0], a[1], 0, "wrap"); }, {R({3, 4}), I({5}, {1, 1})},
                     "take_along_axis");
}

TEST_CASE("jnp::tensordot contracts counts or lists of axes in the promoted dtype, as JAX", "[jnp]") {
  same([](A a) { return jnp::tensordot(a[0], a[1]); }, {R({2, 2, 3}), R({2, 3, 2}, f64, 1)},
       {{2, 2}, f64, false, {-220.75, 39.734375, 96.265625, 117.640625}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {R({2, 3, 4}), R({4, 2}, f64, 1)},
       {{2, 3, 2},
        f64,
        false,
        {-118.390625, 71.46875, -138.078125, 70.921875, 106.53125, -156.609375, -12.65625, -129.171875, 123.125,
         153.234375, -104.890625, 71.84375}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 0); }, {R({2, 2}), R({2}, f64, 2)},
       {{2, 2, 2}, f64, false, {-27.65625, -65.453125, -8.4375, -19.96875, 10.78125, 25.515625, 30, 71}});
  // A negative count contracts nothing (JAX's empty ranges): the outer product.
  same([](A a) { return jnp::tensordot(a[0], a[1], -1); }, {R({2}), R({2}, f64, 2)},
       {{2, 2}, f64, false, {-27.65625, -65.453125, -8.4375, -19.96875}});
  same(
      [](A a) {
        return jnp::tensordot(a[0], a[1], {{1, 2}, {1, 0}});
      },
      {R({2, 3, 4}), R({4, 3}, f64, 1)}, {{2}, f64, false, {-99.75, -56.15625}});
  same(
      [](A a) {
        return jnp::tensordot(a[0], a[1], {{-1}, {-2}});
      },
      {R({2, 2}), R({2, 3}, f64, 1)},
      {{2, 3}, f64, false, {-80.890625, 53.234375, 3.90625, 39.546875, 23.765625, 79.5}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {R({2, 3}, i8), R({3}, u8, 1)},
       {{2}, i16, false, {-393, -1123}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {R({2, 3}, b1), R({3}, b1, 4)}, {{2}, b1, false, {0, 0}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {R({2, 3}, i32), R({3}, f32, 1)},
       {{2}, f32, false, {275.625, -591}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {W(1.5, {2, 3}), W(2.5, {3})},
       {{2}, f64, true, {11.25, 11.25}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1, i32); }, {R({2, 3}, i8), R({3}, i8, 1)},
       {{2}, i32, false, {1929, -1133}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {R({2, 3}, f16), R({3, 2}, f16, 1)},
       {{2, 2}, f16, false, {-51.375, 97.5, 90.625, -161.625}});
  same([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {R({2, 0}), R({0, 3})},
       {{2, 3}, f64, false, {0, 0, 0, 0, 0, 0}});
  same_grad(
      [](A a) {
        return jnp::tensordot(a[0], a[1], {{1, 2}, {1, 0}});
      },
      {R({2, 3, 4}), R({4, 3}, f64, 1)}, 0,
      {{2, 3, 4}, f64, false, {85,        9,        -67,     56,         -73,        50,         -26,       97,
                               -32,       91,       15,      -61,        -124.84375, -13.21875,  98.40625,  -82.25,
                               107.21875, -73.4375, 38.1875, -142.46875, 47,         -133.65625, -22.03125, 89.59375}});
  same_grad([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {R({2, 3, 4}), R({4, 3}, f64, 1)}, 1,
            {{4, 3},
             f64,
             false,
             {-163.328125, 75.78125, -86.21875, 135.921875, 150.171875, -109.203125, 52.71875, -157.890625, 104.125,
              205.828125, -229.640625, -65}});
  // JAX: TypeError: Number of tensordot axes (axes 3) exceeds input ranks ((2, 3, 4) and (3, 4))
  refuses<ShapeError>([](A a) { return jnp::tensordot(a[0], a[1], 3); }, {R({2, 3, 4}), R({3, 4})}, "tensordot");
  // JAX: TypeError: tensordot requires axes lists to have equal length, got (1, 2) and (0,).
  refuses<ShapeError>(
      [](A a) {
        return jnp::tensordot(a[0], a[1], {{1, 2}, {0}});
      },
      {R({2, 3, 4}), R({3, 4})}, "tensordot");
  // JAX: TypeError: dot_general requires contracting dimensions to have the same shape, got (2,) and (3,).
  refuses<ShapeError>(
      [](A a) {
        return jnp::tensordot(a[0], a[1], {{0}, {0}});
      },
      {R({2, 3, 4}), R({3, 4})}, "tensordot");
  // JAX: TypeError: dot_general requires lhs contracting dimensions to be distinct, got lhs_contracting (1, 1).
  refuses<ShapeError>(
      [](A a) {
        return jnp::tensordot(a[0], a[1], {{1, 1}, {0, 0}});
      },
      {R({2, 3, 4}), R({3, 4})}, "tensordot");
  // JAX: ValueError: axis 3 is out of bounds for array of dimension 3
  refuses<ShapeError>(
      [](A a) {
        return jnp::tensordot(a[0], a[1], {{3}, {0}});
      },
      {R({2, 3, 4}), R({3, 4})}, "tensordot");
  // JAX: TypeError: Number of tensordot axes (axes 1) exceeds input ranks (() and (3, 4))
  refuses<ShapeError>([](A a) { return jnp::tensordot(a[0], a[1], 1); }, {Array(2.0), R({3, 4})}, "tensordot");
}

TEST_CASE("jnp::inner, vdot and kron follow JAX's shapes and dtypes", "[jnp]") {
  same([](A a) { return jnp::inner(a[0], a[1]); }, {R({2, 2, 3}), R({2, 3}, f64, 1)},
       {{2, 2, 2}, f64, false, {-69.328125, 10.34375, 218.71875, -139.796875, -84.015625, 120.5, -60.265625, -57.625}});
  same([](A a) { return jnp::inner(a[0], a[1]); }, {Array(2.0), R({2, 2})},
       {{2, 2}, f64, false, {14.75, 4.5, -5.75, -16}});
  same([](A a) { return jnp::inner(a[0], a[1]); }, {R({3}), R({3}, i32, 1)}, {{}, f64, false, {32.125}});
  same([](A a) { return jnp::inner(a[0], a[1], i32); }, {R({3}, i8), R({3}, i8, 1)}, {{}, i32, false, {1929}});
  same([](A a) { return jnp::vdot(a[0], a[1]); }, {R({2, 3}), R({3, 2}, f64, 1)}, {{}, f64, false, {-209.125}});
  same([](A a) { return jnp::vdot(a[0], a[1]); }, {Array(2.0), Array(3.0)}, {{}, f64, true, {6}});
  same([](A a) { return jnp::vdot(a[0], a[1]); }, {R({3}, i8), R({3}, i8, 1)}, {{}, i8, false, {-119}});
  same([](A a) { return jnp::vdot(a[0], a[1]); }, {R({3}, b1), R({3}, b1, 1)}, {{}, b1, false, {0}});
  same([](A a) { return jnp::vdot(a[0], a[1]); }, {R({0}), R({0, 2})}, {{}, f64, false, {0}});
  same([](A a) { return jnp::kron(a[0], a[1]); }, {R({2, 2}), R({2}, f64, 1)},
       {{2, 4}, f64, false, {-78.359375, 67.296875, -23.90625, 20.53125, 30.546875, -26.234375, 85, -73}});
  same([](A a) { return jnp::kron(a[0], a[1]); }, {R({2}), R({2, 1, 2}, i32, 1)},
       {{2, 1, 4}, f64, false, {-125.375, 177, -38.25, 54, -265.5, 36.875, -81, 11.25}});
  same([](A a) { return jnp::kron(a[0], a[1]); }, {Array(2.0), R({2, 2}, f32)},
       {{2, 2}, f32, false, {14.75, 4.5, -5.75, -16}});
  same([](A a) { return jnp::kron(a[0], a[1]); }, {Array(2.0), Array(3.0)}, {{}, f64, true, {6}});
  same([](A a) { return jnp::kron(a[0], a[1]); }, {R({0, 2}), R({3})}, {{0, 6}, f64, false, {}});
  same_grad([](A a) { return jnp::inner(a[0], a[1]); }, {R({2, 3}), R({2, 3}, f64, 1)}, 1,
            {{2, 3}, f64, false, {-112, 59.84375, 66.890625, 74.65625, 44.0625, -23.84375}});
  same_grad([](A a) { return jnp::vdot(a[0], a[1]); }, {R({2, 3}), R({3, 2}, f64, 1)}, 0,
            {{2, 3}, f64, false, {85, -73, -32, 9, 50, 91}});
  same_grad([](A a) { return jnp::kron(a[0], a[1]); }, {R({2, 3}), R({2}, f64, 1)}, 0,
            {{2, 3}, f64, false, {192.21875, -56.703125, -41.328125, -63.265625, -47.890625, 194.46875}});
  same_grad([](A a) { return jnp::kron(a[0], a[1]); }, {R({2, 3}), R({2}, f64, 1)}, 1,
            {{2}, f64, false, {-175.796875, 84.6875}});
  // JAX: TypeError: dot_general requires contracting dimensions to have the same shape, got (4,) and (3,).
  refuses<ShapeError>([](A a) { return jnp::inner(a[0], a[1]); }, {R({2, 3, 4}), R({3})}, "inner");
  // JAX: TypeError: dot_general requires contracting dimensions to have the same shape, got (12,) and (3,).
  refuses<ShapeError>([](A a) { return jnp::vdot(a[0], a[1]); }, {R({3, 4}), R({3})}, "vdot");
  // JAX: TypeError: mul does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes of
  // integer, floating, complexfloating.
  refuses<TypeError>([](A a) { return jnp::kron(a[0], a[1]); }, {R({2}, b1), R({2}, b1, 1)}, "kron");
}

TEST_CASE("jnp::cross of 3- and 2-vectors along any axes, broadcasting, as JAX", "[jnp]") {
  same([](A a) { return jnp::cross(a[0], a[1]); }, {R({3}), R({3}, f64, 1)},
       {{3}, f64, false, {35.234375, 1.046875, 91.203125}});
  same([](A a) { return jnp::cross(a[0], a[1]); }, {R({2}), R({2}, f64, 1)}, {{}, f64, false, {91.203125}});
  same([](A a) { return jnp::cross(a[0], a[1]); }, {R({2}), R({3}, f64, 1)}, {{3}, f64, false, {9, -29.5, 91.203125}});
  same([](A a) { return jnp::cross(a[0], a[1]); }, {R({2, 3}), R({2, 2}, f64, 1)},
       {{2, 3}, f64, false, {26.234375, 30.546875, 91.203125, 7.453125, 26.5, -38}});
  same([](A a) { return jnp::cross(a[0], a[1], -1, -1, -1, 0); }, {R({3, 2}), R({3, 2}, f64, 1)},
       {{3, 2}, f64, false, {-29.03125, 98.453125, -78.75, 86.046875, -1.046875, 70.46875}});
  same([](A a) { return jnp::cross(a[0], a[1], 0, 1, 0); }, {R({3, 2}), R({2, 3}, f64, 1)},
       {{3, 2}, f64, false, {-118.71875, 132.40625, -154.34375, 18.140625, 36.75, -23.0625}});
  same([](A a) { return jnp::cross(a[0], a[1]); }, {R({2, 1, 3}), R({2, 3}, f64, 1)},
       {{2, 2, 3},
        f64,
        false,
        {35.234375, 1.046875, 91.203125, -43.5625, 87.125, -43.5625, -13.453125, -38.390625, 51.84375, -92.25,
         -98.453125, 63.21875}});
  same([](A a) { return jnp::cross(a[0], a[1]); }, {R({3}, i8), R({3}, i32, 1)}, {{3}, i32, false, {-480, 152, 328}});
  // Two 2-vectors give the z component only, so axisc is not used; 3-vectors give a strong result (JAX's jnp.array).
  same([](A a) { return jnp::cross(a[0], a[1], -1, -1, 5); }, {R({2}), R({2}, f64, 1)}, {{}, f64, false, {91.203125}});
  same([](A a) { return jnp::cross(a[0], a[1]); }, {W(1.5, {2}), W(2.5, {2})}, {{}, f64, true, {0}});
  same([](A a) { return jnp::cross(a[0], a[1]); }, {W(1.5, {3}), W(2.5, {3})}, {{3}, f64, false, {0, 0, 0}});
  same_grad([](A a) { return jnp::cross(a[0], a[1]); }, {R({2, 3}), R({2, 3}, f64, 1)}, 0,
            {{2, 3}, f64, false, {13.453125, 38.390625, -51.84375, 13.453125, -26.90625, 13.453125}});
  same_grad([](A a) { return jnp::cross(a[0], a[1], -1, -1, 0); }, {R({2, 2}), R({2, 3}, f64, 1)}, 1,
            {{2, 3}, f64, false, {8.15625, -26.734375, -66.859375, -70, 25.15625, -89.6875}});
  // JAX: ValueError: Dimension must be either 2 or 3 for cross product
  refuses<ShapeError>([](A a) { return jnp::cross(a[0], a[1]); }, {R({4}), R({3}, f64, 1)}, "cross");
  // JAX: TypeError: mul got incompatible shapes for broadcasting: (4,), (5,).
  refuses<ShapeError>([](A a) { return jnp::cross(a[0], a[1]); }, {R({4, 3}), R({5, 3}, f64, 1)}, "cross");
  // JAX: TypeError: sub does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes of
  // integer, floating, complexfloating.
  refuses<TypeError>([](A a) { return jnp::cross(a[0], a[1]); }, {R({3}, b1), R({3}, b1, 1)}, "cross");
  // JAX: ValueError: axis 1 is out of bounds for array of dimension 1
  refuses<ShapeError>([](A a) { return jnp::cross(a[0], a[1], -1, -1, 1); }, {R({3}), R({3}, f64, 1)}, "cross");
  // JAX: ValueError: axis -1 is out of bounds for array of dimension 0
  refuses<ShapeError>([](A a) { return jnp::cross(a[0], a[1]); }, {Array(1.0), R({3})}, "cross");
}

TEST_CASE("jnp::diagflat, tri and vander build their matrices as JAX", "[jnp]") {
  same([](A a) { return jnp::diagflat(a[0], -1); }, {R({2, 2})},
       {{5, 5}, f64, false, {0, 0, 0, 0, 0, 7.375, 0, 0, 0, 0, 0, 2.25, 0, 0, 0, 0, 0, -2.875, 0, 0, 0, 0, 0, -8, 0}});
  same([](A a) { return jnp::diagflat(a[0], 2); }, {R({3}, i8)},
       {{5, 5}, i8, false, {0, 0, -9, 0, 0, 0, 0, 0, 32, 0, 0, 0, 0, 0, -28, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}});
  same([](A a) { return jnp::diagflat(a[0], 2); }, {R({}, f32)}, {{3, 3}, f32, false, {0, 0, 7.375, 0, 0, 0, 0, 0, 0}});
  same([](A a) { return jnp::diagflat(a[0], 2); }, {R({0})}, {{2, 2}, f64, false, {0, 0, 0, 0}});
  same([](A a) { return jnp::diagflat(a[0]); }, {Array(3.0)}, {{1, 1}, f64, false, {3}});
  same([](A a) { return jnp::diagflat(a[0], -1); }, {R({2}, b1)}, {{3, 3}, b1, false, {0, 0, 0, 1, 0, 0, 0, 0, 0}});
  same_grad([](A a) { return jnp::diagflat(a[0], -1); }, {R({2, 2})}, 0,
            {{2, 2}, f64, false, {-8.75, 10.25, 4.375, -1.5}});
  same([](A a) { return jnp::tri(3); }, {}, {{3, 3}, f32, false, {1, 0, 0, 1, 1, 0, 1, 1, 1}});
  same([](A a) { return jnp::tri(2, 4, 1, i32); }, {}, {{2, 4}, i32, false, {1, 1, 0, 0, 1, 1, 1, 0}});
  same([](A a) { return jnp::tri(4, 2, -1, b1); }, {}, {{4, 2}, b1, false, {0, 0, 1, 0, 1, 1, 1, 1}});
  same([](A a) { return jnp::tri(0, 3); }, {}, {{0, 3}, f32, false, {}});
  same([](A a) { return jnp::tri(2, 3, int64_t{1} << 62); }, {}, {{2, 3}, f32, false, {1, 1, 1, 1, 1, 1}});
  same([](A a) { return jnp::tri(2, 3, -(int64_t{1} << 62), f64); }, {}, {{2, 3}, f64, false, {0, 0, 0, 0, 0, 0}});
  // JAX: TypeError: iota shape must have every element be nonnegative, got (-1, -1).
  refuses<ShapeError>([](A a) { return jnp::tri(-1); }, {}, "tri", false);
  // JAX: TypeError: iota shape must have every element be nonnegative, got (2, -1).
  refuses<ShapeError>([](A a) { return jnp::tri(2, -1); }, {}, "tri", false);
  same([](A a) { return jnp::vander(a[0]); }, {R({3})},
       {{3, 3}, f64, false, {54.390625, 7.375, 1, 5.0625, 2.25, 1, 8.265625, -2.875, 1}});
  same([](A a) { return jnp::vander(a[0], 4, true); }, {I({1, 2, -3})},
       {{3, 4}, i32, false, {1, 1, 1, 1, 1, 2, 4, 8, 1, -3, 9, -27}});
  same([](A a) { return jnp::vander(a[0], 6); }, {I({1, 2, -3}, i8)},
       {{3, 6}, i8, false, {1, 1, 1, 1, 1, 1, 32, 16, 8, 4, 2, 1, 13, 81, -27, 9, -3, 1}});
  same([](A a) { return jnp::vander(a[0], 3); }, {I({3, 250}, u8)}, {{2, 3}, u8, false, {9, 3, 1, 36, 250, 1}});
  same([](A a) { return jnp::vander(a[0], 4); }, {jnp::astype(array<double>({1.5, -2.5}, {2}), f16)},
       {{2, 4}, f16, false, {3.375, 2.25, 1.5, 1, -15.625, 6.25, -2.5, 1}});
  same([](A a) { return jnp::vander(a[0], 0); }, {R({2})}, {{2, 0}, f64, false, {}});
  same([](A a) { return jnp::vander(a[0]); }, {R({0})}, {{0, 0}, f64, false, {}});
  same([](A a) { return jnp::vander(a[0]); }, {W(2.0, {2})}, {{2, 2}, f64, false, {2, 1, 2, 1}});
  // The derivative of x^0 at x = 0 is 0 * 0^-1, NaN, in JAX's lax.pow rule too.
  same_grad([](A a) { return jnp::vander(a[0]); }, {jnp::astype(array<double>({0.0, 2.0, -1.5}, {3}), f64)}, 0,
            {{3}, f64, false, {kNaN, 2.375, -27.125}});
  same_grad([](A a) { return jnp::vander(a[0], 4); }, {R({3})}, 0,
            {{3}, f64, false, {-1125.4375, -83.4296875, 34.25390625}});
  // JAX: TypeError: iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating,
  // complexfloating.
  refuses<TypeError>([](A a) { return jnp::vander(a[0]); }, {R({2}, b1)}, "vander");
  // JAX: ValueError: x must be a one-dimensional array
  refuses<ShapeError>([](A a) { return jnp::vander(a[0]); }, {R({2, 2})}, "vander");
  // JAX: ValueError: N must be nonnegative
  refuses<ShapeError>([](A a) { return jnp::vander(a[0], -1); }, {R({2})}, "vander");
}

TEST_CASE("jnp::tril_indices, triu_indices, diag_indices and indices give JAX's index arrays", "[jnp]") {
  same([](A a) { return std::vector<Array>(pv(jnp::tril_indices(3))); }, {},
       {{{6}, i64, false, {0, 1, 1, 2, 2, 2}}, {{6}, i64, false, {0, 0, 1, 0, 1, 2}}}, false);
  same([](A a) { return std::vector<Array>(pv(jnp::tril_indices(3, 1, 5))); }, {},
       {{{9}, i64, false, {0, 0, 1, 1, 1, 2, 2, 2, 2}}, {{9}, i64, false, {0, 1, 0, 1, 2, 0, 1, 2, 3}}}, false);
  same([](A a) { return std::vector<Array>(pv(jnp::tril_indices(4, -1, 3))); }, {},
       {{{6}, i64, false, {1, 2, 2, 3, 3, 3}}, {{6}, i64, false, {0, 0, 1, 0, 1, 2}}}, false);
  same([](A a) { return std::vector<Array>(pv(jnp::tril_indices(3, -5, 2))); }, {},
       {{{0}, i64, false, {}}, {{0}, i64, false, {}}}, false);
  same([](A a) { return std::vector<Array>(pv(jnp::triu_indices(4, 1, 2))); }, {},
       {{{1}, i64, false, {0}}, {{1}, i64, false, {1}}}, false);
  same([](A a) { return std::vector<Array>(pv(jnp::triu_indices(3, -1, 4))); }, {},
       {{{11}, i64, false, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2}}, {{11}, i64, false, {0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3}}},
       false);
  same([](A a) { return std::vector<Array>(pv(jnp::triu_indices(3, -(int64_t{1} << 62), 2))); }, {},
       {{{6}, i64, false, {0, 0, 1, 1, 2, 2}}, {{6}, i64, false, {0, 1, 0, 1, 0, 1}}}, false);
  same([](A a) { return std::vector<Array>(pv(jnp::tril_indices(0))); }, {},
       {{{0}, i64, false, {}}, {{0}, i64, false, {}}}, false);
  // JAX: TypeError: broadcast_in_dim shape must have every element be nonnegative, got (-1, -1).
  refuses<ShapeError>([](A a) { return jnp::triu_indices(-1).first; }, {}, "triu_indices", false);
  // JAX: TypeError: broadcast_in_dim shape must have every element be nonnegative, got (2, -1).
  refuses<ShapeError>([](A a) { return jnp::tril_indices(2, 0, -1).first; }, {}, "tril_indices", false);
  same([](A a) { return std::vector<Array>(jnp::diag_indices(3, 3)); }, {},
       {{{3}, i64, false, {0, 1, 2}}, {{3}, i64, false, {0, 1, 2}}, {{3}, i64, false, {0, 1, 2}}}, false);
  same([](A a) { return std::vector<Array>(jnp::diag_indices(2)); }, {},
       {{{2}, i64, false, {0, 1}}, {{2}, i64, false, {0, 1}}}, false);
  CHECK(jnp::diag_indices(3, 0).empty());
  // JAX: ValueError: n argument to diag_indices must be nonnegative, got -1
  refuses<ShapeError>([](A a) { return jnp::diag_indices(-1)[0]; }, {}, "diag_indices", false);
  // JAX: ValueError: ndim argument to diag_indices must be nonnegative, got -1
  refuses<ShapeError>([](A a) { return jnp::diag_indices(2, -1)[0]; }, {}, "diag_indices", false);
  // jitx's indices default to int32 (its creation default: README), JAX's to int64; with the dtype given they agree.
  same(
      [](A a) {
        return jnp::indices({2, 3}, i64);
      },
      {}, {{2, 2, 3}, i64, false, {0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2}}, false);
  CHECK(jnp::indices({2, 3}).dtype() == i32);
  same(
      [](A a) {
        return std::vector<Array>(jnp::indices({2, 3, 2}, i32, true));
      },
      {}, {{{2, 1, 1}, i32, false, {0, 1}}, {{1, 3, 1}, i32, false, {0, 1, 2}}, {{1, 1, 2}, i32, false, {0, 1}}},
      false);
  same([](A a) { return jnp::indices({2, 0}, f32); }, {}, {{2, 2, 0}, f32, false, {}}, false);
  same([](A a) { return jnp::indices({}, i64); }, {}, {{0}, i64, false, {}}, false);
  // JAX: TypeError: broadcast_in_dim shape must have every element be nonnegative, got (2, -1).
  refuses<ShapeError>([](A a) { return jnp::indices({2, -1}); }, {}, "indices", false);
  // JAX: TypeError: iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating,
  // complexfloating.
  refuses<TypeError>([](A a) { return jnp::indices({2}, b1); }, {}, "indices", false);
}

TEST_CASE("jnp::unravel_index and ravel_multi_index convert flat and multi-indices as JAX, with its modes and dtypes",
          "[jnp]") {
  // unravel_index clamps out-of-range indices (-1 is the last element) and keeps the indices' dtype.
  same(
      [](A a) {
        return std::vector<Array>(jnp::unravel_index(a[0], {3, 4}));
      },
      {I({0, 5, 11, 12, -1, -12, -13, 100, -100})},
      {{{9}, i32, false, {0, 1, 2, 2, 2, 0, 0, 2, 0}}, {{9}, i32, false, {0, 1, 3, 3, 3, 0, 0, 3, 0}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::unravel_index(a[0], {3, 4}));
      },
      {I({0, 5, 11, 12, 255}, u8)}, {{{5}, u8, false, {0, 1, 2, 2, 2}}, {{5}, u8, false, {0, 1, 3, 3, 3}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::unravel_index(a[0], {3, 4}));
      },
      {jnp::astype(array<double>({0.0, 5.5, -1.5, 13.0, 7.25}, {5}), f64)},
      {{{5}, f64, false, {0, 1, 2, 2, 1}}, {{5}, f64, false, {0, 1.5, 2.5, 3, 3.25}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::unravel_index(a[0], {3, 4}));
      },
      {Array(int64_t{7})}, {{{}, i64, true, {1}}, {{}, i64, true, {3}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::unravel_index(a[0], {2, 3, 4}));
      },
      {I({0, 23, 17, 24}, {2, 2}, i64)},
      {{{2, 2}, i64, false, {0, 1, 1, 1}}, {{2, 2}, i64, false, {0, 2, 1, 2}}, {{2, 2}, i64, false, {0, 3, 1, 3}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::unravel_index(a[0], {3, 0}));
      },
      {I({1, 2, -1}, i64)}, {{{3}, i64, false, {1, 1, 1}}, {{3}, i64, false, {0, 0, 0}}});
  same([](A a) { return std::vector<Array>(jnp::unravel_index(a[0], {300})); }, {I({-1, 5}, i8)},
       {{{2}, i8, false, {43, 5}}});
  CHECK(jnp::unravel_index(I({1, 2}), {}).empty());
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4});
      },
      {I({0, 2, 1}, i64), I({3, 0, 1}, i64)}, {{3}, i64, false, {3, 8, 5}}, false);
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, {{3}, i64, false, {3, 8, 7}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "wrap");
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, {{3}, i64, false, {3, 11, 4}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "ignore");
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, {{3}, i64, false, {3, 7, 8}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4, 2}, "wrap", "F");
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64), I({1, 0, 1}, i64)}, {{3}, i64, false, {21, 11, 13}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {I({0, 2, 1}, u8), I({3, -1, 4}, i8)}, {{3}, i16, false, {3, 8, 7}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "wrap");
      },
      {I({-1, -7}, i16), I({-5, 9}, i16)}, {{2}, i16, false, {11, 9}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip", "C", i16);
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, {{3}, i16, false, {3, 8, 7}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {I({0, 1}, {2, 1}), I({1, 2, 3})}, {{2, 3}, i32, false, {1, 2, 3, 5, 6, 7}});
  same(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {Array(int64_t{1}), Array(int64_t{2})}, {{}, i64, false, {6}});
  // mode 'raise' checks the values: under jit that needs concrete indices, as JAX's ConcretizationTypeError.
  // JAX: ValueError: invalid entry in coordinates array
  refuses<ShapeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4});
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, "ravel_multi_index", false);
  auto raise = [](std::vector<Array> a) { return jnp::ravel_multi_index(a, {3, 4}); };
  CHECK_THROWS_AS(jit(raise)(std::vector<Array>{I({0, 2}), I({3, 0})}), TracerError);
  // JAX: ValueError: invalid order='K'. Expected 'C' or 'F'
  refuses<TypeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip", "K");
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, "ravel_multi_index");
  // JAX: ValueError: invalid mode='bogus'. Expected 'raise', 'wrap', 'clip', or 'ignore'.
  refuses<TypeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "bogus");
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, "ravel_multi_index");
  // JAX: AssertionError: len(multi_index)=1 != len(dims)=2
  refuses<ShapeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {I({0, 2, 1}, i64)}, "ravel_multi_index");
  // JAX: ValueError: dtype=dtype('float64') is not an integer type.
  refuses<TypeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {I({0, 2, 1}, i64), R({3})}, "ravel_multi_index");
  // JAX: ValueError: jnp.ravel_multi_index: dtype=dtype('int8') not large enough to hold flattened index for dims=(30,
  // 40). Use the dtype argument to pass a suitable dtype (e.g. dtype=np.min_scalar_type(prod(d
  refuses<TypeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {30, 40}, "clip");
      },
      {I({0, 2, 1}, i8), I({3, -1, 4}, i8)}, "ravel_multi_index");
  // JAX: ValueError: dtype=dtype('float32') is not an integer type.
  refuses<TypeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip", "C", f32);
      },
      {I({0, 2, 1}, i64), I({3, -1, 4}, i64)}, "ravel_multi_index");
  // JAX: TypeError: add got incompatible shapes for broadcasting: (2,), (3,).
  refuses<ShapeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {I({0, 1}), I({1, 2, 3})}, "ravel_multi_index");
  // JAX: ValueError: dtype=dtype('float64') is not an integer type.
  refuses<TypeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4}, "clip");
      },
      {I({1}, u64), I({1}, i64)}, "ravel_multi_index");
  // JAX: TypeError: only int indices permitted
  refuses<TypeError>(
      [](A a) {
        return jnp::ravel_multi_index(a, {3, 4});
      },
      {R({1}, b1), I({1})}, "ravel_multi_index", false);
}
}  // namespace jitx::testing::shape_pack
