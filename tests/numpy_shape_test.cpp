// jnp's shape functions (numpy_shape.h: moveaxis, the stacks and splits, atleast_*d, diagonal, trace, meshgrid,
// rot90 and the flips, append, diff, delete_, insert) against JAX 0.10.2 (x64): values, dtypes and weak types
// written in from JAX, each checked eagerly and under jit, gradients against jax.grad, and what JAX refuses refused
// with the op's name. The JAX side of each line is the same call on the same inputs (numpy_shape_test_util.h's R,
// I and W).
#include "numpy_shape_test_util.h"

// Inside the helpers' namespace rather than under a using-directive, so that a unity build (tools/sanitize.sh)
// can put these tests next to other test files without their names meeting.
namespace jitx::testing::shape_pack {

TEST_CASE("jnp::moveaxis moves one axis or several to their destinations, as JAX", "[jnp]") {
  same([](A a) { return jnp::moveaxis(a[0], 0, -1); }, {R({2, 3, 4})},
       {{3, 4, 2}, f64, false, {7.375, -4.375, 2.25,   -9.5, -2.875, 10.25, -8, 5.125, 11.75, 0,      6.625, -5.125,
                                1.5,   -10.25, -3.625, 9.5,  -8.75,  4.375, 11, -0.75, 5.875, -5.875, 0.75,  -11}});
  same(
      [](A a) {
        return jnp::moveaxis(a[0], {0, 2}, {-1, 0});
      },
      {R({2, 3, 4})},
      {{4, 3, 2}, f64, false, {7.375,  -4.375, 11.75, 0,      -8.75, 4.375,  2.25, -9.5,  6.625,  -5.125, 11,   -0.75,
                               -2.875, 10.25,  1.5,   -10.25, 5.875, -5.875, -8,   5.125, -3.625, 9.5,    0.75, -11}});
  same(
      [](A a) {
        return jnp::moveaxis(a[0], {3, 0, 1}, {0, 1, 3});
      },
      {R({2, 1, 2, 2}, i32)}, {{2, 2, 2, 1}, i32, false, {-9, -28, -47, 35, 32, 13, -6, -25}});
  // A weak array stays weak; a 0-d array has no axes to move.
  same([](A a) { return jnp::moveaxis(a[0], 0, 1); }, {W(1.5, {2, 1})}, {{1, 2}, f64, true, {1.5, 1.5}});
  same([](A a) { return jnp::moveaxis(a[0], jnp::Axes{}, jnp::Axes{}); }, {R({}, i8)}, {{}, i8, false, {-9}});
  same_grad(
      [](A a) {
        return jnp::moveaxis(a[0], {0, 2}, {-1, 0});
      },
      {R({2, 3, 4})}, 0,
      {{2, 3, 4}, f64, false, {-8,    11,    5.125, -0.75,  6.625, 0.75,   -5.125, -11,  -3.625, -9.5,  9.5,   3.625,
                               11.75, 5.875, 0,     -5.875, 1.5,   -4.375, -10.25, 8.75, -8.75,  10.25, 4.375, -1.5}});
  // JAX: TypeError: transpose permutation isn't a permutation of operand dimensions, got permutation (1, 0, 0, 2) for
  // operand shape (2, 3, 4).
  refuses<ShapeError>([](A a) { return jnp::moveaxis(a[0], {0, 0}, {1, 2}); }, {R({2, 3, 4})}, "moveaxis");
  // JAX: ValueError: Inconsistent number of elements: 2 vs 1
  refuses<ShapeError>([](A a) { return jnp::moveaxis(a[0], {0, 1}, jnp::Axes{2}); }, {R({2, 3, 4})}, "moveaxis");
  // JAX: ValueError: axis 3 is out of bounds for array of dimension 3
  refuses<ShapeError>([](A a) { return jnp::moveaxis(a[0], 3, 0); }, {R({2, 3, 4})}, "moveaxis");
  // JAX accepts a repeated destination and puts the axes elsewhere (moveaxis(x, (0, 1), (2, 2)) has shape
  // (4, 2, 3)); NumPy refuses it, and so does jitx (FINDINGS.md).
  refuses<ShapeError>([](A a) { return jnp::moveaxis(a[0], {0, 1}, {2, 2}); }, {R({2, 3, 4})}, "moveaxis");
}

TEST_CASE("jnp::hstack, vstack, dstack and column_stack promote, take a dtype, and stack 0-d and 1-d arrays as JAX",
          "[jnp]") {
  same([](A a) { return jnp::hstack(a); }, {R({2, 2}), R({2, 1}, i32, 1)},
       {{2, 3}, f64, false, {7.375, 2.25, -17, -2.875, -8, 24}});
  same([](A a) { return jnp::hstack(a); }, {R({3}, f32), R({2}, f32, 1), Array(1.5)},
       {{6}, f32, false, {7.375, 2.25, -2.875, -10.625, 9.125, 1.5}});
  same([](A a) { return jnp::hstack(a, i32); }, {R({2}), R({3}, f64, 2)}, {{5}, i32, false, {7, 2, -3, -8, 10}});
  same([](A a) { return jnp::hstack(a); }, {Array(1.5), Array(2.5)}, {{2}, f64, true, {1.5, 2.5}});
  same([](A a) { return jnp::vstack(a); }, {R({3}), R({2, 3}, f64, 1)},
       {{3, 3}, f64, false, {7.375, 2.25, -2.875, -10.625, 9.125, 4, -1.125, -6.25, -11.375}});
  same([](A a) { return jnp::vstack(a); }, {R({3}, i8), R({3}, u8, 1)},
       {{2, 3}, i16, false, {-9, 32, -28, 17, 24, 36}});
  same([](A a) { return jnp::vstack(a, f32); }, {R({3}), R({1, 3}, f64, 1)},
       {{2, 3}, f32, false, {7.375, 2.25, -2.875, -10.625, 9.125, 4}});
  same([](A a) { return jnp::dstack(a); }, {R({3}), R({3}, f64, 1)},
       {{1, 3, 2}, f64, false, {7.375, -10.625, 2.25, 9.125, -2.875, 4}});
  same([](A a) { return jnp::dstack(a); }, {R({2, 1}), R({2, 1, 2}, f64, 1)},
       {{2, 1, 3}, f64, false, {7.375, -10.625, 9.125, 2.25, 4, -1.125}});
  same([](A a) { return jnp::dstack(a); }, {Array(1.5), Array(2.5)}, {{1, 1, 2}, f64, true, {1.5, 2.5}});
  same([](A a) { return jnp::column_stack(a); }, {R({3}), R({3, 2}, f64, 1), R({3}, i32, 2)},
       {{3, 4}, f64, false, {7.375, -10.625, 9.125, -25, 2.25, 4, -1.125, 16, -2.875, -6.25, -11.375, -44}});
  same([](A a) { return jnp::column_stack(a); }, {Array(1.5), Array(2.5)}, {{1, 2}, f64, true, {1.5, 2.5}});
  same_grad([](A a) { return jnp::hstack(a); }, {R({2, 3}), R({2, 2}, f64, 1)}, 1,
            {{2, 2}, f64, false, {1.5, -3.625, 0.75, -4.375}});
  same_grad([](A a) { return jnp::column_stack(a); }, {R({3}), R({3, 2}, f64, 1)}, 0, {{3}, f64, false, {-8, 1.5, 11}});
  // JAX: TypeError: Cannot concatenate arrays with shapes that differ in dimensions other than the one being
  // concatenated: concatenating along dimension 1 for shapes (2, 3), (3, 3).
  refuses<ShapeError>([](A a) { return jnp::hstack(a); }, {R({2, 3}), R({3, 3})}, "hstack");
  // JAX: TypeError: Cannot concatenate arrays with shapes that differ in dimensions other than the one being
  // concatenated: concatenating along dimension 0 for shapes (1, 3), (1, 2).
  refuses<ShapeError>([](A a) { return jnp::vstack(a); }, {R({3}), R({2})}, "vstack");
  // JAX: TypeError: Cannot concatenate arrays with shapes that differ in dimensions other than the one being
  // concatenated: concatenating along dimension 2 for shapes (1, 3, 1), (1, 2, 1).
  refuses<ShapeError>([](A a) { return jnp::dstack(a); }, {R({3}), R({2})}, "dstack");
  // JAX: TypeError: Cannot concatenate arrays with shapes that differ in dimensions other than the one being
  // concatenated: concatenating along dimension 1 for shapes (3, 1), (2, 1).
  refuses<ShapeError>([](A a) { return jnp::column_stack(a); }, {R({3}), R({2})}, "column_stack");
  // JAX: IndexError: list index out of range
  refuses<ShapeError>([](A a) { return jnp::hstack(a); }, {}, "hstack", false);
  // JAX: ValueError: Need at least one array to concatenate.
  refuses<ShapeError>([](A a) { return jnp::column_stack(a); }, {}, "column_stack", false);
}

TEST_CASE("jnp::atleast_1d, atleast_2d and atleast_3d add axes as JAX (and NumPy), keeping weak types", "[jnp]") {
  same([](A a) { return jnp::atleast_1d(a[0]); }, {Array(1.5)}, {{1}, f64, true, {1.5}});
  same([](A a) { return jnp::atleast_1d(a[0]); }, {R({2, 1})}, {{2, 1}, f64, false, {7.375, 2.25}});
  same([](A a) { return jnp::atleast_2d(a[0]); }, {R({}, i32)}, {{1, 1}, i32, false, {-9}});
  same([](A a) { return jnp::atleast_2d(a[0]); }, {R({3})}, {{1, 3}, f64, false, {7.375, 2.25, -2.875}});
  same([](A a) { return jnp::atleast_3d(a[0]); }, {Array(1.5)}, {{1, 1, 1}, f64, true, {1.5}});
  same([](A a) { return jnp::atleast_3d(a[0]); }, {R({3})}, {{1, 3, 1}, f64, false, {7.375, 2.25, -2.875}});
  same([](A a) { return jnp::atleast_3d(a[0]); }, {R({2, 3})},
       {{2, 3, 1}, f64, false, {7.375, 2.25, -2.875, -8, 11.75, 6.625}});
  same([](A a) { return jnp::atleast_3d(a[0]); }, {R({1, 2, 1, 2}, b1)}, {{1, 2, 1, 2}, b1, false, {1, 0, 0, 1}});
  same([](A a) { return std::vector<Array>(jnp::atleast_2d(a)); }, {R({3}), Array(2.5), R({2, 2})},
       {{{1, 3}, f64, false, {7.375, 2.25, -2.875}},
        {{1, 1}, f64, true, {2.5}},
        {{2, 2}, f64, false, {7.375, 2.25, -2.875, -8}}});
  same_grad([](A a) { return jnp::atleast_3d(a[0]); }, {R({2})}, 0, {{2}, f64, false, {-8, 11.75}});
}

TEST_CASE("jnp::split, array_split, hsplit, vsplit and dsplit cut at indices or into sections, as JAX", "[jnp]") {
  same([](A a) { return std::vector<Array>(jnp::split(a[0], 3)); }, {R({6, 2})},
       {{{2, 2}, f64, false, {7.375, 2.25, -2.875, -8}},
        {{2, 2}, f64, false, {11.75, 6.625, 1.5, -3.625}},
        {{2, 2}, f64, false, {-8.75, 11, 5.875, 0.75}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::split(a[0], {2, 5}, 1));
      },
      {R({2, 7})},
      {{{2, 2}, f64, false, {7.375, 2.25, -3.625, -8.75}},
       {{2, 3}, f64, false, {-2.875, -8, 11.75, 11, 5.875, 0.75}},
       {{2, 2}, f64, false, {6.625, 1.5, -4.375, -9.5}}});
  // A braced list is a list of indices, even of one element (JAX's [2]), and may be empty or repeat an index.
  same([](A a) { return std::vector<Array>(jnp::split(a[0], {2})); }, {R({5})},
       {{{2}, f64, false, {7.375, 2.25}}, {{3}, f64, false, {-2.875, -8, 11.75}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::split(a[0], {0, 0, 5}));
      },
      {R({5})},
      {{{0}, f64, false, {}},
       {{0}, f64, false, {}},
       {{5}, f64, false, {7.375, 2.25, -2.875, -8, 11.75}},
       {{0}, f64, false, {}}});
  same([](A a) { return std::vector<Array>(jnp::split(a[0], std::vector<int64_t>{})); }, {R({5})},
       {{{5}, f64, false, {7.375, 2.25, -2.875, -8, 11.75}}});
  same([](A a) { return std::vector<Array>(jnp::split(a[0], 2, -1)); }, {R({2, 4}, i8)},
       {{{2, 2}, i8, false, {-9, 32, -47, -6}}, {{2, 2}, i8, false, {-28, 13, 35, -25}}});
  same([](A a) { return std::vector<Array>(jnp::array_split(a[0], 3)); }, {R({5})},
       {{{2}, f64, false, {7.375, 2.25}}, {{2}, f64, false, {-2.875, -8}}, {{1}, f64, false, {11.75}}});
  same([](A a) { return std::vector<Array>(jnp::array_split(a[0], 7)); }, {R({5, 1})},
       {{{1, 1}, f64, false, {7.375}},
        {{1, 1}, f64, false, {2.25}},
        {{1, 1}, f64, false, {-2.875}},
        {{1, 1}, f64, false, {-8}},
        {{1, 1}, f64, false, {11.75}},
        {{0, 1}, f64, false, {}},
        {{0, 1}, f64, false, {}}});
  same([](A a) { return std::vector<Array>(jnp::array_split(a[0], 3)); }, {R({0})},
       {{{0}, f64, false, {}}, {{0}, f64, false, {}}, {{0}, f64, false, {}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::array_split(a[0], {1, 6}, 1));
      },
      {R({2, 7})},
      {{{2, 1}, f64, false, {7.375, -3.625}},
       {{2, 5}, f64, false, {2.25, -2.875, -8, 11.75, 6.625, -8.75, 11, 5.875, 0.75, -4.375}},
       {{2, 1}, f64, false, {1.5, -9.5}}});
  same([](A a) { return std::vector<Array>(jnp::hsplit(a[0], 2)); }, {R({2, 4})},
       {{{2, 2}, f64, false, {7.375, 2.25, 11.75, 6.625}}, {{2, 2}, f64, false, {-2.875, -8, 1.5, -3.625}}});
  same([](A a) { return std::vector<Array>(jnp::hsplit(a[0], {1})); }, {R({3})},
       {{{1}, f64, false, {7.375}}, {{2}, f64, false, {2.25, -2.875}}});
  same(
      [](A a) {
        return std::vector<Array>(jnp::vsplit(a[0], {1, 3}));
      },
      {R({4, 2})},
      {{{1, 2}, f64, false, {7.375, 2.25}},
       {{2, 2}, f64, false, {-2.875, -8, 11.75, 6.625}},
       {{1, 2}, f64, false, {1.5, -3.625}}});
  // JAX's vsplit takes a 1-D array (NumPy's needs 2-D).
  same([](A a) { return std::vector<Array>(jnp::vsplit(a[0], 2)); }, {R({4})},
       {{{2}, f64, false, {7.375, 2.25}}, {{2}, f64, false, {-2.875, -8}}});
  same([](A a) { return std::vector<Array>(jnp::dsplit(a[0], 2)); }, {R({1, 2, 4})},
       {{{1, 2, 2}, f64, false, {7.375, 2.25, 11.75, 6.625}}, {{1, 2, 2}, f64, false, {-2.875, -8, 1.5, -3.625}}});
  same_grad(
      [](A a) { return jnp::array_split(a[0], 3)[1] * 2.0 + jnp::slice_axis(jnp::array_split(a[0], 3)[0], 0, 0, 2); },
      {R({7, 2})}, 0, {{7, 2}, f64, false, {-8, 11.75, 6.625, 1.5, 0, 0, -16, 23.5, 13.25, 3, 0, 0, 0, 0}});
  // JAX: ValueError: array split does not result in an equal division: rest is 1
  refuses<ShapeError>([](A a) { return jnp::split(a[0], 2)[0]; }, {R({5})}, "split");
  // JAX: ValueError: Sizes passed to split must be nonnegative, got [np.int64(3), np.int64(-2), np.int64(4)]
  refuses<ShapeError>([](A a) { return jnp::split(a[0], {3, 1})[0]; }, {R({5})}, "split");
  // JAX: ValueError: Sizes passed to split must be nonnegative, got [np.int64(-2), np.int64(7)]
  refuses<ShapeError>([](A a) { return jnp::split(a[0], {-2})[0]; }, {R({5})}, "split");
  // JAX: ValueError: Sizes passed to split must be nonnegative, got [np.int64(2), np.int64(5), np.int64(-2)]
  refuses<ShapeError>([](A a) { return jnp::split(a[0], {2, 7})[0]; }, {R({5})}, "split");
  // JAX: ZeroDivisionError: integer division or modulo by zero
  refuses<ShapeError>([](A a) { return jnp::split(a[0], 0)[0]; }, {R({5})}, "split");
  // JAX: ValueError: Sum of sizes 0.0 must be equal to dimension 0 of the operand shape [5]
  refuses<ShapeError>([](A a) { return jnp::array_split(a[0], -1)[0]; }, {R({5})}, "array_split");
  // JAX: IndexError: tuple index out of range
  refuses<ShapeError>([](A a) { return jnp::split(a[0], 1)[0]; }, {R({})}, "split");
  // JAX: IndexError: tuple index out of range
  refuses<ShapeError>([](A a) { return jnp::split(a[0], 2, 2)[0]; }, {R({2, 4})}, "split");
  // JAX: IndexError: tuple index out of range
  refuses<ShapeError>([](A a) { return jnp::hsplit(a[0], 1)[0]; }, {R({})}, "hsplit");
  // JAX: IndexError: tuple index out of range
  refuses<ShapeError>([](A a) { return jnp::dsplit(a[0], 2)[0]; }, {R({2, 4})}, "dsplit");
}

TEST_CASE("jnp::diagonal takes any offset and pair of axes, as JAX (empty past the edge, a strong result)", "[jnp]") {
  same([](A a) { return jnp::diagonal(a[0]); }, {R({3, 4})}, {{3}, f64, false, {7.375, 6.625, 5.875}});
  same([](A a) { return jnp::diagonal(a[0], 1); }, {R({3, 4})}, {{3}, f64, false, {2.25, 1.5, 0.75}});
  same([](A a) { return jnp::diagonal(a[0], -2); }, {R({3, 4})}, {{1}, f64, false, {-8.75}});
  same([](A a) { return jnp::diagonal(a[0], 1, 2, 0); }, {R({2, 3, 4})}, {{3, 1}, f64, false, {-4.375, 0, 4.375}});
  same([](A a) { return jnp::diagonal(a[0], -1, -1, 0); }, {R({2, 3, 4})},
       {{3, 2}, f64, false, {2.25, 10.25, 6.625, -10.25, 11, -5.875}});
  same([](A a) { return jnp::diagonal(a[0], 3); }, {R({4, 3})}, {{0}, f64, false, {}});
  same([](A a) { return jnp::diagonal(a[0], -4); }, {R({4, 3})}, {{0}, f64, false, {}});
  same([](A a) { return jnp::diagonal(a[0], int64_t{1} << 62); }, {R({2, 3})}, {{0}, f64, false, {}});
  same([](A a) { return jnp::diagonal(a[0], 1); }, {R({3, 3}, b1)}, {{2}, b1, false, {0, 0}});
  same([](A a) { return jnp::diagonal(a[0], 0, 1, 2); }, {R({2, 3, 3}, i8)},
       {{2, 3}, i8, false, {-9, -47, 16, -44, 19, -19}});
  same([](A a) { return jnp::diagonal(a[0]); }, {W(1.5, {2, 2})}, {{2}, f64, false, {1.5, 1.5}});
  same([](A a) { return jnp::diagonal(a[0]); }, {R({0, 3})}, {{0}, f64, false, {}});
  same_grad([](A a) { return jnp::diagonal(a[0], 1, 2, 0); }, {R({2, 3, 4})}, 0,
            {{2, 3, 4}, f64, false, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -8, 0, 0, 0, 11.75, 0, 0, 0, 6.625, 0, 0, 0}});
  same_grad([](A a) { return jnp::diagonal(a[0], -1); }, {R({4, 3})}, 0,
            {{4, 3}, f64, false, {0, 0, 0, -8, 0, 0, 0, 11.75, 0, 0, 0, 6.625}});
  // JAX: ValueError: diagonal requires an array of at least two dimensions.
  refuses<ShapeError>([](A a) { return jnp::diagonal(a[0]); }, {R({3})}, "diagonal");
  // JAX: TypeError: transpose permutation isn't a permutation of operand dimensions, got permutation (0, 1, 1, 2) for
  // operand shape (2, 3, 4).
  refuses<ShapeError>([](A a) { return jnp::diagonal(a[0], 0, 1, -2); }, {R({2, 3, 4})}, "diagonal");
  // JAX: ValueError: axis 3 is out of bounds for array of dimension 3
  refuses<ShapeError>([](A a) { return jnp::diagonal(a[0], 0, 0, 3); }, {R({2, 3, 4})}, "diagonal");
  CHECK_THROWS_AS(jnp::diagonal(Array()), TypeError);
}

TEST_CASE("jnp::trace sums a diagonal in jnp.sum's dtype, or in the one asked for, as JAX", "[jnp]") {
  same([](A a) { return jnp::trace(a[0]); }, {R({3, 4})}, {{}, f64, false, {19.875}});
  same([](A a) { return jnp::trace(a[0], 1, 0, 2); }, {R({2, 3, 4})}, {{3}, f64, false, {12.5, -3.625, 5.125}});
  same([](A a) { return jnp::trace(a[0], -1, 2, 1); }, {R({2, 3, 4})}, {{2}, f64, false, {4.5, -30.75}});
  // Narrow integers and bools widen to int64 (unsigned: uint64), float16 stays float16, a weak input is strong.
  same([](A a) { return jnp::trace(a[0]); }, {R({3, 3}, i32)}, {{}, i64, false, {-40}});
  same([](A a) { return jnp::trace(a[0]); }, {R({3, 3}, i8)}, {{}, i64, false, {-40}});
  same([](A a) { return jnp::trace(a[0]); }, {R({3, 3}, u8)}, {{}, u64, false, {72}});
  same([](A a) { return jnp::trace(a[0]); }, {R({3, 3}, b1)}, {{}, i64, false, {1}});
  same([](A a) { return jnp::trace(a[0]); }, {R({3, 3}, f16)}, {{}, f16, false, {10.375}});
  same([](A a) { return jnp::trace(a[0]); }, {W(1.5, {2, 2})}, {{}, f64, false, {3}});
  same([](A a) { return jnp::trace(a[0], 0, 0, 1, i32); }, {R({3, 3}, i32)}, {{}, i32, false, {-40}});
  same([](A a) { return jnp::trace(a[0], 0, 0, 1, f32); }, {R({3, 3})}, {{}, f32, false, {10.375}});
  same([](A a) { return jnp::trace(a[0], 0, 0, 1, i8); }, {R({3, 3})}, {{}, i8, false, {10}});
  same([](A a) { return jnp::trace(a[0]); }, {R({0, 3})}, {{}, f64, false, {0}});
  same([](A a) { return jnp::trace(a[0], 5); }, {R({3, 3})}, {{}, f64, false, {0}});
  same_grad(
      [](A a) { return jnp::trace(a[0], -1, 2, 1); }, {R({2, 3, 4})}, 0,
      {{2, 3, 4}, f64, false, {0, -8, 0, 0, 0, 0, -8, 0, 0, 0, 0, -8, 0, 11.75, 0, 0, 0, 0, 11.75, 0, 0, 0, 0, 11.75}});
  // JAX: ValueError: axis 1 is out of bounds for array of dimension 1
  refuses<ShapeError>([](A a) { return jnp::trace(a[0]); }, {R({3})}, "trace");
  // JAX: ValueError: axis1 and axis2 can not be same. axis1=1 and axis2=1
  refuses<ShapeError>([](A a) { return jnp::trace(a[0], 0, 1, 1); }, {R({2, 3, 4})}, "trace");
}

TEST_CASE("jnp::meshgrid makes xy and ij grids, dense or sparse, of 1-D arrays only, as JAX", "[jnp]") {
  same([](A a) { return std::vector<Array>(jnp::meshgrid(a)); }, {I({0, 1, 2}), R({2}), R({4}, i8, 1)},
       {{{2, 3, 4}, i32, false, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}},
        {{2, 3, 4}, f64, false, {7.375, 7.375, 7.375, 7.375, 7.375, 7.375, 7.375, 7.375, 7.375, 7.375, 7.375, 7.375,
                                 2.25,  2.25,  2.25,  2.25,  2.25,  2.25,  2.25,  2.25,  2.25,  2.25,  2.25,  2.25}},
        {{2, 3, 4}, i8, false, {-17, 24, -36, 5, -17, 24, -36, 5, -17, 24, -36, 5,
                                -17, 24, -36, 5, -17, 24, -36, 5, -17, 24, -36, 5}}});
  same([](A a) { return std::vector<Array>(jnp::meshgrid(a, false, "ij")); }, {I({0, 1, 2}), R({2})},
       {{{3, 2}, i32, false, {0, 0, 1, 1, 2, 2}}, {{3, 2}, f64, false, {7.375, 2.25, 7.375, 2.25, 7.375, 2.25}}});
  same([](A a) { return std::vector<Array>(jnp::meshgrid(a, true)); }, {I({0, 1, 2}), R({2}), R({4}, i8, 1)},
       {{{1, 3, 1}, i32, false, {0, 1, 2}},
        {{2, 1, 1}, f64, false, {7.375, 2.25}},
        {{1, 1, 4}, i8, false, {-17, 24, -36, 5}}});
  same([](A a) { return std::vector<Array>(jnp::meshgrid(a, true, "ij")); }, {I({0, 1, 2}), R({2})},
       {{{3, 1}, i32, false, {0, 1, 2}}, {{1, 2}, f64, false, {7.375, 2.25}}});
  same([](A a) { return std::vector<Array>(jnp::meshgrid(a)); }, {R({3})}, {{{3}, f64, false, {7.375, 2.25, -2.875}}});
  same([](A a) { return std::vector<Array>(jnp::meshgrid(a)); }, {W(1.5, {2}), R({0})},
       {{{0, 2}, f64, true, {}}, {{0, 2}, f64, false, {}}});
  CHECK(jnp::meshgrid({}).empty());
  same_grad([](A a) { return jnp::meshgrid(a)[0] * jnp::meshgrid(a)[1]; }, {R({3}), R({2}, f64, 1)}, 0,
            {{3}, f64, false, {98.6875, -157.921875, -150.234375}});
  // JAX: ValueError: Arguments to jax.numpy.meshgrid must be 1D, got shapes [(2, 2)]
  refuses<ShapeError>([](A a) { return jnp::meshgrid(a)[0]; }, {R({2, 2})}, "meshgrid");
  // JAX: ValueError: Arguments to jax.numpy.meshgrid must be 1D, got shapes [(2,), ()]
  refuses<ShapeError>([](A a) { return jnp::meshgrid(a)[0]; }, {R({2}), R({})}, "meshgrid");
  // JAX: ValueError: Valid values for indexing are 'xy' and 'ij', got yx
  refuses<TypeError>([](A a) { return jnp::meshgrid(a, false, "yx")[0]; }, {R({2})}, "meshgrid");
}

TEST_CASE("jnp::rot90, fliplr and flipud rotate and flip as JAX, any k, any pair of axes", "[jnp]") {
  same([](A a) { return jnp::rot90(a[0]); }, {R({3, 4})},
       {{4, 3}, f64, false, {-8, -3.625, 0.75, -2.875, 1.5, 5.875, 2.25, 6.625, 11, 7.375, 11.75, -8.75}});
  same([](A a) { return jnp::rot90(a[0], 2); }, {R({3, 4})},
       {{3, 4}, f64, false, {0.75, 5.875, 11, -8.75, -3.625, 1.5, 6.625, 11.75, -8, -2.875, 2.25, 7.375}});
  same([](A a) { return jnp::rot90(a[0], -1); }, {R({3, 4})},
       {{4, 3}, f64, false, {-8.75, 11.75, 7.375, 11, 6.625, 2.25, 5.875, 1.5, -2.875, 0.75, -3.625, -8}});
  same([](A a) { return jnp::rot90(a[0], 7); }, {R({2, 3}, i32)}, {{3, 2}, i32, false, {13, -9, -47, 32, -6, -28}});
  same([](A a) { return jnp::rot90(a[0], -4); }, {R({2, 2})}, {{2, 2}, f64, false, {7.375, 2.25, -2.875, -8}});
  same(
      [](A a) {
        return jnp::rot90(a[0], 1, {1, 0});
      },
      {R({2, 3})}, {{3, 2}, f64, false, {-8, 7.375, 11.75, 2.25, 6.625, -2.875}});
  same(
      [](A a) {
        return jnp::rot90(a[0], 1, {0, 2});
      },
      {R({2, 1, 3})}, {{3, 1, 2}, f64, false, {-2.875, 6.625, 2.25, 11.75, 7.375, -8}});
  same(
      [](A a) {
        return jnp::rot90(a[0], 3, {-1, 1});
      },
      {R({1, 2, 3})}, {{1, 3, 2}, f64, false, {-2.875, 6.625, 2.25, 11.75, 7.375, -8}});
  same([](A a) { return jnp::rot90(a[0]); }, {W(1.5, {2, 1})}, {{1, 2}, f64, true, {1.5, 1.5}});
  same([](A a) { return jnp::fliplr(a[0]); }, {R({2, 3, 2})},
       {{2, 3, 2}, f64, false, {11.75, 6.625, -2.875, -8, 7.375, 2.25, 5.875, 0.75, -8.75, 11, 1.5, -3.625}});
  same([](A a) { return jnp::flipud(a[0]); }, {R({3, 2}, u8)}, {{3, 2}, u8, false, {47, 6, 28, 13, 9, 32}});
  same([](A a) { return jnp::flipud(a[0]); }, {W(1.5, {2})}, {{2}, f64, true, {1.5, 1.5}});
  same_grad([](A a) { return jnp::rot90(a[0], 3); }, {R({3, 4})}, 0,
            {{3, 4}, f64, false, {6.625, -8.75, 0.75, 10.25, 11.75, -3.625, 5.875, -9.5, -8, 1.5, 11, -4.375}});
  same_grad([](A a) { return jnp::fliplr(a[0]); }, {R({2, 3})}, 0,
            {{2, 3}, f64, false, {6.625, 11.75, -8, -8.75, -3.625, 1.5}});
  // JAX: ValueError: rot90 requires its first argument to have ndim at least two, but got first argument of shape (3,),
  // which has ndim 1
  refuses<ShapeError>([](A a) { return jnp::rot90(a[0]); }, {R({3})}, "rot90");
  // JAX: ValueError: Axes must be different
  refuses<ShapeError>([](A a) { return jnp::rot90(a[0], 1, {1, -1}); }, {R({3, 4})}, "rot90");
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>([](A a) { return jnp::rot90(a[0], 1, {0, 2}); }, {R({3, 4})}, "rot90");
  // JAX: ValueError: axis 1 is out of bounds for array of dimension 1
  refuses<ShapeError>([](A a) { return jnp::fliplr(a[0]); }, {R({3})}, "fliplr");
  // JAX: ValueError: axis 0 is out of bounds for array of dimension 0
  refuses<ShapeError>([](A a) { return jnp::flipud(a[0]); }, {R({})}, "flipud");
}

TEST_CASE("jnp::append flattens without an axis and concatenates along one, promoting as JAX", "[jnp]") {
  same([](A a) { return jnp::append(a[0], a[1]); }, {R({2, 2}), Array(1.5)},
       {{5}, f64, false, {7.375, 2.25, -2.875, -8, 1.5}});
  same([](A a) { return jnp::append(a[0], a[1]); }, {R({2, 2}, i8), Array(int64_t{1})},
       {{5}, i8, false, {-9, 32, -28, 13, 1}});
  same([](A a) { return jnp::append(a[0], a[1], 0); }, {R({2, 3}), R({1, 3}, i32, 1)},
       {{3, 3}, f64, false, {7.375, 2.25, -2.875, -8, 11.75, 6.625, -17, 24, -36}});
  same([](A a) { return jnp::append(a[0], a[1], -1); }, {R({2, 1}), R({2, 2}, f32, 1)},
       {{2, 3}, f64, false, {7.375, -10.625, 9.125, 2.25, 4, -1.125}});
  same([](A a) { return jnp::append(a[0], a[1]); }, {Array(1.5), Array(2.5)}, {{2}, f64, true, {1.5, 2.5}});
  same_grad([](A a) { return jnp::append(a[0], a[1]); }, {R({2, 2}), R({2}, f64, 1)}, 1,
            {{2}, f64, false, {-3.625, -8.75}});
  // JAX: TypeError: Cannot concatenate arrays with different numbers of dimensions: got (3, 4), (4,).
  refuses<ShapeError>([](A a) { return jnp::append(a[0], a[1], 0); }, {R({3, 4}), R({4})}, "append");
  // JAX: ValueError: Zero-dimensional arrays cannot be concatenated.
  refuses<ShapeError>([](A a) { return jnp::append(a[0], a[1], 0); }, {R({}), R({})}, "append");
}

TEST_CASE("jnp::diff takes n, axis, prepend and append as JAX (not_equal for bools, wrapping for unsigned ints)",
          "[jnp]") {
  same([](A a) { return jnp::diff(a[0]); }, {R({3, 4})},
       {{3, 3}, f64, false, {-5.125, -5.125, -5.125, -5.125, -5.125, -5.125, 19.75, -5.125, -5.125}});
  same([](A a) { return jnp::diff(a[0], 2, 0); }, {R({4, 3}, f64, 2)},
       {{2, 3}, f64, false, {-24.875, 0, 24.875, 24.875, -24.875, -24.875}});
  same([](A a) { return jnp::diff(a[0], 5, 0); }, {R({3, 4})}, {{0, 4}, f64, false, {}});
  // n = 0 returns the input as it is, even 0-d (JAX checks nothing else first).
  same([](A a) { return jnp::diff(a[0], 0); }, {R({})}, {{}, f64, false, {7.375}});
  same([](A a) { return jnp::diff(a[0], 1, 0); }, {R({3, 4}, b1)}, {{2, 4}, b1, false, {1, 0, 1, 0, 0, 0, 0, 1}});
  same([](A a) { return jnp::diff(a[0], 2, 0); }, {R({3, 4}, b1)}, {{1, 4}, b1, false, {1, 0, 1, 1}});
  same([](A a) { return jnp::diff(a[0]); }, {R({5}, u8)}, {{4}, u8, false, {23, 252, 241, 34}});
  same([](A a) { return jnp::diff(a[0], 1, 1, a[1], a[2]); }, {R({3, 2}, i8), Array(int64_t{100}), R({3, 1}, i16, 1)},
       {{3, 3}, i16, false, {-109, 41, -49, -128, 41, 11, -147, 41, -30}});
  same([](A a) { return jnp::diff(a[0], 2, 0, a[1]); }, {R({3, 2}), R({1, 2}, f32, 1)},
       {{2, 2}, f64, false, {-28.25, -3.375, 24.875, 24.875}});
  same([](A a) { return jnp::diff(a[0], 1, 0, a[1]); }, {R({3, 2}, b1), Array(true)},
       {{3, 2}, b1, false, {0, 1, 1, 1, 0, 1}});
  same([](A a) { return jnp::diff(a[0], 1, 0, a[1]); }, {R({3, 2}, b1), R({1, 2}, i32)},
       {{3, 2}, i32, false, {10, -32, -1, 1, 0, -1}});
  same([](A a) { return jnp::diff(a[0]); }, {W(1.5, {3})}, {{2}, f64, true, {0, 0}});
  same([](A a) { return jnp::diff(a[0], 2); }, {R({5}, f16)}, {{3}, f16, false, {0, 0, 24.875}});
  same_grad([](A a) { return jnp::diff(a[0], 2, 0); }, {R({4, 3})}, 0,
            {{4, 3}, f64, false, {-8, 11.75, 6.625, 17.5, -27.125, -22, -11, 19, 24.125, 1.5, -3.625, -8.75}});
  same_grad([](A a) { return jnp::diff(a[0], 1, 1, a[1]); }, {R({4, 3}), R({4, 1}, f64, 1)}, 1,
            {{4, 1}, f64, false, {8, -1.5, -11, 4.375}});
  // JAX: ValueError: order must be non-negative but got -1
  refuses<ShapeError>([](A a) { return jnp::diff(a[0], -1); }, {R({3, 4})}, "diff");
  // JAX: ValueError: diff requires input that is at least one dimensional; got JitTracer(float64[])
  refuses<ShapeError>([](A a) { return jnp::diff(a[0]); }, {R({})}, "diff");
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>([](A a) { return jnp::diff(a[0], 1, 2); }, {R({3, 4})}, "diff");
  // JAX: TypeError: Cannot concatenate arrays with shapes that differ in dimensions other than the one being
  // concatenated: concatenating along dimension 1 for shapes (2, 1), (3, 4).
  refuses<ShapeError>([](A a) { return jnp::diff(a[0], 1, 1, a[1]); }, {R({3, 4}), R({2, 1})}, "diff");
}
TEST_CASE("jnp::delete_ drops one index, a list, an array or a mask, as JAX's jnp.delete", "[jnp]") {
  same([](A a) { return jnp::delete_(a[0], 1); }, {R({3, 4})},
       {{11}, f64, false, {7.375, -2.875, -8, 11.75, 6.625, 1.5, -3.625, -8.75, 11, 5.875, 0.75}});
  same([](A a) { return jnp::delete_(a[0], -1, 1); }, {R({3, 4})},
       {{3, 3}, f64, false, {7.375, 2.25, -2.875, 11.75, 6.625, 1.5, -8.75, 11, 5.875}});
  // Array indices (negative count from the end, repeats once) and masks must be concrete, as in JAX.
  same([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({0, 2, 2, -1})},
       {{3, 1}, f64, false, {2.25, 6.625, 11}}, false);
  same([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({1, 2}, {2, 1})},
       {{3, 2}, f64, false, {7.375, -8, 11.75, -3.625, -8.75, 0.75}}, false);
  same([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({0, 1, 2, 3})}, {{3, 0}, f64, false, {}}, false);
  same([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({}, i64)},
       {{3, 4}, f64, false, {7.375, 2.25, -2.875, -8, 11.75, 6.625, 1.5, -3.625, -8.75, 11, 5.875, 0.75}}, false);
  same([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({1, 0, 1, 0}, b1)},
       {{3, 2}, f64, false, {2.25, -8, 6.625, -3.625, 11, 0.75}}, false);
  same([](A a) { return jnp::delete_(a[0], a[1], 0); }, {R({2, 3}, i8), I({0}, i64)},
       {{1, 3}, i8, false, {13, -47, -6}}, false);
  // A braced list is static (a Python list JAX refuses: jnp.asarray(list) is the equivalent), so it works under jit.
  same(
      [](A a) {
        return jnp::delete_(a[0], {0, 2}, 1);
      },
      {R({3, 4})}, {{3, 2}, f64, false, {2.25, -8, 6.625, -3.625, 11, 0.75}});
  // With assume_unique_indices, traced indices work: clamped into range, then dropped.
  same([](A a) { return jnp::delete_(a[0], a[1], 1, true); }, {R({3, 4}), I({2, -4})},
       {{3, 2}, f64, false, {2.25, -8, 6.625, -3.625, 11, 0.75}});
  same([](A a) { return jnp::delete_(a[0], a[1], 1, true); }, {R({3, 4}), I({7, -9})},
       {{3, 2}, f64, false, {2.25, -2.875, 6.625, 1.5, 11, 5.875}});
  same([](A a) { return jnp::delete_(a[0], a[1], std::nullopt, true); }, {R({3, 4}), I({11, 0, 5})},
       {{9}, f64, false, {2.25, -2.875, -8, 11.75, 1.5, -3.625, -8.75, 11, 5.875}});
  same([](A a) { return jnp::delete_(a[0], 0); }, {R({}, f32)}, {{0}, f32, false, {}});
  same([](A a) { return jnp::delete_(a[0], 1); }, {W(1.5, {3})}, {{2}, f64, true, {1.5, 1.5}});
  same_grad([](A a) { return jnp::delete_(a[0], a[1], 1, true); }, {R({3, 4}), I({2, 0})}, 0,
            {{3, 4}, f64, false, {0, -8, 0, 11.75, 0, 6.625, 0, 1.5, 0, -3.625, 0, -8.75}});
  same_grad([](A a) { return jnp::delete_(a[0], 1, 0); }, {R({3, 4})}, 0,
            {{3, 4}, f64, false, {-8, 11.75, 6.625, 1.5, 0, 0, 0, 0, -3.625, -8.75, 11, 5.875}});
  // JAX: ValueError: axis 12 is out of bounds for array of dimension 12
  refuses<ShapeError>([](A a) { return jnp::delete_(a[0], 12); }, {R({3, 4})}, "delete_");
  // JAX: IndexError: index 4 is out of bounds for axis 0 with size 4
  refuses<ShapeError>([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({0, 4})}, "delete_", false);
  // JAX: IndexError: index 255 is out of bounds for axis 0 with size 4
  refuses<ShapeError>([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({1, 255}, u8)}, "delete_", false);
  // JAX: ValueError: np.delete(arr, obj): for boolean indices, obj must be one-dimensional with length matching
  // specified axis.
  refuses<ShapeError>([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), I({1, 0}, b1)}, "delete_", false);
  // JAX: ValueError: np.delete(arr, obj): got obj.dtype=float64; must be integer or bool.
  refuses<TypeError>([](A a) { return jnp::delete_(a[0], a[1], 1); }, {R({3, 4}), R({1})}, "delete_", false);
  // JAX: ValueError: axis 2 is out of bounds for array of dimension 2
  refuses<ShapeError>([](A a) { return jnp::delete_(a[0], 0, 2); }, {R({3, 4})}, "delete_");
  // JAX: ConcretizationTypeError (traced indices without assume_unique_indices).
  auto traced = [](std::vector<Array> a) { return jnp::delete_(a[0], a[1], 1); };
  CHECK_THROWS_AS(jit(traced)(std::vector<Array>{R({3, 4}), I({1, 2})}), TracerError);
}

TEST_CASE("jnp::insert puts values before one index or several, traced indices too, in arr's dtype, as JAX", "[jnp]") {
  same([](A a) { return jnp::insert(a[0], 1, Array(7.5)); }, {R({3, 4})},
       {{13}, f64, false, {7.375, 7.5, 2.25, -2.875, -8, 11.75, 6.625, 1.5, -3.625, -8.75, 11, 5.875, 0.75}});
  // A scalar index takes values' first axis along axis; a one-element array index does not.
  same([](A a) { return jnp::insert(a[0], 1, a[1], 1); }, {R({3, 4}), I({7, 8, 9})},
       {{3, 5}, f64, false, {7.375, 7, 2.25, -2.875, -8, 11.75, 8, 6.625, 1.5, -3.625, -8.75, 9, 11, 5.875, 0.75}});
  same([](A a) { return jnp::insert(a[0], a[1], a[2], 1); }, {R({3, 4}), I({1}), I({7, 8, 9}, {1, 3})},
       {{3, 7}, f64, false, {7.375, 7,   8,      9,     2.25, -2.875, -8, 11.75, 7,     8,   9,
                             6.625, 1.5, -3.625, -8.75, 7,    8,      9,  11,    5.875, 0.75}});
  same([](A a) { return jnp::insert(a[0], a[1], a[2], 1); }, {R({3, 4}), I({1, 3, -1}), R({3}, f64, 1)},
       {{3, 7}, f64, false, {7.375, -10.625, 2.25,   -2.875, 9.125,   4,  -8,    11.75, -10.625, 6.625, 1.5,
                             9.125, 4,       -3.625, -8.75,  -10.625, 11, 5.875, 9.125, 4,       0.75}});
  same(
      [](A a) {
        return jnp::insert(a[0], {0, 3, 2}, Array(5.0), 0);
      },
      {R({3, 4})}, {{6, 4}, f64, false, {5, 5, 5, 5, 7.375, 2.25, -2.875, -8,   11.75, 6.625, 1.5, -3.625,
                                         5, 5, 5, 5, -8.75, 11,   5.875,  0.75, 5,     5,     5,   5}});
  same([](A a) { return jnp::insert(a[0], a[1], Array(5.0), 0); }, {R({2, 2}), I({10, -10})},
       {{4, 2}, f64, false, {5, 5, 7.375, 2.25, -2.875, -8, 5, 5}});
  same([](A a) { return jnp::insert(a[0], a[1], a[2]); }, {R({5}), I({2, 2, 0, 5}), R({4}, f64, 2)},
       {{9}, f64, false, {10.875, 7.375, 2.25, -3.75, -8.875, -2.875, -8, 11.75, 5.75}});
  same([](A a) { return jnp::insert(a[0], a[1], Array(5.0), 1); }, {R({2, 2}), I({})},
       {{2, 2}, f64, false, {7.375, 2.25, -2.875, -8}});
  same([](A a) { return jnp::insert(a[0], 1, Array(100.7)); }, {R({4}, i8)}, {{5}, i8, false, {-9, 100, 32, -28, 13}});
  same([](A a) { return jnp::insert(a[0], 1, Array(2.0)); }, {W(1.5, {3})}, {{4}, f64, true, {1.5, 2, 1.5, 1.5}});
  same([](A a) { return jnp::insert(a[0], 0, Array(2.0)); }, {R({}, f32)}, {{2}, f32, false, {2, 7.375}});
  same([](A a) { return jnp::insert(a[0], 0, a[1]); }, {R({0}), R({2}, f64, 1)}, {{2}, f64, false, {-10.625, 9.125}});
  same([](A a) { return jnp::insert(a[0], a[1], Array(true)); }, {R({3}, b1), I({1})}, {{4}, b1, false, {1, 1, 0, 0}});
  same_grad([](A a) { return jnp::insert(a[0], a[1], a[2], 1); }, {R({3, 4}), I({1, 3, -1}), R({3}, f64, 1)}, 0,
            {{3, 4}, f64, false, {-8, 6.625, 1.5, 11, 5.875, -4.375, -9.5, 0, -5.125, 9.5, 4.375, -11}});
  same_grad([](A a) { return jnp::insert(a[0], a[1], a[2], 1); }, {R({3, 4}), I({1, 3, -1}), R({3}, f64, 1)}, 2,
            {{3}, f64, false, {2.25, 5.875, -9.5}});
  same_grad([](A a) { return jnp::insert(a[0], 2, a[1], 1); }, {R({3, 4}), R({3, 1}, f64, 1)}, 1,
            {{3, 1}, f64, false, {11.75, -3.625, 5.875}});
  // JAX: ValueError: jnp.insert(): index array must be integer typed; got [7.375]
  refuses<TypeError>([](A a) { return jnp::insert(a[0], a[1], Array(5.0), 0); }, {R({3, 4}), R({1})}, "insert");
  // JAX: ValueError: jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got [[1]]
  refuses<ShapeError>([](A a) { return jnp::insert(a[0], a[1], Array(5.0), 0); }, {R({3, 4}), I({1}, {1, 1})},
                      "insert");
  // JAX: ValueError: Incompatible types for broadcasting: input type=float64[1,3] and requested type=float64[2,4]
  refuses<ShapeError>([](A a) { return jnp::insert(a[0], a[1], a[2], 0); }, {R({3, 4}), I({1, 2}), R({3})}, "insert");
  // JAX: ValueError: axis 0 is out of bounds for array of dimension 0
  refuses<ShapeError>([](A a) { return jnp::insert(a[0], 0, Array(2.0), 0); }, {R({}, f32)}, "insert");
}
}  // namespace jitx::testing::shape_pack
