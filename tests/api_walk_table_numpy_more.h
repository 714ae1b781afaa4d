// The api walk's table: the set operations of numpy_set.h and numpy_more.h (see api_walk_table.h).
#pragma once
#include "jitx/numpy_more.h"
#include "jitx/numpy_set.h"

namespace {

const std::vector<Case> kNumpyMore = {
    {"jnp::setdiff1d",
     [](Walk& w) {
       w.ok("(2,3) and (4,), size 5", {f23(), f4()}, [](A a) { return jnp::setdiff1d(a[0], a[1], false, 5); }, {5});
       w.ok("(0,3) and (4,), size 2", {z03(), f4()}, [](A a) { return jnp::setdiff1d(a[0], a[1], false, 2); }, {2});
       w.err("size -1", {f23(), f4()}, [](A a) { return jnp::setdiff1d(a[0], a[1], false, -1); });
       w.err("fill of shape (4,)", {f23(), f4()}, [](A a) { return jnp::setdiff1d(a[0], a[1], false, 3, f4()); });
       w.invalid([](A a) { return jnp::setdiff1d(a[0], f4(), false, 2); });
     }},
    {"jnp::setxor1d",
     [](Walk& w) {
       w.ok("(2,3) and (4,), size 7", {f23(), f4()}, [](A a) { return jnp::setxor1d(a[0], a[1], false, 7); }, {7});
       w.ok("0-d and (0,3), size 3", {s0(), z03()}, [](A a) { return jnp::setxor1d(a[0], a[1], true, 3); }, {3});
       w.err("size -3", {f23(), f4()}, [](A a) { return jnp::setxor1d(a[0], a[1], false, -3); });
       w.invalid([](A a) { return jnp::setxor1d(f4(), a[0], false, 2); });
     }},
    {"jnp::intersect1d",
     [](Walk& w) {
       w.ok("(2,3) and (4,), size 3", {f23(), f4()}, [](A a) { return jnp::intersect1d(a[0], a[1], false, 3); }, {3});
       w.err("size -1", {f23(), f4()}, [](A a) { return jnp::intersect1d(a[0], a[1], false, -1); });
       w.invalid([](A a) { return jnp::intersect1d(a[0], f4(), false, 2); });
     }},
    {"jnp::intersect1d_with_indices",
     [](Walk& w) {
       w.ok("(0,3) and (4,), size 2", {z03(), f4()},
            [](A a) { return jnp::intersect1d_with_indices(a[0], a[1], false, 2).indices2; }, {2});
       w.ok("(2,3) and (4,), size 3", {f23(), f4()},
            [](A a) { return jnp::intersect1d_with_indices(a[0], a[1], true, 3).indices1; }, {3});
       w.err("size -1", {f23(), f4()}, [](A a) { return jnp::intersect1d_with_indices(a[0], a[1], false, -1).values; });
       w.invalid([](A a) { return jnp::intersect1d_with_indices(f4(), a[0], false, 2).values; });
     }},
    {"jnp::trunc", [](Walk& w) { unary(w, [](const Array& x) { return jnp::trunc(x); }); }},
    {"jnp::rint", [](Walk& w) { unary(w, [](const Array& x) { return jnp::rint(x); }); }},
    {"jnp::fabs", [](Walk& w) { unary(w, [](const Array& x) { return jnp::fabs(x); }); }},
    {"jnp::isposinf", [](Walk& w) { unary(w, [](const Array& x) { return jnp::isposinf(x); }); }},
    {"jnp::isneginf", [](Walk& w) { unary(w, [](const Array& x) { return jnp::isneginf(x); }); }},
    {"jnp::modf", [](Walk& w) { unary(w, [](const Array& x) { return jnp::modf(x).first; }); }},
    {"jnp::frexp", [](Walk& w) { unary(w, [](const Array& x) { return jnp::frexp(x).second; }); }},
    {"jnp::fmax",
     [](Walk& w) {
       binary(
           w, [](const Array& x, const Array& y) { return jnp::fmax(x, y); }, false);
     }},
    {"jnp::fmin",
     [](Walk& w) {
       binary(
           w, [](const Array& x, const Array& y) { return jnp::fmin(x, y); }, false);
     }},
    {"jnp::logaddexp2",
     [](Walk& w) {
       binary(
           w, [](const Array& x, const Array& y) { return jnp::logaddexp2(x, y); }, false);
     }},
    {"jnp::divmod",
     [](Walk& w) {
       binary(
           w, [](const Array& x, const Array& y) { return jnp::divmod(x, y).second; }, false);
     }},
    {"jnp::bitwise_count", [](Walk& w) { unary_int(w, [](const Array& x) { return jnp::bitwise_count(x); }); }},
    {"jnp::bitwise_invert", [](Walk& w) { unary_int(w, [](const Array& x) { return jnp::bitwise_invert(x); }); }},
    {"jnp::bitwise_left_shift",
     [](Walk& w) { binary_int(w, [](const Array& x, const Array& y) { return jnp::bitwise_left_shift(x, y); }); }},
    {"jnp::bitwise_right_shift",
     [](Walk& w) { binary_int(w, [](const Array& x, const Array& y) { return jnp::bitwise_right_shift(x, y); }); }},
    {"jnp::amax",
     [](Walk& w) {
       reduction(
           w, [](const Array& x, std::vector<int64_t> ax) { return jnp::amax(x, ax); }, false);
     }},
    {"jnp::amin",
     [](Walk& w) {
       reduction(
           w, [](const Array& x, std::vector<int64_t> ax) { return jnp::amin(x, ax); }, false);
     }},
    {"jnp::array_equal",
     [](Walk& w) {
       w.ok("(2,3) and (4,): false", {f23(), f4()}, [](A a) { return jnp::array_equal(a[0], a[1]); }, {});
       w.ok("(0,3) twice", {z03(), z03()}, [](A a) { return jnp::array_equal(a[0], a[1], true); }, {});
       w.invalid([](A a) { return jnp::array_equal(a[0], f4()); });
     }},
    {"jnp::array_equiv",
     [](Walk& w) {
       w.ok("(2,3) and (3,)", {f23(), ones({3})}, [](A a) { return jnp::array_equiv(a[0], a[1]); }, {});
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::array_equiv(a[0], a[1]); });
       w.invalid([](A a) { return jnp::array_equiv(a[0], f4()); });
     }},
    {"jnp::concat",
     [](Walk& w) {
       w.ok("(2,3) and (0,3)", {f23(), z03()}, [](A a) { return jnp::concat({a[0], a[1]}); }, {2, 3});
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::concat({a[0], a[1]}); });
       w.invalid([](A a) { return jnp::concat({a[0], f4()}); });
     }},
    {"jnp::permute_dims",
     [](Walk& w) {
       w.ok("(2,3) (1, 0)", {f23()}, [](A a) { return jnp::permute_dims(a[0], {1, 0}); }, {3, 2});
       w.err("(2,3) (0,)", {f23()}, [](A a) { return jnp::permute_dims(a[0], {0}); });
       w.err("(2,3) (0, 0)", {f23()}, [](A a) { return jnp::permute_dims(a[0], {0, 0}); });
       w.invalid([](A a) { return jnp::permute_dims(a[0], {}); });
     }},
    {"jnp::rollaxis",
     [](Walk& w) {
       w.ok("(2,3) axis 1", {f23()}, [](A a) { return jnp::rollaxis(a[0], 1); }, {3, 2});
       w.ok("(0,3) axis 0 start 2", {z03()}, [](A a) { return jnp::rollaxis(a[0], 0, 2); }, {3, 0});
       w.err("axis 2^62", {f23()}, [](A a) { return jnp::rollaxis(a[0], kHuge); });
       w.err("start 3", {f23()}, [](A a) { return jnp::rollaxis(a[0], 0, 3); });
       w.invalid([](A a) { return jnp::rollaxis(a[0], 0); });
     }},
    {"jnp::unstack",
     [](Walk& w) {
       w.ok("(2,3) axis 1", {f23()}, [](A a) { return jnp::unstack(a[0], 1)[2]; }, {2});
       w.ok("(0,3) axis 1", {z03()}, [](A a) { return jnp::unstack(a[0], 1)[0]; }, {0});
       w.err("0-d", {s0()}, [](A a) { return jnp::unstack(a[0])[0]; });
       w.err("axis -3", {f23()}, [](A a) { return jnp::unstack(a[0], -3)[0]; });
       w.invalid([](A a) { return jnp::unstack(a[0])[0]; });
     }},
    {"jnp::broadcast_arrays",
     [](Walk& w) {
       w.ok("(2,3) and ()", {f23(), s0()}, [](A a) { return jnp::broadcast_arrays({a[0], a[1]})[1]; }, {2, 3});
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::broadcast_arrays({a[0], a[1]})[0]; });
       w.invalid([](A a) { return jnp::broadcast_arrays({a[0], f4()})[0]; });
     }},
    {"jnp::ediff1d",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return jnp::ediff1d(a[0]); }, {5});
       w.ok("(0,3) with ends", {z03(), f4()}, [](A a) { return jnp::ediff1d(a[0], a[1], s0()); }, {5});
       w.ok("0-d", {s0()}, [](A a) { return jnp::ediff1d(a[0]); }, {0});
       w.invalid([](A a) { return jnp::ediff1d(a[0]); });
     }},
    {"jnp::lexsort",
     [](Walk& w) {
       w.ok("two (2,3) keys", {f23(), f23()}, [](A a) { return jnp::lexsort({a[0], a[1]}); }, {2, 3});
       w.ok("0-d", {s0()}, [](A a) { return jnp::lexsort({a[0]}); }, {});
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::lexsort({a[0], a[1]}); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::lexsort({a[0]}, 2); });
       w.invalid([](A a) { return jnp::lexsort({a[0]}); });
     }},
    {"jnp::matvec",
     [](Walk& w) {
       w.ok("(2,3) and (3,)", {f23(), ones({3})}, [](A a) { return jnp::matvec(a[0], a[1]); }, {2});
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::matvec(a[0], a[1]); });
       w.err("(4,) and (4,)", {f4(), f4()}, [](A a) { return jnp::matvec(a[0], a[1]); });
       w.invalid([](A a) { return jnp::matvec(a[0], f4()); });
     }},
    {"jnp::vecmat",
     [](Walk& w) {
       w.ok("(2,) and (2,3)", {ones({2}), f23()}, [](A a) { return jnp::vecmat(a[0], a[1]); }, {3});
       w.err("(4,) and (2,3)", {f4(), f23()}, [](A a) { return jnp::vecmat(a[0], a[1]); });
       w.invalid([](A a) { return jnp::vecmat(a[0], f23()); });
     }},
    {"jnp::diag_indices_from",
     [](Walk& w) {
       w.ok("(3,3)", {ones({3, 3})}, [](A a) { return jnp::diag_indices_from(a[0])[1]; }, {3});
       w.err("(2,3)", {f23()}, [](A a) { return jnp::diag_indices_from(a[0])[0]; });
       w.err("(4,)", {f4()}, [](A a) { return jnp::diag_indices_from(a[0])[0]; });
       w.invalid([](A a) { return jnp::diag_indices_from(a[0])[0]; });
     }},
    {"jnp::tril_indices_from",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return jnp::tril_indices_from(a[0]).first; }, {3});
       w.err("(4,)", {f4()}, [](A a) { return jnp::tril_indices_from(a[0]).first; });
       w.invalid([](A a) { return jnp::tril_indices_from(a[0]).first; });
     }},
    {"jnp::triu_indices_from",
     [](Walk& w) {
       w.ok("(2,3) k 1", {f23()}, [](A a) { return jnp::triu_indices_from(a[0], 1).second; }, {3});
       w.err("0-d", {s0()}, [](A a) { return jnp::triu_indices_from(a[0]).first; });
       w.invalid([](A a) { return jnp::triu_indices_from(a[0]).first; });
     }},
    {"jnp::polyadd",
     [](Walk& w) {
       w.ok("(4,) and (3,)", {f4(), ones({3})}, [](A a) { return jnp::polyadd(a[0], a[1]); }, {4});
       w.ok("(0,) and (3,)", {zeros({0}), ones({3})}, [](A a) { return jnp::polyadd(a[0], a[1]); }, {3});
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::polyadd(a[0], a[1]); });
       w.invalid([](A a) { return jnp::polyadd(a[0], f4()); });
     }},
    {"jnp::polysub",
     [](Walk& w) {
       w.ok("(4,) and (3,)", {f4(), ones({3})}, [](A a) { return jnp::polysub(a[0], a[1]); }, {4});
       w.err("0-d and (4,)", {s0(), f4()}, [](A a) { return jnp::polysub(a[0], a[1]); });
       w.invalid([](A a) { return jnp::polysub(f4(), a[0]); });
     }},
    {"jnp::polymul",
     [](Walk& w) {
       w.ok("(4,) and (3,)", {f4(), ones({3})}, [](A a) { return jnp::polymul(a[0], a[1]); }, {6});
       w.ok("(0,) and (3,)", {zeros({0}), ones({3})}, [](A a) { return jnp::polymul(a[0], a[1]); }, {3});
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::polymul(a[0], a[1]); });
       w.invalid([](A a) { return jnp::polymul(a[0], f4()); });
     }},
    {"jnp::polyder",
     [](Walk& w) {
       w.ok("(4,)", {f4()}, [](A a) { return jnp::polyder(a[0]); }, {3});
       w.ok("(4,) m 2^62", {f4()}, [](A a) { return jnp::polyder(a[0], kHuge); }, {0});
       w.err("m -1", {f4()}, [](A a) { return jnp::polyder(a[0], -1); });
       w.err("(2,3)", {f23()}, [](A a) { return jnp::polyder(a[0]); });
       w.invalid([](A a) { return jnp::polyder(a[0]); });
     }},
    {"jnp::polyint",
     [](Walk& w) {
       w.ok("(4,) m 2", {f4()}, [](A a) { return jnp::polyint(a[0], 2); }, {6});
       w.ok("(0,)", {zeros({0})}, [](A a) { return jnp::polyint(a[0]); }, {1});
       w.err("m -1", {f4()}, [](A a) { return jnp::polyint(a[0], -1); });
       w.err("m 2^62", {f4()}, [](A a) { return jnp::polyint(a[0], kHuge); });
       w.err("k of shape (4,), m 2", {f4(), f4()}, [](A a) { return jnp::polyint(a[0], 2, a[1]); });
       w.invalid([](A a) { return jnp::polyint(a[0]); });
     }},
    {"jnp::bartlett",
     [](Walk& w) {
       w.ok("M 5", {}, [](A) { return jnp::bartlett(5); }, {5});
       w.ok("M -1", {}, [](A) { return jnp::bartlett(-1); }, {0});
       w.err("M 2^62", {}, [](A) { return jnp::bartlett(kHuge); });
     }},
    {"jnp::blackman", [](Walk& w) { w.ok("M 1", {}, [](A) { return jnp::blackman(1); }, {1}); }},
    {"jnp::hamming", [](Walk& w) { w.ok("M 0", {}, [](A) { return jnp::hamming(0); }, {0}); }},
    {"jnp::hanning",
     [](Walk& w) {
       w.ok("M 3", {}, [](A) { return jnp::hanning(3); }, {3});
       w.err("M 2^62", {}, [](A) { return jnp::hanning(kHuge); });
     }},
};

// numpy_more.h: selection, filling, bits and polynomial division.
const std::vector<Case> kNumpyMore2 = {
    {"jnp::resize",
     [](Walk& w) {
       w.ok("(2,3) -> (4,)", {f23()}, [](A a) { return jnp::resize(a[0], {4}); }, {4});
       w.ok("(0,3) -> (2,2)", {z03()}, [](A a) { return jnp::resize(a[0], {2, 2}); }, {2, 2});
       w.err("-> (-1,)", {f23()}, [](A a) { return jnp::resize(a[0], {-1}); });
       w.err("-> (2^62, 8)", {f23()}, [](A a) { return jnp::resize(a[0], {kHuge, 8}); });
       w.invalid([](A a) { return jnp::resize(a[0], {2}); });
     }},
    {"jnp::trim_zeros",
     [](Walk& w) {
       w.err("0-d", {s0()}, [](A a) { return jnp::trim_zeros(a[0]); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::trim_zeros(a[0], "fb", {2}); });
       w.invalid([](A a) { return jnp::trim_zeros(a[0]); });
     }},
    {"jnp::compress",
     [](Walk& w) {
       w.ok("(2,3) axis 1, size 1", {f23()},
            [](A a) {
              return jnp::compress(jnp::array<bool>({true, false}), a[0], 1, 1);
            },
            {2, 1});
       w.err("a 2-D condition", {f23()}, [](A a) { return jnp::compress(a[0] > 0, a[0], 1, 1); });
       w.err("size 4 of 3", {f23()}, [](A a) { return jnp::compress(jnp::array<bool>({true}), a[0], 1, 4); });
       w.invalid([](A a) { return jnp::compress(jnp::array<bool>({true}), a[0], std::nullopt, 1); });
     }},
    {"jnp::extract",
     [](Walk& w) {
       w.ok("(2,3), size 2", {f23()}, [](A a) { return jnp::extract(a[0] > 0, a[0], 2); }, {2});
       w.invalid([](A a) { return jnp::extract(a[0], a[0], 1); });
     }},
    {"jnp::choose",
     [](Walk& w) {
       w.ok("clip", {i23(), f23()}, [](A a) { return jnp::choose(a[0], {a[1], a[1]}, "clip"); }, {2, 3});
       w.err("float a", {f23()}, [](A a) { return jnp::choose(a[0], {a[0]}, "wrap"); });
       w.err("mode 'x'", {i23()}, [](A a) { return jnp::choose(a[0], {a[0]}, "x"); });
       w.err("no choices", {i23()}, [](A a) { return jnp::choose(a[0], {}, "wrap"); });
       w.invalid([](A a) { return jnp::choose(a[0], {f4()}, "wrap"); });
     }},
    {"jnp::fill_diagonal",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return jnp::fill_diagonal(a[0], Array(1.0f)); }, {2, 3});
       w.err("(4,)", {f4()}, [](A a) { return jnp::fill_diagonal(a[0], Array(1.0f)); });
       w.err("wrap", {f23()}, [](A a) { return jnp::fill_diagonal(a[0], Array(1.0f), true); });
       w.invalid([](A a) { return jnp::fill_diagonal(a[0], Array(1.0f)); });
     }},
    {"jnp::put",
     [](Walk& w) {
       w.ok("(2,3) wrap", {f23()}, [](A a) { return jnp::put(a[0], Array(7), Array(1.0f), "wrap"); }, {2, 3});
       w.ok("(0,3)", {z03()}, [](A a) { return jnp::put(a[0], Array(1), Array(1.0f)); }, {0, 3});
       w.err("float indices", {f23()}, [](A a) { return jnp::put(a[0], a[0], Array(1.0f)); });
       w.err("mode 'raise'", {f23()}, [](A a) { return jnp::put(a[0], Array(1), Array(1.0f), "raise"); });
       w.invalid([](A a) { return jnp::put(a[0], Array(1), Array(1.0f)); });
     }},
    {"jnp::put_along_axis",
     [](Walk& w) {
       w.ok("(2,3) axis 1", {f23(), i23()}, [](A a) { return jnp::put_along_axis(a[0], a[1], Array(1.0f), 1); },
            {2, 3});
       w.err("ranks differ", {f23()}, [](A a) { return jnp::put_along_axis(a[0], Array(1), Array(1.0f), 1); });
       w.err("axis 2", {f23(), i23()}, [](A a) { return jnp::put_along_axis(a[0], a[1], Array(1.0f), 2); });
       w.invalid([](A a) { return jnp::put_along_axis(a[0], a[0], Array(1.0f), 0); });
     }},
    {"jnp::unwrap",
     [](Walk& w) {
       w.ok("(2,3)", {f23()}, [](A a) { return jnp::unwrap(a[0]); }, {2, 3});
       w.ok("(0,3) axis 0", {z03()}, [](A a) { return jnp::unwrap(a[0], std::nullopt, 0); }, {0, 3});
       w.err("0-d", {s0()}, [](A a) { return jnp::unwrap(a[0]); });
       w.invalid([](A a) { return jnp::unwrap(a[0]); });
     }},
    {"jnp::argpartition",
     [](Walk& w) {
       w.ok("(2,3) kth 1", {f23()}, [](A a) { return jnp::argpartition(a[0], 1); }, {2, 3});
       w.err("kth 3 of 3", {f23()}, [](A a) { return jnp::argpartition(a[0], 3); });
       w.err("0-d", {s0()}, [](A a) { return jnp::argpartition(a[0], 0); });
       w.invalid([](A a) { return jnp::argpartition(a[0], 0); });
     }},
    {"jnp::packbits",
     [](Walk& w) {
       w.ok("(2,3) axis 1", {i23()}, [](A a) { return jnp::packbits(a[0], 1); }, {2, 1});
       w.ok("(0,3)", {zeros({0, 3}, DType::int32)}, [](A a) { return jnp::packbits(a[0]); }, {0});
       w.err("float", {f23()}, [](A a) { return jnp::packbits(a[0]); });
       w.err("bitorder 'x'", {i23()}, [](A a) { return jnp::packbits(a[0], 0, "x"); });
       w.invalid([](A a) { return jnp::packbits(a[0]); });
     }},
    {"jnp::unpackbits",
     [](Walk& w) {
       w.ok("u8 (2,3) axis 0", {i23().astype(DType::uint8)}, [](A a) { return jnp::unpackbits(a[0], 0); }, {16, 3});
       w.err("int32", {i23()}, [](A a) { return jnp::unpackbits(a[0]); });
       w.invalid([](A a) { return jnp::unpackbits(a[0]); });
     }},
    {"jnp::poly",
     [](Walk& w) {
       w.ok("(4,) roots", {f4()}, [](A a) { return jnp::poly(a[0]); }, {5});
       w.ok("(0,)", {zeros({0})}, [](A a) { return jnp::poly(a[0]); }, {});
       w.err("(3,3): complex eigenvalues", {ones({3, 3})}, [](A a) { return jnp::poly(a[0]); });
       w.err("(2,3)", {f23()}, [](A a) { return jnp::poly(a[0]); });
       w.invalid([](A a) { return jnp::poly(a[0]); });
     }},
    {"jnp::polydiv",
     [](Walk& w) {
       w.ok("(4,) by (2,)", {f4(), ones({2})}, [](A a) { return jnp::polydiv(a[0], a[1]).first; }, {3});
       w.ok("(2,) by (4,)", {ones({2}), f4()}, [](A a) { return jnp::polydiv(a[0], a[1]).second; }, {2});
       w.err("by (0,)", {f4(), zeros({0})}, [](A a) { return jnp::polydiv(a[0], a[1]).first; });
       w.invalid([](A a) { return jnp::polydiv(a[0], f4()).first; });
     }},
    {"nn::dot_product_attention",
     [](Walk& w) {
       Array q = ones({1, 2, 2, 4}), k = ones({1, 3, 1, 4});
       w.ok("GQA (1,2,2,4) x (1,3,1,4)", {q, k}, [](A a) { return nn::dot_product_attention(a[0], a[1], a[1]); },
            {1, 2, 2, 4});
       w.ok("causal, 3-d", {ones({2, 2, 4})},
            [](A a) {
              return nn::dot_product_attention(a[0], a[0], a[0], std::nullopt, std::nullopt, {.is_causal = true});
            },
            {2, 2, 4});
       w.err("heads 2 vs 3", {q, ones({1, 3, 3, 4})}, [](A a) { return nn::dot_product_attention(a[0], a[1], a[1]); });
       w.err("int32", {q.astype(DType::int32)}, [](A a) { return nn::dot_product_attention(a[0], a[0], a[0]); });
       w.err("f32 mask", {q, k}, [](A a) { return nn::dot_product_attention(a[0], a[1], a[1], std::nullopt, a[0]); });
       w.invalid([](A a) { return nn::dot_product_attention(a[0], a[0], a[0]); });
     }},
    {"random::lognormal",
     [](Walk& w) {
       w.ok("(2,3) sigma", {f23()}, [](A a) { return random::lognormal(random::PRNGKey(0), a[0]); }, {2, 3});
       w.err("int dtype", {},
             [](A) { return random::lognormal(random::PRNGKey(0), Array(1.0), Shape{2}, DType::int32); });
       w.err("sigma (4,) for shape (2,)", {f4()},
             [](A a) { return random::lognormal(random::PRNGKey(0), a[0], Shape{2}); });
       w.invalid([](A a) { return random::lognormal(a[0]); });
     }},
    {"random::rayleigh",
     [](Walk& w) {
       w.ok("shape (0,3)", {}, [](A) { return random::rayleigh(random::PRNGKey(0), Array(1.0), Shape{0, 3}); }, {0, 3});
       w.err("shape (-1,)", {}, [](A) { return random::rayleigh(random::PRNGKey(0), Array(1.0), Shape{-1}); });
       w.invalid([](A a) { return random::rayleigh(a[0]); });
     }},
    {"random::double_sided_maxwell",
     [](Walk& w) {
       w.ok("loc (3,), shape (2,)", {ones({3})},
            [](A a) { return random::double_sided_maxwell(random::PRNGKey(0), a[0], Array(1.0), {2}); }, {2, 3});
       w.err("loc (3,), scale (4,)", {ones({3}), f4()},
             [](A a) { return random::double_sided_maxwell(random::PRNGKey(0), a[0], a[1]); });
       w.invalid([](A a) { return random::double_sided_maxwell(a[0], Array(0.0), Array(1.0)); });
     }},
    {"nn::log1mexp", [](Walk& w) { unary(w, [](const Array& x) { return nn::log1mexp(x); }); }},
    {"nn::logmeanexp",
     [](Walk& w) {
       reduction(
           w, [](const Array& x, std::vector<int64_t> ax) { return nn::logmeanexp(x, ax); }, true);
     }},
};

}  // namespace
