// The api walk's table, numpy_shape.h (see api_walk_table.h).
#pragma once
#include "jitx/numpy_shape.h"

namespace {

const std::vector<Case> kNumpyShape = {
    // numpy_shape.h (moveaxis, stacks, splits, diagonal/trace, take_along_axis, meshgrid, rot90, diff, products,
    // tri/vander, the index helpers)
    {"jnp::moveaxis",
     [](Walk& w) {
       w.err("axis 2 of rank 2", {f23()}, [](A a) { return jnp::moveaxis(a[0], 2, 0); });
       w.err("axis 2^62", {f23()}, [](A a) { return jnp::moveaxis(a[0], kHuge, 0); });
       w.err("source (0, 0)", {f23()}, [](A a) { return jnp::moveaxis(a[0], {0, 0}, {0, 1}); });
       w.err("2 sources, 1 destination", {f23()}, [](A a) { return jnp::moveaxis(a[0], {0, 1}, jnp::Axes{0}); });
       w.ok("(0, 1) -> (1, 0)", {f23()}, [](A a) { return jnp::moveaxis(a[0], {0, 1}, {1, 0}); }, {3, 2});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::moveaxis(a[0], 0, -1); }, {3, 0});
       w.invalid([](A a) { return jnp::moveaxis(a[0], 0, 1); });
     }},
    {"jnp::hstack",
     [](Walk& w) {
       w.err("no arrays", {}, [](A a) { return jnp::hstack(a); });
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::hstack(a); });
       w.err("dtype 200", {f4()}, [](A a) { return jnp::hstack(a, DType(200)); });
       w.ok("(4,) and ()", {f4(), s0()}, [](A a) { return jnp::hstack(a); }, {5});
       w.ok("(0,3) and (0,3)", {z03(), z03()}, [](A a) { return jnp::hstack(a); }, {0, 6});
       w.invalid([](A a) { return jnp::hstack(a); });
     }},
    {"jnp::vstack",
     [](Walk& w) {
       w.err("no arrays", {}, [](A a) { return jnp::vstack(a); });
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::vstack(a); });
       w.ok("(2,3) and (0,3)", {f23(), z03()}, [](A a) { return jnp::vstack(a); }, {2, 3});
       w.ok("() and ()", {s0(), s0()}, [](A a) { return jnp::vstack(a); }, {2, 1});
       w.invalid([](A a) { return jnp::vstack(a); });
     }},
    {"jnp::dstack",
     [](Walk& w) {
       w.err("no arrays", {}, [](A a) { return jnp::dstack(a); });
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::dstack(a); });
       w.ok("(2,3) and i32[2,3]", {f23(), i23()}, [](A a) { return jnp::dstack(a); }, {2, 3, 2});
       w.invalid([](A a) { return jnp::dstack(a); });
     }},
    {"jnp::column_stack",
     [](Walk& w) {
       w.err("no arrays", {}, [](A a) { return jnp::column_stack(a); });
       w.err("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::column_stack(a); });
       w.ok("(4,) and (4,)", {f4(), f4()}, [](A a) { return jnp::column_stack(a); }, {4, 2});
       w.invalid([](A a) { return jnp::column_stack(a); });
     }},
    {"jnp::atleast_1d",
     [](Walk& w) {
       w.ok("f32[]", {s0()}, [](A a) { return jnp::atleast_1d(a[0]); }, {1});
       w.ok("two arrays", {s0(), z03()}, [](A a) { return jnp::atleast_1d(a)[1]; }, {0, 3});
       w.invalid([](A a) { return jnp::atleast_1d(a[0]); });
     }},
    {"jnp::atleast_2d",
     [](Walk& w) {
       w.ok("f32[4]", {f4()}, [](A a) { return jnp::atleast_2d(a[0]); }, {1, 4});
       w.ok("two arrays", {s0(), f4()}, [](A a) { return jnp::atleast_2d(a)[0]; }, {1, 1});
       w.invalid([](A a) { return jnp::atleast_2d(a[0]); });
     }},
    {"jnp::atleast_3d",
     [](Walk& w) {
       w.ok("f32[4]", {f4()}, [](A a) { return jnp::atleast_3d(a[0]); }, {1, 4, 1});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::atleast_3d(a)[0]; }, {0, 3, 1});
       w.invalid([](A a) { return jnp::atleast_3d(a[0]); });
     }},
    {"jnp::split",
     [](Walk& w) {
       w.err("3 sections of 2", {f23()}, [](A a) { return jnp::split(a[0], 3)[0]; });
       w.err("0 sections", {f23()}, [](A a) { return jnp::split(a[0], 0)[0]; });
       w.err("2^62 sections", {f23()}, [](A a) { return jnp::split(a[0], kHuge)[0]; });
       w.err("indices (2, 1)", {f4()}, [](A a) { return jnp::split(a[0], {2, 1})[0]; });
       w.err("index 2^62", {f4()}, [](A a) { return jnp::split(a[0], {kHuge})[0]; });
       w.err("axis 2", {f23()}, [](A a) { return jnp::split(a[0], 1, 2)[0]; });
       w.err("f32[]", {s0()}, [](A a) { return jnp::split(a[0], 1)[0]; });
       w.ok("3 sections of axis 1", {f23()}, [](A a) { return jnp::split(a[0], 3, 1)[2]; }, {2, 1});
       w.ok("f32[0,3] in 2", {z03()}, [](A a) { return jnp::split(a[0], 2)[1]; }, {0, 3});
       w.invalid([](A a) { return jnp::split(a[0], 2)[0]; });
     }},
    {"jnp::array_split",
     [](Walk& w) {
       w.err("-1 sections", {f23()}, [](A a) { return jnp::array_split(a[0], -1)[0]; });
       w.err("2^62 sections", {f23()}, [](A a) { return jnp::array_split(a[0], kHuge)[0]; });
       w.err("indices (-1,)", {f4()}, [](A a) { return jnp::array_split(a[0], {-1})[0]; });
       w.ok("5 sections of 2", {f23()}, [](A a) { return jnp::array_split(a[0], 5)[4]; }, {0, 3});
       w.invalid([](A a) { return jnp::array_split(a[0], 2)[0]; });
     }},
    {"jnp::hsplit",
     [](Walk& w) {
       w.err("f32[]", {s0()}, [](A a) { return jnp::hsplit(a[0], 1)[0]; });
       w.err("2 sections of 3", {f23()}, [](A a) { return jnp::hsplit(a[0], 2)[0]; });
       w.ok("f32[4] at (1,)", {f4()}, [](A a) { return jnp::hsplit(a[0], {1})[1]; }, {3});
       w.invalid([](A a) { return jnp::hsplit(a[0], 1)[0]; });
     }},
    {"jnp::vsplit",
     [](Walk& w) {
       w.err("f32[]", {s0()}, [](A a) { return jnp::vsplit(a[0], 1)[0]; });
       w.err("index 3 of 2", {f23()}, [](A a) { return jnp::vsplit(a[0], {3})[0]; });
       w.ok("2 sections", {f23()}, [](A a) { return jnp::vsplit(a[0], 2)[1]; }, {1, 3});
       w.invalid([](A a) { return jnp::vsplit(a[0], 1)[0]; });
     }},
    {"jnp::dsplit",
     [](Walk& w) {
       w.err("rank 2", {f23()}, [](A a) { return jnp::dsplit(a[0], 1)[0]; });
       w.ok("rank 3", {zeros({2, 1, 4})}, [](A a) { return jnp::dsplit(a[0], {1, 1})[2]; }, {2, 1, 3});
       w.invalid([](A a) { return jnp::dsplit(a[0], 1)[0]; });
     }},
    {"jnp::diagonal",
     [](Walk& w) {
       w.err("rank 1", {f4()}, [](A a) { return jnp::diagonal(a[0]); });
       w.err("axes (1, -1)", {f23()}, [](A a) { return jnp::diagonal(a[0], 0, 1, -1); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::diagonal(a[0], 0, 0, 2); });
       w.ok("offset 2^62", {f23()}, [](A a) { return jnp::diagonal(a[0], kHuge); }, {0});
       w.ok("offset -2^62", {f23()}, [](A a) { return jnp::diagonal(a[0], -kHuge); }, {0});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::diagonal(a[0], 1); }, {0});
       w.invalid([](A a) { return jnp::diagonal(a[0]); });
     }},
    {"jnp::trace",
     [](Walk& w) {
       w.err("rank 1", {f4()}, [](A a) { return jnp::trace(a[0]); });
       w.err("axes (0, 0)", {f23()}, [](A a) { return jnp::trace(a[0], 0, 0, 0); });
       w.err("dtype 200", {f23()}, [](A a) { return jnp::trace(a[0], 0, 0, 1, DType(200)); });
       w.ok("offset 2^62", {f23()}, [](A a) { return jnp::trace(a[0], kHuge); }, {});
       w.ok("bool", {b23()}, [](A a) { return jnp::trace(a[0]); }, {});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::trace(a[0]); }, {});
       w.invalid([](A a) { return jnp::trace(a[0]); });
     }},
    {"jnp::take_along_axis",
     [](Walk& w) {
       w.err("rank 2, indices rank 1", {f23(), zeros({2}, DType::int32)},
             [](A a) { return jnp::take_along_axis(a[0], a[1], 0); });
       w.err("float indices", {f23(), f23()}, [](A a) { return jnp::take_along_axis(a[0], a[1], 0); });
       w.err("axis 2^62", {f23(), i23()}, [](A a) { return jnp::take_along_axis(a[0], a[1], kHuge); });
       w.err("mode 'wrap'", {f23(), i23()}, [](A a) { return jnp::take_along_axis(a[0], a[1], 0, "wrap"); });
       w.err("(2,3) with indices (1,4)", {f23(), zeros({1, 4}, DType::int32)},
             [](A a) { return jnp::take_along_axis(a[0], a[1], 0); });
       w.err("no axis, 2-d indices", {f23(), i23()},
             [](A a) { return jnp::take_along_axis(a[0], a[1], std::nullopt); });
       w.ok("indices out of range", {f23(), i23()}, [](A a) { return jnp::take_along_axis(a[0], a[1], 1); }, {2, 3});
       w.ok("empty axis", {z03(), zeros({2, 3}, DType::int32)}, [](A a) { return jnp::take_along_axis(a[0], a[1], 0); },
            {2, 3});
       w.invalid([](A a) { return jnp::take_along_axis(a[0], a[0], 0); });
     }},
    {"jnp::meshgrid",
     [](Walk& w) {
       w.err("a 2-d array", {f23()}, [](A a) { return jnp::meshgrid(a)[0]; });
       w.err("a 0-d array", {f4(), s0()}, [](A a) { return jnp::meshgrid(a)[0]; });
       w.err("indexing 'yx'", {f4()}, [](A a) { return jnp::meshgrid(a, false, "yx")[0]; });
       w.ok("(4,) and (0,)", {f4(), zeros({0})}, [](A a) { return jnp::meshgrid(a)[1]; }, {0, 4});
       w.ok("sparse ij", {f4(), zeros({0})}, [](A a) { return jnp::meshgrid(a, true, "ij")[0]; }, {4, 1});
       w.invalid([](A a) { return jnp::meshgrid(a)[0]; });
     }},
    {"jnp::rot90",
     [](Walk& w) {
       w.err("rank 1", {f4()}, [](A a) { return jnp::rot90(a[0]); });
       w.err("axes (0, 0)", {f23()}, [](A a) { return jnp::rot90(a[0], 1, {0, 0}); });
       w.err("axis 2^62", {f23()}, [](A a) { return jnp::rot90(a[0], 1, {0, kHuge}); });
       w.ok("k 2^62 + 1", {f23()}, [](A a) { return jnp::rot90(a[0], kHuge + 1); }, {3, 2});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::rot90(a[0], -1); }, {3, 0});
       w.invalid([](A a) { return jnp::rot90(a[0]); });
     }},
    {"jnp::fliplr",
     [](Walk& w) {
       w.err("rank 1", {f4()}, [](A a) { return jnp::fliplr(a[0]); });
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::fliplr(a[0]); }, {0, 3});
       w.invalid([](A a) { return jnp::fliplr(a[0]); });
     }},
};

const std::vector<Case> kNumpyShape2 = {
    {"jnp::flipud",
     [](Walk& w) {
       w.err("rank 0", {s0()}, [](A a) { return jnp::flipud(a[0]); });
       w.ok("f32[4]", {f4()}, [](A a) { return jnp::flipud(a[0]); }, {4});
       w.invalid([](A a) { return jnp::flipud(a[0]); });
     }},
    {"jnp::append",
     [](Walk& w) {
       w.err("(2,3) and (4,) on axis 0", {f23(), f4()}, [](A a) { return jnp::append(a[0], a[1], 0); });
       w.err("0-d on axis 0", {s0(), s0()}, [](A a) { return jnp::append(a[0], a[1], 0); });
       w.err("axis 2^62", {f23(), f23()}, [](A a) { return jnp::append(a[0], a[1], kHuge); });
       w.ok("flattened", {f23(), f4()}, [](A a) { return jnp::append(a[0], a[1]); }, {10});
       w.ok("f32[0,3] on axis 0", {z03(), f23()}, [](A a) { return jnp::append(a[0], a[1], 0); }, {2, 3});
       w.invalid([](A a) { return jnp::append(a[0], a[0]); });
     }},
    {"jnp::diff",
     [](Walk& w) {
       w.err("n -1", {f23()}, [](A a) { return jnp::diff(a[0], -1); });
       w.err("0-d", {s0()}, [](A a) { return jnp::diff(a[0]); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::diff(a[0], 1, 2); });
       w.err("prepend (4,) on axis 1", {f23(), f4()}, [](A a) { return jnp::diff(a[0], 1, 1, a[1]); });
       w.ok("n 2^62", {f23()}, [](A a) { return jnp::diff(a[0], kHuge); }, {2, 0});
       w.ok("bool", {b23()}, [](A a) { return jnp::diff(a[0], 1, 0); }, {1, 3});
       w.ok("0-d append", {f23(), s0()}, [](A a) { return jnp::diff(a[0], 1, -1, std::nullopt, a[1]); }, {2, 3});
       w.invalid([](A a) { return jnp::diff(a[0]); });
     }},
    {"jnp::tensordot",
     [](Walk& w) {
       w.err("3 axes of rank 2", {f23(), f23()}, [](A a) { return jnp::tensordot(a[0], a[1], 3); });
       w.err("sizes 3 and 2", {f23(), f23()}, [](A a) { return jnp::tensordot(a[0], a[1], 1); });
       w.err("axes (1, 1) and (0, 0)", {f23(), f23()}, [](A a) {
         return jnp::tensordot(a[0], a[1], {{1, 1}, {0, 0}});
       });
       w.err("axis 2^62", {f23(), f23()}, [](A a) { return jnp::tensordot(a[0], a[1], {{kHuge}, {0}}); });
       w.err("2 axes and 1", {f23(), f23()}, [](A a) { return jnp::tensordot(a[0], a[1], {{0, 1}, {0}}); });
       w.err("preferred dtype 200", {f23(), f23()}, [](A a) { return jnp::tensordot(a[0], a[1], 0, DType(200)); });
       w.ok("count -2^62", {f23(), f4()}, [](A a) { return jnp::tensordot(a[0], a[1], -kHuge); }, {2, 3, 4});
       w.ok("(0,3) . (3,)", {z03(), ones({3})}, [](A a) { return jnp::tensordot(a[0], a[1], 1); }, {0});
       w.ok("bool", {b23(), b23()}, [](A a) { return jnp::tensordot(a[0], a[1], 2); }, {});
       w.invalid([](A a) { return jnp::tensordot(a[0], a[0]); });
     }},
    {"jnp::inner",
     [](Walk& w) {
       w.err("sizes 3 and 4", {f23(), f4()}, [](A a) { return jnp::inner(a[0], a[1]); });
       w.ok("(2,3) and ()", {f23(), s0()}, [](A a) { return jnp::inner(a[0], a[1]); }, {2, 3});
       w.ok("(0,3) and (2,3)", {z03(), f23()}, [](A a) { return jnp::inner(a[0], a[1]); }, {0, 2});
       w.invalid([](A a) { return jnp::inner(a[0], a[0]); });
     }},
    {"jnp::vdot",
     [](Walk& w) {
       w.err("sizes 6 and 4", {f23(), f4()}, [](A a) { return jnp::vdot(a[0], a[1]); });
       w.ok("(2,3) and (3,2)", {f23(), lax::transpose(f23(), {1, 0})}, [](A a) { return jnp::vdot(a[0], a[1]); }, {});
       w.ok("empty", {z03(), zeros({0})}, [](A a) { return jnp::vdot(a[0], a[1]); }, {});
       w.invalid([](A a) { return jnp::vdot(a[0], a[0]); });
     }},
    {"jnp::kron",
     [](Walk& w) {
       w.err("bool", {b23(), b23()}, [](A a) { return jnp::kron(a[0], a[1]); });
       w.ok("(2,3) and (4,)", {f23(), f4()}, [](A a) { return jnp::kron(a[0], a[1]); }, {2, 12});
       w.ok("(0,3) and ()", {z03(), s0()}, [](A a) { return jnp::kron(a[0], a[1]); }, {0, 3});
       w.invalid([](A a) { return jnp::kron(a[0], a[0]); });
     }},
    {"jnp::cross",
     [](Walk& w) {
       w.err("4-vectors", {f4(), f4()}, [](A a) { return jnp::cross(a[0], a[1]); });
       w.err("0-d", {s0(), f23()}, [](A a) { return jnp::cross(a[0], a[1]); });
       w.err("axisc 2^62", {f23(), f23()}, [](A a) { return jnp::cross(a[0], a[1], -1, -1, kHuge); });
       w.err("shapes (2,3) and (4,3)", {f23(), zeros({4, 3})}, [](A a) { return jnp::cross(a[0], a[1]); });
       w.ok("3-vectors", {f23(), f23()}, [](A a) { return jnp::cross(a[0], a[1]); }, {2, 3});
       w.ok("2-vectors", {f23(), f23()}, [](A a) { return jnp::cross(a[0], a[1], 0, 0); }, {3});
       w.ok("(0,3)", {z03(), z03()}, [](A a) { return jnp::cross(a[0], a[1], -1, -1, 0); }, {3, 0});
       w.invalid([](A a) { return jnp::cross(a[0], a[0]); });
     }},
    {"jnp::diagflat",
     [](Walk& w) {
       w.err("k 2^62", {f23()}, [](A a) { return jnp::diagflat(a[0], kHuge); });
       w.ok("(2,3), k -1", {f23()}, [](A a) { return jnp::diagflat(a[0], -1); }, {7, 7});
       w.ok("f32[0,3], k 2", {z03()}, [](A a) { return jnp::diagflat(a[0], 2); }, {2, 2});
       w.invalid([](A a) { return jnp::diagflat(a[0]); });
     }},
    {"jnp::tri",
     [](Walk& w) {
       w.err("N -1", {}, [](A) { return jnp::tri(-1); });
       w.err("M -1", {}, [](A) { return jnp::tri(2, -1); });
       w.err("N 2^62", {}, [](A) { return jnp::tri(kHuge, 4); });
       w.err("dtype 200", {}, [](A) { return jnp::tri(2, 2, 0, DType(200)); });
       w.ok("k 2^62", {}, [](A) { return jnp::tri(2, 3, kHuge); }, {2, 3});
       w.ok("N 0", {}, [](A) { return jnp::tri(0, 3); }, {0, 3});
     }},
    {"jnp::vander",
     [](Walk& w) {
       w.err("2-d", {f23()}, [](A a) { return jnp::vander(a[0]); });
       w.err("bool", {b23()}, [](A a) { return jnp::vander(a[0]); });
       w.err("N -1", {f4()}, [](A a) { return jnp::vander(a[0], -1); });
       w.err("N 2^62", {f4()}, [](A a) { return jnp::vander(a[0], kHuge); });
       w.ok("N 0", {f4()}, [](A a) { return jnp::vander(a[0], 0); }, {4, 0});
       w.ok("empty", {zeros({0})}, [](A a) { return jnp::vander(a[0], 3, true); }, {0, 3});
       w.invalid([](A a) { return jnp::vander(a[0]); });
     }},
    {"jnp::tril_indices",
     [](Walk& w) {
       w.err("n -1", {}, [](A) { return jnp::tril_indices(-1).first; });
       w.err("m -1", {}, [](A) { return jnp::tril_indices(2, 0, -1).first; });
       w.err("n 2^62", {}, [](A) { return jnp::tril_indices(kHuge).first; });
       w.ok("k 2^62", {}, [](A) { return jnp::tril_indices(2, kHuge, 3).second; }, {6});
       w.ok("n 0", {}, [](A) { return jnp::tril_indices(0).first; }, {0});
     }},
    {"jnp::triu_indices",
     [](Walk& w) {
       w.err("n -1", {}, [](A) { return jnp::triu_indices(-1).first; });
       w.err("n 2^62", {}, [](A) { return jnp::triu_indices(kHuge, 0, 2).first; });
       w.ok("k -2^62", {}, [](A) { return jnp::triu_indices(2, -kHuge, 3).second; }, {6});
       w.ok("k 5", {}, [](A) { return jnp::triu_indices(3, 5).first; }, {0});
     }},
    {"jnp::diag_indices",
     [](Walk& w) {
       w.err("n -1", {}, [](A) { return jnp::diag_indices(-1)[0]; });
       w.err("ndim -1", {}, [](A) { return jnp::diag_indices(2, -1)[0]; });
       w.err("n 2^62", {}, [](A) { return jnp::diag_indices(kHuge)[0]; });
       w.ok("n 0, ndim 3", {}, [](A) { return jnp::diag_indices(0, 3)[2]; }, {0});
     }},
    {"jnp::indices",
     [](Walk& w) {
       w.err("dimension -1", {}, [](A) { return jnp::indices({2, -1}); });
       w.err("dimensions (2^62, 4)", {}, [](A) { return jnp::indices({kHuge, 4}); });
       w.err("bool", {}, [](A) { return jnp::indices({2}, DType::bool_); });
       w.err("dtype 200", {}, [](A) { return jnp::indices({2}, DType(200), true)[0]; });
       w.ok("()", {}, [](A) { return jnp::indices({}); }, {0});
       w.ok("(2, 0)", {}, [](A) { return jnp::indices({2, 0}); }, {2, 2, 0});
       w.ok("sparse (2, 3)", {}, [](A) { return jnp::indices({2, 3}, DType::int32, true)[1]; }, {1, 3});
     }},
    {"jnp::unravel_index",
     [](Walk& w) {
       w.ok("(2,3) into (2^62, 4)", {i23()}, [](A a) { return jnp::unravel_index(a[0], {kHuge, 4})[0]; }, {2, 3});
       w.ok("floats", {f23()}, [](A a) { return jnp::unravel_index(a[0], {3, 4})[1]; }, {2, 3});
       w.ok("f32[0,3]", {z03()}, [](A a) { return jnp::unravel_index(a[0], {3})[0]; }, {0, 3});
       w.invalid([](A a) { return jnp::unravel_index(a[0], {3})[0]; });
     }},
    {"jnp::ravel_multi_index",
     [](Walk& w) {
       w.err("1 array for 2 dims", {i23()}, [](A a) { return jnp::ravel_multi_index(a, {3, 4}, "clip"); });
       w.err("floats", {f23(), i23()}, [](A a) { return jnp::ravel_multi_index(a, {3, 4}, "clip"); });
       w.err("mode 'bogus'", {i23(), i23()}, [](A a) { return jnp::ravel_multi_index(a, {3, 4}, "bogus"); });
       w.err("order 'K'", {i23(), i23()}, [](A a) { return jnp::ravel_multi_index(a, {3, 4}, "clip", "K"); });
       w.err("dims (2^62, 4)", {i23(), i23()}, [](A a) { return jnp::ravel_multi_index(a, {kHuge, 4}, "clip"); });
       w.err("dtype f32", {i23(), i23()}, [](A a) {
         return jnp::ravel_multi_index(a, {3, 4}, "clip", "C", DType::float32);
       });
       w.err("mode 'raise' out of range", {i23(), i23()}, [](A a) { return jnp::ravel_multi_index(a, {3, 4}); });
       w.ok("wrap", {i23(), i23()}, [](A a) { return jnp::ravel_multi_index(a, {3, 4}, "wrap"); }, {2, 3});
       w.ok("no arrays", {}, [](A a) { return jnp::ravel_multi_index(a, {}, "clip"); }, {});
       w.invalid([](A a) { return jnp::ravel_multi_index(a, {3}, "clip"); });
     }},
    {"jnp::delete_",
     [](Walk& w) {
       w.err("index 3 of 3", {f23()}, [](A a) { return jnp::delete_(a[0], 3, 1); });
       w.err("index 2^62", {f23()}, [](A a) { return jnp::delete_(a[0], kHuge); });
       w.err("axis 2", {f23()}, [](A a) { return jnp::delete_(a[0], 0, 2); });
       w.err("float indices", {f23(), f4()}, [](A a) { return jnp::delete_(a[0], a[1], 0); });
       w.err("mask of 4 for 3", {f23(), f4() > 0.0f}, [](A a) { return jnp::delete_(a[0], a[1], 1); });
       w.either("index array", {f23(), zeros({2}, DType::int32)}, [](A a) { return jnp::delete_(a[0], a[1], 1); });
       w.ok("list (0, 0, -1)", {f23()}, [](A a) { return jnp::delete_(a[0], {0, 0, -1}, 1); }, {2, 1});
       w.ok("unique indices 2^62", {f23(), jnp::full({1}, kHuge, DType::int64)},
            [](A a) { return jnp::delete_(a[0], a[1], 1, true); }, {2, 2});
       w.ok("f32[0,3], no indices", {z03()}, [](A a) { return jnp::delete_(a[0], std::vector<int64_t>{}, 0); }, {0, 3});
       w.invalid([](A a) { return jnp::delete_(a[0], 0); });
     }},
    {"jnp::insert",
     [](Walk& w) {
       w.err("axis 2", {f23(), s0()}, [](A a) { return jnp::insert(a[0], 0, a[1], 2); });
       w.err("float index", {f23(), s0()}, [](A a) { return jnp::insert(a[0], a[1], a[1], 0); });
       w.err("2-d indices", {f23(), i23()}, [](A a) { return jnp::insert(a[0], a[1], 1.0f, 0); });
       w.err("3 values at 2 indices", {f23(), f4()}, [](A a) { return jnp::insert(a[0], {0, 1}, a[1]); });
       w.ok("index 2^62", {f23(), s0()}, [](A a) { return jnp::insert(a[0], kHuge, a[1], 1); }, {2, 4});
       w.ok("f32[0,3]", {z03(), f4()}, [](A a) { return jnp::insert(a[0], 0, a[1]); }, {4});
       w.ok("no indices", {f23(), s0()}, [](A a) { return jnp::insert(a[0], std::vector<int64_t>{}, a[1], 0); },
            {2, 3});
       w.invalid([](A a) { return jnp::insert(a[0], 0, a[0]); });
     }},
};

}  // namespace
