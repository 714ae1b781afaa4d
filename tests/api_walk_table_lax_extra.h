// The api walk's table, lax_extra.h's compositions (see api_walk_table.h).
#pragma once
#include "jitx/lax_extra.h"

namespace {

using Pads = std::vector<std::pair<int64_t, int64_t>>;

const std::vector<Case> kLaxExtra = {
    {"lax::index_in_dim",
     [](Walk& w) {
       w.err("index 2 of size 2", {f23()}, [](A a) { return lax::index_in_dim(a[0], 2, 0); });
       w.err("axis 2", {f23()}, [](A a) { return lax::index_in_dim(a[0], 0, 2); });
       w.ok("index -1, keepdims false", {f23()}, [](A a) { return lax::index_in_dim(a[0], -1, 1, false); }, {2});
     }},
    {"lax::dynamic_slice_in_dim",
     [](Walk& w) {
       w.err("size 4 of 3", {f23(), Array(0)}, [](A a) { return lax::dynamic_slice_in_dim(a[0], a[1], 4, 1); });
       w.err("a float start", {f23(), s0()}, [](A a) { return lax::dynamic_slice_in_dim(a[0], a[1], 1, 1); });
       w.ok("clamped start", {f23(), Array(7)}, [](A a) { return lax::dynamic_slice_in_dim(a[0], a[1], 2, -1); },
            {2, 2});
     }},
    {"lax::dynamic_index_in_dim",
     [](Walk& w) {
       w.err("axis -3", {f23(), Array(0)}, [](A a) { return lax::dynamic_index_in_dim(a[0], a[1], -3); });
       w.ok("keepdims false", {f23(), Array(1)}, [](A a) { return lax::dynamic_index_in_dim(a[0], a[1], 1, false); },
            {2});
     }},
    {"lax::dynamic_update_slice_in_dim",
     [](Walk& w) {
       w.err("update of another rank", {f23(), f4(), Array(0)},
             [](A a) { return lax::dynamic_update_slice_in_dim(a[0], a[1], a[2], 0); });
       w.ok("a row", {f23(), ones({1, 3}), Array(1)},
            [](A a) { return lax::dynamic_update_slice_in_dim(a[0], a[1], a[2], 0); }, {2, 3});
     }},
    {"lax::dynamic_update_index_in_dim",
     [](Walk& w) {
       w.err("update of the wrong length", {f23(), f4(), Array(0)},
             [](A a) { return lax::dynamic_update_index_in_dim(a[0], a[1], a[2], 0); });
       w.ok("a row without the axis", {f23(), ones({3}), Array(1)},
            [](A a) { return lax::dynamic_update_index_in_dim(a[0], a[1], a[2], 0); }, {2, 3});
     }},
    {"lax::squeeze",
     [](Walk& w) {
       w.err("an axis of size 2", {f23()}, [](A a) { return lax::squeeze(a[0], {0}); });
       w.err("axis 5", {f23()}, [](A a) { return lax::squeeze(a[0], {5}); });
       w.err("a repeated axis", {ones({1, 3})}, [](A a) { return lax::squeeze(a[0], {0, -2}); });
       w.ok("axis -2 of size 1", {ones({1, 3})}, [](A a) { return lax::squeeze(a[0], {-2}); }, {3});
     }},
    {"lax::expand_dims",
     [](Walk& w) {
       w.err("axis 4 of rank 3", {f23()}, [](A a) { return lax::expand_dims(a[0], {4}); });
       w.err("a repeated axis", {f23()}, [](A a) { return lax::expand_dims(a[0], {0, -4}); });
       w.ok("axes 0 and -1", {f23()}, [](A a) { return lax::expand_dims(a[0], {0, -1}); }, {1, 2, 3, 1});
     }},
    {"lax::collapse",
     [](Walk& w) {
       w.err("stop before start", {f23()}, [](A a) { return lax::collapse(a[0], 1, 0); });
       w.ok("all axes", {f23()}, [](A a) { return lax::collapse(a[0], 0); }, {6});
     }},
    {"lax::split",
     [](Walk& w) {
       w.err("sizes summing to 4 of 3", {f23()}, [](A a) { return lax::split(a[0], {1, 3}, 1).at(0); });
       w.err("a negative size", {f23()}, [](A a) { return lax::split(a[0], {-1, 4}, 1).at(0); });
       w.ok("(1, 2)", {f23()}, [](A a) { return lax::split(a[0], {1, 2}, 1).at(1); }, {2, 2});
     }},
    {"lax::integer_pow",
     [](Walk& w) {
       w.err("int32 to -1", {i23()}, [](A a) { return lax::integer_pow(a[0], -1); });
       w.err("bool", {b23()}, [](A a) { return lax::integer_pow(a[0], 2); });
       w.ok("f32 to -3", {pos23()}, [](A a) { return lax::integer_pow(a[0], -3); }, {2, 3});
       w.ok("i32 to 0", {i23()}, [](A a) { return lax::integer_pow(a[0], 0); }, {2, 3});
     }},
    {"lax::square",
     [](Walk& w) {
       w.err("bool", {b23()}, [](A a) { return lax::square(a[0]); });
       w.ok("f32[0,3]", {z03()}, [](A a) { return lax::square(a[0]); }, {0, 3});
     }},
    {"lax::clz",
     [](Walk& w) {
       w.err("f32", {f23()}, [](A a) { return lax::clz(a[0]); });
       w.err("bool", {b23()}, [](A a) { return lax::clz(a[0]); });
       w.ok("i32", {i23()}, [](A a) { return lax::clz(a[0]); }, {2, 3});
     }},
    {"lax::full_like",
     [](Walk& w) {
       w.err("a negative shape", {f23()},
             [](A a) { return lax::full_like(a[0], Array(1.0f), std::nullopt, Shape{-1}); });
       w.ok("a shape and dtype", {f23()}, [](A a) { return lax::full_like(a[0], Array(2), DType::int8, Shape{4}); },
            {4});
     }},
    {"lax::sort_key_val",
     [](Walk& w) {
       w.err("values of another shape", {f23(), f4()}, [](A a) { return lax::sort_key_val(a[0], a[1]).second; });
       w.err("dimension 2", {f23(), f23()}, [](A a) { return lax::sort_key_val(a[0], a[1], 2).first; });
       w.ok("int values", {f23(), i23()}, [](A a) { return lax::sort_key_val(a[0], a[1], 0).second; }, {2, 3});
     }},
    {"lax::batch_matmul",
     [](Walk& w) {
       w.err("rank 1", {f4(), f4()}, [](A a) { return lax::batch_matmul(a[0], a[1]); });
       w.err("different batches", {ones({2, 2, 3}), ones({3, 3, 2})},
             [](A a) { return lax::batch_matmul(a[0], a[1]); });
       w.err("contracting 3 and 2", {ones({2, 2, 3}), ones({2, 2, 2})},
             [](A a) { return lax::batch_matmul(a[0], a[1]); });
       w.ok("[2,2,3] x [2,3,4]", {ones({2, 2, 3}), ones({2, 3, 4})}, [](A a) { return lax::batch_matmul(a[0], a[1]); },
            {2, 2, 4});
     }},
    {"lax::padtype_to_pads",
     [](Walk& w) {
       auto pads = [](std::string_view p) {
         return [p](A) {
           auto v = lax::padtype_to_pads({7, 5}, {3, 2}, {2, 1}, p);
           return Array(static_cast<int32_t>(v.at(0).first + v.at(1).second));
         };
       };
       w.err("'FULL'", {}, pads("FULL"));
       w.err("two strides for one axis", {}, [](A) {
         return Array(static_cast<int32_t>(lax::padtype_to_pads({7}, {3}, {2, 1}, "SAME").size()));
       });
       w.ok("'same'", {}, pads("same"), {});
     }},
    {"lax::conv",
     [](Walk& w) {
       w.err("rank 3 and 4", {ones({1, 1, 5}), ones({1, 1, 2, 2})},
             [](A a) { return lax::conv(a[0], a[1], {1}, "SAME"); });
       w.err("padding 'FULL'", {ones({1, 1, 5, 5}), ones({1, 1, 2, 2})}, [](A a) {
         return lax::conv(a[0], a[1], {1, 1}, "FULL");
       });
       w.ok("SAME, stride 2", {ones({1, 1, 5, 5}), ones({1, 1, 2, 2})},
            [](A a) {
              return lax::conv(a[0], a[1], {2, 2}, "SAME");
            },
            {1, 1, 3, 3});
     }},
    {"lax::conv_with_general_padding",
     [](Walk& w) {
       w.err("one pad for two axes", {ones({1, 1, 5, 5}), ones({1, 1, 2, 2})}, [](A a) {
         return lax::conv_with_general_padding(a[0], a[1], {1, 1}, Pads{{1, 1}}, {}, {});
       });
       w.ok("dilated", {ones({1, 1, 5, 5}), ones({1, 1, 2, 2})},
            [](A a) {
              return lax::conv_with_general_padding(a[0], a[1], {1, 1}, Pads{{0, 0}, {1, 0}}, {2, 1}, {1, 2});
            },
            {1, 1, 8, 4});
     }},
    {"lax::conv_transpose",
     [](Walk& w) {
       w.err("padding 'FULL'", {ones({1, 4, 4, 2}), ones({3, 3, 2, 5})}, [](A a) {
         return lax::conv_transpose(a[0], a[1], {2, 2}, "FULL");
       });
       w.err("one stride for two axes", {ones({1, 4, 4, 2}), ones({3, 3, 2, 5})},
             [](A a) { return lax::conv_transpose(a[0], a[1], {2}, "SAME"); });
       w.err("channels 2 against 3", {ones({1, 4, 4, 2}), ones({3, 3, 3, 5})}, [](A a) {
         return lax::conv_transpose(a[0], a[1], {2, 2}, "SAME");
       });
       w.ok("SAME, stride 2", {ones({1, 4, 4, 2}), ones({3, 3, 2, 5})},
            [](A a) {
              return lax::conv_transpose(a[0], a[1], {2, 2}, "SAME");
            },
            {1, 8, 8, 5});
     }},
    {"lax::map",
     [](Walk& w) {
       w.err("a 0-d array", {s0()}, [](A a) { return lax::map([](const Array& r) { return r * 2.0f; }, a[0]); });
       w.ok("rows", {f23()}, [](A a) { return lax::map([](const Array& r) { return jnp::sum(r); }, a[0]); }, {2});
     }},
};

namespace LAW = jnp::linalg;
const std::vector<Case> kLinalgMore = {
    {"jnp::linalg::matrix_rank",
     [](Walk& w) {
       w.ok("f32[2,3]", {f23()}, [](A a) { return LAW::matrix_rank(a[0]); }, {});
       w.ok("f32[4]", {f4()}, [](A a) { return LAW::matrix_rank(a[0]); }, {});
       w.invalid([](A a) { return LAW::matrix_rank(a[0]); });
     }},
    {"jnp::linalg::cond",
     [](Walk& w) {
       w.err("f32[4] (rank 1)", {f4()}, [](A a) { return LAW::cond(a[0]); });
       w.err("f32[0,3]", {z03()}, [](A a) { return LAW::cond(a[0]); });
       w.err("p=1 of a 2x3", {f23()}, [](A a) { return LAW::cond(a[0], 1.0); });
       w.err("p='fro' of a 2x3", {f23()}, [](A a) { return LAW::cond(a[0], "fro"); });
       w.ok("f32[2,3]", {f23()}, [](A a) { return LAW::cond(a[0]); }, {});
       w.invalid([](A a) { return LAW::cond(a[0]); });
     }},
    {"jnp::linalg::multi_dot",
     [](Walk& w) {
       w.err("one array", {f23()}, [](A a) { return LAW::multi_dot({a[0]}); });
       w.err("2x3 by 2x3", {f23(), f23()}, [](A a) { return LAW::multi_dot({a[0], a[1]}); });
       w.err("a 0-d array", {s0(), f23()}, [](A a) { return LAW::multi_dot({a[0], a[1]}); });
       w.ok("2x3 by 3x2", {f23(), lax::transpose(f23(), {1, 0})},
            [](A a) {
              return LAW::multi_dot({a[0], a[1]});
            },
            {2, 2});
     }},
    {"jnp::linalg::tensorinv",
     [](Walk& w) {
       w.err("ind 0", {ones({2, 2})}, [](A a) { return LAW::tensorinv(a[0], 0); });
       w.err("2x3", {f23()}, [](A a) { return LAW::tensorinv(a[0], 1); });
       w.ok("4x2x2", {ones({4, 2, 2})}, [](A a) { return LAW::tensorinv(a[0], 1); }, {2, 2, 4});
     }},
    {"jnp::linalg::tensorsolve",
     [](Walk& w) {
       w.err("b of another shape", {ones({2, 3, 6}), ones({3, 2})}, [](A a) { return LAW::tensorsolve(a[0], a[1]); });
       w.err("axis 5", {ones({2, 3, 6}), ones({2, 3})},
             [](A a) { return LAW::tensorsolve(a[0], a[1], std::vector<int64_t>{5}); });
       w.ok("2x3x6 and 2x3", {ones({2, 3, 6}), ones({2, 3})}, [](A a) { return LAW::tensorsolve(a[0], a[1]); }, {6});
     }},
    {"jnp::linalg::vector_norm",
     [](Walk& w) {
       w.err("axis 2", {f23()}, [](A a) { return LAW::vector_norm(a[0], std::vector<int64_t>{2}); });
       w.ok("every axis", {f23()}, [](A a) { return LAW::vector_norm(a[0]); }, {});
       w.ok("ord 3 over axis 1", {f23()}, [](A a) { return LAW::vector_norm(a[0], std::vector<int64_t>{1}, true, 3); },
            {2, 1});
     }},
    {"jnp::linalg::matrix_norm",
     [](Walk& w) {
       w.err("f32[4]", {f4()}, [](A a) { return LAW::matrix_norm(a[0]); });
       w.err("ord 'bad'", {f23()}, [](A a) { return LAW::matrix_norm(a[0], false, "bad"); });
       w.ok("nuc, keepdims", {f23()}, [](A a) { return LAW::matrix_norm(a[0], true, "nuc"); }, {1, 1});
       w.ok("ord 2", {f23()}, [](A a) { return LAW::matrix_norm(a[0], false, 2.0); }, {});
     }},
    {"jnp::linalg::matrix_transpose",
     [](Walk& w) {
       w.err("f32[4]", {f4()}, [](A a) { return LAW::matrix_transpose(a[0]); });
       w.ok("f32[2,3]", {f23()}, [](A a) { return LAW::matrix_transpose(a[0]); }, {3, 2});
     }},
    {"jnp::linalg::outer",
     [](Walk& w) {
       w.err("a 2-d x1", {f23(), f4()}, [](A a) { return LAW::outer(a[0], a[1]); });
       w.ok("f32[4] and f32[4]", {f4(), f4()}, [](A a) { return LAW::outer(a[0], a[1]); }, {4, 4});
     }},
    {"jnp::linalg::diagonal",
     [](Walk& w) {
       w.err("f32[4]", {f4()}, [](A a) { return LAW::diagonal(a[0]); });
       w.ok("offset 1", {f23()}, [](A a) { return LAW::diagonal(a[0], 1); }, {2});
     }},
    {"jnp::linalg::trace",
     [](Walk& w) {
       w.err("f32[4]", {f4()}, [](A a) { return LAW::trace(a[0]); });
       w.ok("f32[2,3]", {f23()}, [](A a) { return LAW::trace(a[0]); }, {});
     }},
    {"jnp::linalg::cross",
     [](Walk& w) {
       w.err("2-vectors", {ones({2}), ones({2})}, [](A a) { return LAW::cross(a[0], a[1]); });
       w.err("axis 3", {ones({3, 3}), ones({3, 3})}, [](A a) { return LAW::cross(a[0], a[1], 3); });
       w.ok("3-vectors on axis 0", {ones({3, 2}), ones({3, 2})}, [](A a) { return LAW::cross(a[0], a[1], 0); }, {3, 2});
     }},
    {"jnp::linalg::matmul",
     [](Walk& w) {
       w.err("(2,3) by (2,3)", {f23(), f23()}, [](A a) { return LAW::matmul(a[0], a[1]); });
       w.ok("(2,3) by (3,)", {f23(), ones({3})}, [](A a) { return LAW::matmul(a[0], a[1]); }, {2});
     }},
    {"jnp::linalg::tensordot",
     [](Walk& w) {
       w.err("axes 3 of rank 2", {f23(), f23()}, [](A a) { return LAW::tensordot(a[0], a[1], 3); });
       w.ok("axes 1", {f23(), lax::transpose(f23(), {1, 0})}, [](A a) { return LAW::tensordot(a[0], a[1], 1); },
            {2, 2});
     }},
    {"jnp::linalg::vecdot",
     [](Walk& w) {
       w.err("3 against 4", {f23(), f4()}, [](A a) { return LAW::vecdot(a[0], a[1]); });
       w.err("axis 2", {f23(), f23()}, [](A a) { return LAW::vecdot(a[0], a[1], 2); });
       w.ok("rows", {f23(), f23()}, [](A a) { return LAW::vecdot(a[0], a[1]); }, {2});
     }},
};

}  // namespace
