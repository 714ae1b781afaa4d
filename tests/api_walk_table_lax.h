// The api walk's table, second part: lax (lax.h, lax_control.h), nn and random (see api_walk_table.h).
#pragma once

namespace {

Array cf(const std::vector<Array>& v) { return v.at(0); }

const std::vector<Case> kLax = {
    JITX_U(lax, neg),
    JITX_U(lax, abs),
    JITX_U(lax, sign),
    JITX_U(lax, floor),
    JITX_U(lax, ceil),
    JITX_U(lax, exp),
    JITX_U(lax, exp2),
    JITX_U(lax, expm1),
    JITX_U(lax, log),
    JITX_U(lax, log1p),
    JITX_U(lax, sqrt),
    JITX_U(lax, rsqrt),
    JITX_U(lax, cbrt),
    JITX_U(lax, tanh),
    JITX_U(lax, logistic),
    JITX_U(lax, sin),
    JITX_U(lax, cos),
    JITX_U(lax, tan),
    JITX_U(lax, asin),
    JITX_U(lax, acos),
    JITX_U(lax, atan),
    JITX_U(lax, sinh),
    JITX_U(lax, cosh),
    JITX_U(lax, asinh),
    JITX_U(lax, acosh),
    JITX_U(lax, atanh),
    JITX_U(lax, erf),
    JITX_U(lax, erfc),
    JITX_U(lax, erf_inv),
    JITX_U(lax, lgamma),
    JITX_U(lax, digamma),
    JITX_U(lax, is_finite),
    JITX_UI(lax, bitwise_not),
    JITX_UI(lax, population_count),
    JITX_U(lax, round),
    JITX_B(lax, add, true),
    JITX_B(lax, sub, true),
    JITX_B(lax, mul, true),
    JITX_B(lax, div, true),
    JITX_B(lax, rem, true),
    JITX_B(lax, pow, true),
    JITX_B(lax, max, true),
    JITX_B(lax, min, true),
    JITX_B(lax, atan2, true),
    JITX_BI(lax, bitwise_and),
    JITX_BI(lax, bitwise_or),
    JITX_BI(lax, bitwise_xor),
    JITX_BI(lax, shift_left),
    JITX_BI(lax, shift_right_arithmetic),
    JITX_BI(lax, shift_right_logical),
    JITX_B(lax, eq, true),
    JITX_B(lax, ne, true),
    JITX_B(lax, lt, true),
    JITX_B(lax, le, true),
    JITX_B(lax, gt, true),
    JITX_B(lax, ge, true),
    JITX_B(lax, nextafter, true),
    JITX_R(lax, reduce_sum, true),
    JITX_R(lax, reduce_prod, true),
    JITX_R(lax, reduce_max, true),
    JITX_R(lax, reduce_min, true),
    JITX_AX(lax, argmax, {2}),
    JITX_AX(lax, argmin, {2}),
    JITX_AX(lax, cumsum, Shape({2, 3})),
    JITX_AX(lax, cumprod, Shape({2, 3})),
    JITX_AX(lax, cummax, Shape({2, 3})),
    JITX_AX(lax, cummin, Shape({2, 3})),
    JITX_AX(lax, cumlogsumexp, Shape({2, 3})),
    JITX_AX(lax, sort, Shape({2, 3})),
    {"lax::reduce_and",
     [](Walk& w) {
       w.err("axis 2", {b23()}, [](A a) { return lax::reduce_and(a[0], {2}); });
       w.either("f32 operand", {f23()}, [](A a) { return lax::reduce_and(a[0], {0}); });
       w.ok("axis 0", {b23()}, [](A a) { return lax::reduce_and(a[0], {0}); }, {3});
     }},
    {"lax::reduce_or",
     [](Walk& w) {
       w.err("axes (1, 1)", {b23()}, [](A a) { return lax::reduce_or(a[0], {1, 1}); });
       w.ok("axis 1", {b23()}, [](A a) { return lax::reduce_or(a[0], {1}); }, {2});
     }},
    {"lax::select_n",
     [](Walk& w) {
       w.err("f32 which", {f23(), f23(), f23()}, [](A a) { return lax::select_n(a[0], a[1], a[2]); });
       w.err("cases (2,3) and (4,)", {b23(), f23(), f4()}, [](A a) { return lax::select_n(a[0], a[1], a[2]); });
       w.ok("bool", {b23(), f23(), f23()}, [](A a) { return lax::select_n(a[0], a[1], a[2]); }, {2, 3});
     }},
    {"lax::select",
     [](Walk& w) {
       w.err("i32 and f32 cases", {b23(), i23(), f23()}, [](A a) { return lax::select(a[0], a[1], a[2]); });
       w.ok("bool", {b23(), f23(), f23()}, [](A a) { return lax::select(a[0], a[1], a[2]); }, {2, 3});
     }},
    {"lax::clamp",
     [](Walk& w) {
       w.err("bounds of shape (4,)", {f4(), f23(), f4()}, [](A a) { return lax::clamp(a[0], a[1], a[2]); });
       w.err("i32 bounds", {i23(), f23(), i23()}, [](A a) { return lax::clamp(a[0], a[1], a[2]); });
       w.ok("scalar bounds", {s0(), f23(), s0()}, [](A a) { return lax::clamp(a[0], a[1], a[2]); }, {2, 3});
     }},
    {"lax::convert_element_type",
     [](Walk& w) {
       w.err("DType(200)", {f23()}, [](A a) { return lax::convert_element_type(a[0], static_cast<DType>(200)); });
       w.ok("u8 of f32[0,3]", {z03()}, [](A a) { return lax::convert_element_type(a[0], DType::uint8); }, {0, 3});
     }},
    {"lax::bitcast_convert_type",
     [](Walk& w) {
       w.err("DType(200)", {f23()}, [](A a) { return lax::bitcast_convert_type(a[0], static_cast<DType>(200)); });
       w.either("f32 to f64", {f23()}, [](A a) { return lax::bitcast_convert_type(a[0], DType::float64); });
       w.ok("f32 to i32", {f23()}, [](A a) { return lax::bitcast_convert_type(a[0], DType::int32); }, {2, 3});
     }},
    {"lax::broadcast_in_dim",
     [](Walk& w) {
       w.err("dims of the wrong length", {f23()}, [](A a) { return lax::broadcast_in_dim(a[0], {2, 3}, {0}); });
       w.ok("decreasing dims (a transpose)", {f23()},
            [](A a) {
              return lax::broadcast_in_dim(a[0], {3, 2}, {1, 0});
            },
            {3, 2});
       w.err("repeated dims", {f23()}, [](A a) { return lax::broadcast_in_dim(a[0], {3, 3}, {1, 1}); });
       w.err("size 3 into 4", {f23()}, [](A a) { return lax::broadcast_in_dim(a[0], {2, 4}, {0, 1}); });
       w.err("negative size", {f23()}, [](A a) { return lax::broadcast_in_dim(a[0], {-1, 2, 3}, {1, 2}); });
       w.err("size 2^62 x 6", {f23()}, [](A a) { return lax::broadcast_in_dim(a[0], {kHuge, 2, 3}, {1, 2}); });
       w.ok("(5, 2, 3)", {f23()}, [](A a) { return lax::broadcast_in_dim(a[0], {5, 2, 3}, {1, 2}); }, {5, 2, 3});
     }},
    {"lax::broadcast",
     [](Walk& w) {
       w.err("(-2,)", {f23()}, [](A a) { return lax::broadcast(a[0], {-2}); });
       w.ok("(0,)", {f23()}, [](A a) { return lax::broadcast(a[0], {0}); }, {0, 2, 3});
     }},
    {"lax::reshape",
     [](Walk& w) {
       w.err("(4,)", {f23()}, [](A a) { return lax::reshape(a[0], {4}); });
       w.err("(-1, 6)", {f23()}, [](A a) { return lax::reshape(a[0], {-1, -6}); });
       w.ok("(3, 2)", {f23()}, [](A a) { return lax::reshape(a[0], {3, 2}); }, {3, 2});
     }},
    {"lax::transpose",
     [](Walk& w) {
       w.err("(1, 1)", {f23()}, [](A a) { return lax::transpose(a[0], {1, 1}); });
       w.err("(0, 1, 2)", {f23()}, [](A a) { return lax::transpose(a[0], {0, 1, 2}); });
     }},
    {"lax::rev",
     [](Walk& w) {
       w.err("dim 2", {f23()}, [](A a) { return lax::rev(a[0], {2}); });
       w.err("dims (0, 0)", {f23()}, [](A a) { return lax::rev(a[0], {0, 0}); });
       w.ok("f32[0,3]", {z03()}, [](A a) { return lax::rev(a[0], {0, 1}); }, {0, 3});
     }},
    {"lax::slice",
     [](Walk& w) {
       w.err("start > limit", {f23()}, [](A a) { return lax::slice(a[0], {1, 2}, {0, 3}); });
       w.err("limit past the end", {f23()}, [](A a) { return lax::slice(a[0], {0, 0}, {2, 4}); });
       w.err("stride 0", {f23()}, [](A a) { return lax::slice(a[0], {0, 0}, {2, 3}, {1, 0}); });
       w.err("one index for rank 2", {f23()}, [](A a) { return lax::slice(a[0], {0}, {2}); });
       w.err("start -1", {f23()}, [](A a) { return lax::slice(a[0], {-1, 0}, {2, 3}); });
       w.ok("empty", {f23()}, [](A a) { return lax::slice(a[0], {1, 3}, {1, 3}); }, {0, 0});
     }},
    {"lax::slice_in_dim",
     [](Walk& w) {
       w.err("axis 2", {f23()}, [](A a) { return lax::slice_in_dim(a[0], 0, 1, 1, 2); });
       w.err("stride -1", {f23()}, [](A a) { return lax::slice_in_dim(a[0], 0, 1, -1, 0); });
       w.ok("(0, 1)", {f23()}, [](A a) { return lax::slice_in_dim(a[0], 0, 1); }, {1, 3});
     }},
    {"lax::dynamic_slice",
     [](Walk& w) {
       Array i = Array(1);
       w.err("sizes larger than the operand", {f23(), i}, [](A a) {
         return lax::dynamic_slice(a[0], {a[1], a[1]}, {3, 3});
       });
       w.err("one index for rank 2", {f23(), i}, [](A a) { return lax::dynamic_slice(a[0], {a[1]}, {1, 1}); });
       w.err("a float index", {f23(), s0()}, [](A a) { return lax::dynamic_slice(a[0], {a[1], a[1]}, {1, 1}); });
       w.err("negative sizes", {f23(), i}, [](A a) { return lax::dynamic_slice(a[0], {a[1], a[1]}, {-1, 1}); });
       w.ok("huge index (clamped)", {f23(), Array(int64_t{1} << 40)},
            [](A a) {
              return lax::dynamic_slice(a[0], {a[1], a[1]}, {1, 2});
            },
            {1, 2});
     }},
    {"lax::dynamic_update_slice",
     [](Walk& w) {
       Array i = Array(0);
       w.err("update larger than the operand", {f23(), zeros({3, 3}), i}, [](A a) {
         return lax::dynamic_update_slice(a[0], a[1], {a[2], a[2]});
       });
       w.err("update of another dtype", {f23(), i23(), i}, [](A a) {
         return lax::dynamic_update_slice(a[0], a[1], {a[2], a[2]});
       });
       w.ok("empty update", {f23(), zeros({0, 3}), i},
            [](A a) {
              return lax::dynamic_update_slice(a[0], a[1], {a[2], a[2]});
            },
            {2, 3});
     }},
    {"lax::concatenate",
     [](Walk& w) {
       w.err("no arrays", {f23()}, [](A) { return lax::concatenate({}, 0); });
       w.err("dimension -1", {f23()}, [](A a) { return lax::concatenate({a[0], a[0]}, -1); });
       w.err("f32 with i32", {f23(), i23()}, [](A a) { return lax::concatenate({a[0], a[1]}, 0); });
     }},
    {"lax::pad",
     [](Walk& w) {
       w.err("negative interior", {f23()}, [](A a) {
         return lax::pad(a[0], Array(0.0f), Pad3{{0, 0, -1}, {0, 0, 0}});
       });
       w.err("one entry for rank 2", {f23()}, [](A a) { return lax::pad(a[0], Array(0.0f), Pad3{{0, 0, 0}}); });
       w.err("too negative", {f23()}, [](A a) { return lax::pad(a[0], Array(0.0f), Pad3{{-3, 0, 0}, {0, 0, 0}}); });
       w.err("an i32 value", {f23()}, [](A a) { return lax::pad(a[0], Array(0), Pad3{{0, 0, 0}, {0, 0, 0}}); });
       w.err("2^62 high", {f23()}, [](A a) { return lax::pad(a[0], Array(0.0f), Pad3{{0, kHuge, 0}, {0, 0, 0}}); });
       w.ok("negative low", {f23()},
            [](A a) {
              return lax::pad(a[0], Array(0.0f), Pad3{{-1, 0, 0}, {0, 1, 1}});
            },
            {1, 6});
     }},
    {"lax::iota",
     [](Walk& w) {
       w.err("size -1", {}, [](A) { return lax::iota(DType::int32, -1); });
       w.err("DType(200)", {}, [](A) { return lax::iota(static_cast<DType>(200), 3); });
       w.err("size 2^62 of f64", {}, [](A) { return lax::iota(DType::float64, kHuge); });
       w.ok("size 0", {}, [](A) { return lax::iota(DType::float32, 0); }, {0});
     }},
    {"lax::broadcasted_iota",
     [](Walk& w) {
       w.err("dimension 2", {}, [](A) { return lax::broadcasted_iota(DType::int32, {2, 3}, 2); });
       w.err("negative shape", {}, [](A) { return lax::broadcasted_iota(DType::int32, {-2, 3}, 0); });
       w.ok("(0, 3)", {}, [](A) { return lax::broadcasted_iota(DType::int32, {0, 3}, 1); }, {0, 3});
     }},
    {"lax::full",
     [](Walk& w) {
       w.err("negative shape", {}, [](A) { return lax::full({-1}, Array(1.0f)); });
       w.err("(2^62, 4)", {}, [](A) { return lax::full({kHuge, 4}, Array(1.0f)); });
       w.err("a non-scalar fill", {f4()}, [](A a) { return lax::full({2, 4}, a[0]); });
       w.ok("(0,)", {}, [](A) { return lax::full({0}, Array(1.0f)); }, {0});
     }},
    {"lax::reduce_precision",
     [](Walk& w) {
       w.err("exponent_bits 0", {f23()}, [](A a) { return lax::reduce_precision(a[0], 0, 3); });
       w.err("mantissa_bits -1", {f23()}, [](A a) { return lax::reduce_precision(a[0], 5, -1); });
       w.err("an i32 operand", {i23()}, [](A a) { return lax::reduce_precision(a[0], 5, 10); });
       w.ok("(5, 10)", {f23()}, [](A a) { return lax::reduce_precision(a[0], 5, 10); }, {2, 3});
     }},
};

/// A collective's walk: ok inside shard_map over a (2,) mesh with blocks (2, 3) of a (4, 3) argument; an error
/// outside any shard_map (unbound axis name) and for an empty Array.
void walk_collective(Walk& w, const std::function<Array(const Array&)>& body, Shape out) {
  if (devices().size() < 2) return;
  Mesh mesh = make_mesh({2}, {"x"});
  w.ok(
      "(4,3) in shard_map", {testing::make(testing::uniform(12, -2, 2), {4, 3}, DType::float32)},
      [mesh, body](A a) { return shard_map(body, mesh, P("x"), P("x"))(a[0]); }, out);
  w.err("outside shard_map", {f23()}, [body](A a) { return body(a[0]); });
  w.invalid([body](A a) { return body(a[0]); });
}

const std::vector<Case> kLax2 = {
    // The collectives (lax_parallel.h): inside a shard_map over a 2-device mesh (eagerly and under jit); outside
    // one, the axis name is unbound.
    {"lax::psum",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::psum(b, "x"); }, {4, 3});
     }},
    {"lax::pmean",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::pmean(b, "x"); }, {4, 3});
     }},
    {"lax::pmax",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::pmax(b, "x"); }, {4, 3});
     }},
    {"lax::pmin",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::pmin(b, "x"); }, {4, 3});
     }},
    {"lax::all_gather",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::all_gather(b, "x", 0, true); }, {8, 3});
     }},
    {"lax::psum_scatter",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::psum_scatter(b, "x", 0, true); }, {2, 3});
     }},
    {"lax::all_to_all",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::all_to_all(b, "x", 0, 0, true); }, {4, 3});
     }},
    {"lax::ppermute",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return lax::ppermute(b, "x", {{0, 1}, {1, 0}}); }, {4, 3});
     }},
    {"lax::axis_index",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return b + lax::axis_index("x").astype(b.dtype()); }, {4, 3});
     }},
    {"lax::axis_size",
     [](Walk& w) {
       walk_collective(w, [](const Array& b) { return b + static_cast<double>(lax::axis_size("x")); }, {4, 3});
     }},
    {"lax::with_sharding_constraint",
     [](Walk& w) {
       if (devices().size() < 2) return;
       NamedSharding s(make_mesh({2}, {"x"}), P("x"));
       w.ok("(2,3), P('x')", {f23()}, [s](A a) { return lax::with_sharding_constraint(a[0], s); }, {2, 3});
       w.err("(), P('x')", {s0()}, [s](A a) { return lax::with_sharding_constraint(a[0], s); });
       w.invalid([s](A a) { return lax::with_sharding_constraint(a[0], s); });
     }},
    {"lax::dot_general",
     [](Walk& w) {
       w.err("contracting 3 with 2", {f23(), f23()}, [](A a) {
         return lax::dot_general(a[0], a[1], {{1}, {0}, {}, {}});
       });
       w.err("axis 2", {f23(), f23()}, [](A a) { return lax::dot_general(a[0], a[1], {{2}, {1}, {}, {}}); });
       w.err("f32 with i32", {f23(), i23()}, [](A a) { return lax::dot_general(a[0], a[1], {{1}, {1}, {}, {}}); });
       w.ok("outer product", {f23(), z03()},
            [](A a) {
              return lax::dot_general(a[0], a[1], {{}, {}, {}, {}});
            },
            {2, 3, 0, 3});
     }},
    {"lax::dot",
     [](Walk& w) {
       w.err("(2,3) . (2,3)", {f23(), f23()}, [](A a) { return lax::dot(a[0], a[1]); });
       w.ok("(0,3) . (3,)", {z03(), ones({3})}, [](A a) { return lax::dot(a[0], a[1]); }, {0});
     }},
    {"lax::gather",
     [](Walk& w) {
       Array idx = testing::make_int({0, 9}, {2, 1}, DType::int32);
       w.err("slice size 4 > 3", {f23(), idx}, [](A a) {
         return lax::gather(a[0], a[1], {{1}, {0}, {}, {}, {0}, -1}, {1, 4});
       });
       w.err("start_index_map axis 5", {f23(), idx}, [](A a) {
         return lax::gather(a[0], a[1], {{1}, {0}, {}, {}, {5}, -1}, {1, 3});
       });
       w.err("float indices", {f23(), f23()}, [](A a) {
         return lax::gather(a[0], a[1], {{1}, {0}, {}, {}, {0}, -1}, {1, 3});
       });
       w.ok("out-of-range index (clamped)", {f23(), idx},
            [](A a) {
              return lax::gather(a[0], a[1], {{1}, {0}, {}, {}, {0}, -1}, {1, 3});
            },
            {2, 3});
     }},
    {"lax::scatter",
     [](Walk& w) {
       Array idx = testing::make_int({0, 9}, {2, 1}, DType::int32);
       lax::ScatterDimensionNumbers dn{{1}, {0}, {}, {}, {0}, -1}, bad{{1}, {0}, {}, {}, {4}, -1};
       w.err("updates of shape (4,)", {f23(), idx, f4()}, [dn](A a) { return lax::scatter(a[0], a[1], a[2], dn); });
       w.err("scatter_dims_to_operand_dims axis 4", {f23(), idx, f23()},
             [bad](A a) { return lax::scatter(a[0], a[1], a[2], bad); });
       w.ok("out-of-range window dropped", {f23(), idx, f23()},
            [dn](A a) { return lax::scatter(a[0], a[1], a[2], dn); }, {2, 3});
     }},
    {"lax::scatter_add",
     [](Walk& w) {
       Array idx = testing::make_int({0, 1}, {2, 1}, DType::int32);
       w.err("i32 updates", {f23(), idx, i23()}, [](A a) {
         return lax::scatter_add(a[0], a[1], a[2], {{1}, {0}, {}, {}, {0}, -1});
       });
     }},
    {"lax::scatter_mul",
     [](Walk& w) {
       Array idx = testing::make_int({0, 1}, {2, 1}, DType::int32);
       w.err("update_window_dims (5,)", {f23(), idx, f23()}, [](A a) {
         return lax::scatter_mul(a[0], a[1], a[2], {{5}, {0}, {}, {}, {0}, -1});
       });
     }},
    {"lax::scatter_min",
     [](Walk& w) {
       Array idx = testing::make_int({0, 1}, {2, 1}, DType::int32);
       w.err("index_vector_dim 7", {f23(), idx, f23()}, [](A a) {
         return lax::scatter_min(a[0], a[1], a[2], {{1}, {0}, {}, {}, {0}, 7});
       });
     }},
    {"lax::scatter_max",
     [](Walk& w) {
       Array idx = testing::make_int({0, 1}, {2, 1}, DType::int32);
       w.err("inserted_window_dims (0, 0)", {f23(), idx, f23()}, [](A a) {
         return lax::scatter_max(a[0], a[1], a[2], {{1}, {0, 0}, {}, {}, {0}, -1});
       });
     }},
    {"lax::top_k",
     [](Walk& w) {
       w.err("k 4 > 3", {f23()}, [](A a) { return lax::top_k(a[0], 4).first; });
       w.err("k -1", {f23()}, [](A a) { return lax::top_k(a[0], -1).first; });
       w.err("a 0-d operand", {s0()}, [](A a) { return lax::top_k(a[0], 1).first; });
       w.ok("k 0", {f23()}, [](A a) { return lax::top_k(a[0], 0).second; }, {2, 0});
     }},
    {"lax::conv_dimension_numbers",
     [](Walk& w) {
       w.err("'NCHX'", {}, [](A) { return Array(lax::conv_dimension_numbers("NCHX", "OIHW", "NCHW").lhs_spec[0]); });
       w.err("'NCH' with 'OIHW'", {},
             [](A) { return Array(lax::conv_dimension_numbers("NCH", "OIHW", "NCHW").lhs_spec[0]); });
       w.ok("NHWC", {}, [](A) { return Array(lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC").lhs_spec[1]); }, {});
     }},
    {"lax::conv_general_dilated",
     [](Walk& w) {
       Array x = ones({1, 2, 4, 4}), k = ones({3, 2, 2, 2});
       w.err("rank 3 kernel", {x, ones({3, 2, 2})}, [](A a) {
         return lax::conv_general_dilated(a[0], a[1], {1, 1}, {{0, 0}, {0, 0}});
       });
       w.err("3 input features for 2", {x, ones({3, 3, 2, 2})}, [](A a) {
         return lax::conv_general_dilated(a[0], a[1], {1, 1}, {{0, 0}, {0, 0}});
       });
       w.err("stride 0", {x, k}, [](A a) { return lax::conv_general_dilated(a[0], a[1], {0, 1}, {{0, 0}, {0, 0}}); });
       w.err("feature_group_count 0", {x, k}, [](A a) {
         return lax::conv_general_dilated(a[0], a[1], {1, 1}, {{0, 0}, {0, 0}}, {}, {}, {}, 0);
       });
       w.ok("valid", {x, k},
            [](A a) {
              return lax::conv_general_dilated(a[0], a[1], {1, 1}, {{0, 0}, {0, 0}});
            },
            {1, 3, 3, 3});
     }},
    {"lax::reduce_window_sum",
     [](Walk& w) {
       w.err("window of 1 dim for rank 2", {f23()}, [](A a) {
         return lax::reduce_window_sum(a[0], {{2}, {1}, {{0, 0}}, {}, {}});
       });
       w.err("stride 0", {f23()}, [](A a) {
         return lax::reduce_window_sum(a[0], {{1, 1}, {0, 1}, {{0, 0}, {0, 0}}, {}, {}});
       });
       w.ok("(2, 2)", {f23()}, [](A a) { return lax::reduce_window_sum(a[0], {{2, 2}, {1, 1}, {}, {}, {}}); }, {1, 2});
     }},
    {"lax::reduce_window_max",
     [](Walk& w) {
       w.err("window 0", {f23()}, [](A a) { return lax::reduce_window_max(a[0], {{0, 1}, {1, 1}, {}, {}, {}}); });
     }},
    {"lax::reduce_window_min",
     [](Walk& w) {
       // JAX accepts negative padding past the whole axis: the axis is empty.
       w.ok("padding (-5, 0) on an axis of 2", {f23()},
            [](A a) {
              return lax::reduce_window_min(a[0], {{1, 1}, {1, 1}, {{-5, 0}, {0, 0}}, {}, {}});
            },
            {0, 3});
       w.err("one padding pair for rank 2", {f23()}, [](A a) {
         return lax::reduce_window_min(a[0], {{1, 1}, {1, 1}, {{0, 0}}, {}, {}});
       });
       w.err("a window of rank 1", {f23()}, [](A a) { return lax::reduce_window_min(a[0], {{1}, {}, {}, {}, {}}); });
     }},
    {"lax::cond",
     [](Walk& w) {
       w.err("a (2,3) predicate", {b23(), f23()}, [](A a) {
         return lax::cond(
             a[0], [](Array x) { return x; }, [](Array x) { return x; }, a[1]);
       });
       w.err("branches of different shapes", {Array(true), f23()}, [](A a) {
         return lax::cond(
             a[0], [](Array x) { return x; }, [](Array x) { return lax::reshape(x, {6}); }, a[1]);
       });
       w.ok("a scalar predicate", {Array(true), f23()},
            [](A a) {
              return lax::cond(
                  a[0], [](Array x) { return x; }, [](Array x) { return x * 2.0f; }, a[1]);
            },
            {2, 3});
     }},
    {"lax::switch_",
     [](Walk& w) {
       auto br = [](Array x) { return x; };
       w.err("a float index", {s0(), f23()}, [br](A a) { return lax::switch_(a[0], std::vector{br}, a[1]); });
       w.ok("an index out of range (clamped)", {Array(7), f23()},
            [br](A a) {
              return lax::switch_(a[0], std::vector{br, br}, a[1]);
            },
            {2, 3});
     }},
    {"lax::while_loop",
     [](Walk& w) {
       w.err("a non-scalar condition", {f23()}, [](A a) {
         return lax::while_loop([](Array x) { return x < 1.0f; }, [](Array x) { return x + 1.0f; }, a[0]);
       });
       w.err("a body changing the shape", {f23()}, [](A a) {
         return lax::while_loop([](Array x) { return jnp::sum(x) < 1.0f; },
                                [](Array x) { return lax::reshape(x, {6}); }, a[0]);
       });
     }},
    {"lax::fori_loop",
     [](Walk& w) {
       w.err("a body changing the dtype", {f23()}, [](A a) {
         return lax::fori_loop(
             Array(0), Array(3), [](Array, Array x) { return jnp::astype(x, DType::int32); }, a[0]);
       });
       w.ok("upper < lower", {f23()},
            [](A a) {
              return lax::fori_loop(
                  Array(5), Array(-3), [](Array, Array x) { return x + 1.0f; }, a[0]);
            },
            {2, 3});
     }},
    {"lax::scan",
     [](Walk& w) {
       auto body = [](Array c, Array x) { return std::pair{c + x, x}; };
       w.err("xs of rank 0", {f4(), s0()}, [body](A a) { return lax::scan(body, a[0], a[1]).first; });
       w.err("a carry of another shape", {f23(), ones({5, 3})}, [](A a) {
         return lax::scan([](Array c, Array x) { return std::pair{lax::reshape(c, {6}), x}; }, a[0], a[1]).first;
       });
       w.ok("zero-length xs", {ones({3}), z03()}, [body](A a) { return lax::scan(body, a[0], a[1]).second; }, {0, 3});
     }},
    {"lax::associative_scan",
     [](Walk& w) {
       auto add = [](Array x, Array y) { return x + y; };
       w.err("axis 2", {f23()}, [add](A a) { return lax::associative_scan(add, a[0], false, 2); });
       w.ok("empty axis", {z03()}, [add](A a) { return lax::associative_scan(add, a[0]); }, {0, 3});
     }},
};

const std::vector<Case> kNn = {
    JITX_U(nn, relu),
    JITX_U(nn, gelu),
    JITX_U(nn, silu),
    JITX_U(nn, sigmoid),
    JITX_U(nn, softplus),
    JITX_U(nn, relu6),
    JITX_U(nn, elu),
    JITX_U(nn, leaky_relu),
    JITX_U(nn, log_sigmoid),
    JITX_U(nn, swish),
    JITX_U(nn, celu),
    JITX_U(nn, selu),
    JITX_U(nn, hard_tanh),
    JITX_U(nn, hard_sigmoid),
    JITX_U(nn, hard_silu),
    JITX_U(nn, hard_swish),
    JITX_U(nn, mish),
    JITX_U(nn, squareplus),
    JITX_U(nn, soft_sign),
    JITX_U(nn, sparse_plus),
    JITX_U(nn, sparse_sigmoid),
    JITX_AX(nn, softmax, Shape({2, 3})),
    JITX_AX(nn, log_softmax, Shape({2, 3})),
    JITX_R(nn, logsumexp, true),
    // Not a reduction: the result keeps x's shape (jax.nn.standardize normalises over the axes).
    {"nn::standardize",
     [](Walk& w) {
       auto st = [](std::vector<int64_t> axes) { return [axes](A a) { return nn::standardize(a[0], axes); }; };
       w.err("axis 2 of rank 2", {f23()}, st({2}));
       w.err("axis -3 of rank 2", {f23()}, st({-3}));
       w.err("axis 2^62", {f23()}, st({kHuge}));
       w.err("axes (0, 0)", {f23()}, st({0, 0}));
       w.ok("axis 1", {pos23()}, st({1}), {2, 3});
       w.ok("f32[0,3] axis 0", {z03()}, st({0}), {0, 3});
       w.ok("f32[0,3] axis 1", {z03()}, st({1}), {0, 3});
       w.invalid(st({0}));
     }},
    {"nn::glu",
     [](Walk& w) {
       w.err("odd axis size", {f23()}, [](A a) { return nn::glu(a[0], 1); });
       w.err("axis 2", {f23()}, [](A a) { return nn::glu(a[0], 2); });
       w.ok("axis 0", {f23()}, [](A a) { return nn::glu(a[0], 0); }, {1, 3});
     }},
    {"nn::one_hot",
     [](Walk& w) {
       w.err("num_classes -1", {i23()}, [](A a) { return nn::one_hot(a[0], -1); });
       w.err("num_classes 2^62", {i23()}, [](A a) { return nn::one_hot(a[0], kHuge); });
       w.err("DType(200)", {i23()}, [](A a) { return nn::one_hot(a[0], 3, static_cast<DType>(200)); });
       w.ok("num_classes 0", {i23()}, [](A a) { return nn::one_hot(a[0], 0); }, {2, 3, 0});
     }},
    {"nn::layer_norm",
     [](Walk& w) {
       w.err("scale of shape (4,)", {f23(), f4()}, [](A a) { return nn::layer_norm(a[0], a[1]); });
       w.ok("f32[0,3]", {z03()}, [](A a) { return nn::layer_norm(a[0]); }, {0, 3});
     }},
};

const std::vector<Case> kRandom = {
    {"random::PRNGKey",
     [](Walk& w) {
       w.err("a float seed", {s0()}, [](A a) { return random::PRNGKey(a[0]); });
       w.err("a (2,3) seed", {i23()}, [](A a) { return random::PRNGKey(a[0]); });
       w.ok("seed -1", {}, [](A) { return random::PRNGKey(-1); }, {2});
     }},
    {"random::key", [](Walk& w) { w.ok("seed 2^62", {}, [](A) { return random::key(kHuge); }, {2}); }},
    {"random::split",
     [](Walk& w) {
       w.err("num -1", {random::PRNGKey(0)}, [](A a) { return random::split(a[0], -1); });
       w.err("a key of shape (3,)", {zeros({3}, DType::uint32)}, [](A a) { return random::split(a[0]); });
       w.ok("num 0", {random::PRNGKey(0)}, [](A a) { return random::split(a[0], 0); }, {0, 2});
     }},
    {"random::fold_in",
     [](Walk& w) {
       // JAX converts float data as jnp.uint32 (truncating); a weak float out of uint32's range is refused.
       w.ok("float data", {random::PRNGKey(0), s0()}, [](A a) { return random::fold_in(a[0], a[1]); }, {2});
       w.err("weak float -1.5", {random::PRNGKey(0)}, [](A a) { return random::fold_in(a[0], Array(-1.5)); });
       w.err("f32[2] data", {random::PRNGKey(0), zeros({2})}, [](A a) { return random::fold_in(a[0], a[1]); });
       w.ok("data -1", {random::PRNGKey(0), Array(-1)}, [](A a) { return random::fold_in(a[0], a[1]); }, {2});
     }},
    {"random::bits",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::bits(k, s, d); }, DType::uint8,
           DType::float32);
     }},
    {"random::uniform",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::uniform(k, s, d); }, DType::float32,
           DType::int32);
     }},
    {"random::normal",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::normal(k, s, d); }, DType::float64,
           DType::uint32);
     }},
    {"random::gumbel",
     [](Walk& w) {
       sampler(
           w, [](const Array& k, const Shape& s, DType d) { return random::gumbel(k, s, d); }, DType::float16,
           DType::bool_);
     }},
    {"random::truncated_normal",
     [](Walk& w) {
       sampler(
           w,
           [](const Array& k, const Shape& s, DType d) {
             return random::truncated_normal(k, Array(-1.0), Array(1.0), s, d);
           },
           DType::float32, DType::int8);
     }},
    {"random::bernoulli",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.err("shape (-1,)", {key}, [](A a) { return random::bernoulli(a[0], 0.5, Shape{-1}); });
       w.err("p of shape (4,) for (2, 3)", {key, f4()}, [](A a) { return random::bernoulli(a[0], a[1], Shape{2, 3}); });
       w.ok("p of shape (2, 3)", {key, pos23()}, [](A a) { return random::bernoulli(a[0], a[1]); }, {2, 3});
     }},
    {"random::categorical",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.err("axis 2", {key, f23()}, [](A a) { return random::categorical(a[0], a[1], 2); });
       w.err("shape (5,) for logits' (2,)", {key, f23()},
             [](A a) { return random::categorical(a[0], a[1], 1, Shape{5}); });
       w.ok("axis 0", {key, f23()}, [](A a) { return random::categorical(a[0], a[1], 0); }, {3});
     }},
    {"random::permutation",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.err("n -1", {key}, [](A a) { return random::permutation(a[0], -1); });
       w.err("axis 2", {key, f23()}, [](A a) { return random::permutation(a[0], a[1], 2); });
       w.ok("n 0", {key}, [](A a) { return random::permutation(a[0], 0); }, {0});
       w.ok("independent rows", {key, f23()}, [](A a) { return random::permutation(a[0], a[1], 1, true); }, {2, 3});
     }},
    {"random::randint",
     [](Walk& w) {
       Array key = random::PRNGKey(0);
       w.err("a float dtype", {key}, [](A a) { return random::randint(a[0], {2}, 0, 5, DType::float32); });
       w.err("shape (-1,)", {key}, [](A a) { return random::randint(a[0], {-1}, 0, 5); });
       w.ok("maxval <= minval", {key}, [](A a) { return random::randint(a[0], {3}, 5, 2); }, {3});
     }},
};

// debug.h: debug::print, debug::callback, pure_callback (their output goes to a discarding sink here).
const std::vector<Case> kDebug = {
    {"debug::print",
     [](Walk& w) {
       debug::set_print_sink([](const std::string&) {});
       w.ok("an Array and an int", {ones({2})},
            [](A a) {
              debug::print("{} {}", a[0], 3);
              return a[0];
            },
            {2});
       w.ok("a format spec on a 0-d Array", {ones({})},
            [](A a) {
              debug::print("{:.3f}", a[0]);
              return a[0];
            },
            {});
       w.err("a bad format spec", {ones({})}, [](A a) {
         debug::print("{:q}", a[0]);
         return a[0];
       });
       w.err("too few arguments", {ones({})}, [](A a) {
         debug::print("{} {}", a[0]);
         return a[0];
       });
       debug::set_print_sink(nullptr);
     }},
    {"debug::set_print_sink",
     [](Walk& w) {
       w.ok("a sink, then the default", {ones({})},
            [](A a) {
              debug::set_print_sink([](const std::string&) {});
              debug::set_print_sink(nullptr);
              return a[0];
            },
            {});
     }},
    {"debug::callback",
     [](Walk& w) {
       w.ok("two Arrays", {ones({2}), ones({})},
            [](A a) {
              debug::callback([](Array, Array) {}, a[0], a[1]);
              return a[0];
            },
            {2});
     }},
    {"jitx::pure_callback",
     [](Walk& w) {
       auto same = [](Array x) { return x; };
       w.ok("the declared shape", {ones({3})},
            [same](A a) {
              return pure_callback(same, ShapedArray{{3}, DType::float32}, a[0]);
            },
            {3});
       w.err("a wrong declared shape", {ones({3})}, [same](A a) {
         return pure_callback(same, ShapedArray{{4}, DType::float32}, a[0]);
       });
       w.err("a wrong declared dtype", {ones({3})}, [same](A a) {
         return pure_callback(same, ShapedArray{{3}, DType::int32}, a[0]);
       });
       w.err("a negative declared size", {ones({3})}, [same](A a) {
         return pure_callback(same, ShapedArray{{-1}, DType::float32}, a[0]);
       });
     }},
};

}  // namespace
#include "api_walk_table_host.h"
#include "api_walk_table_lax_extra.h"
#include "api_walk_table_numpy_shape.h"
#include "api_walk_table_numpy_more.h"
#include "api_walk_table_numpy_functional.h"
#include "api_walk_table_numpy_misc.h"
#include "api_walk_table_numpy_stats.h"
#include "api_walk_table_random.h"
#include "api_walk_table_special.h"
#include "api_walk_table_stats.h"
#include "api_walk_table_scipy_linalg.h"
#include "api_walk_table_scipy_signal.h"
namespace {

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (auto* t : {&kNumpy, &kNumpy2, &kLax, &kLax2, &kNn, &kRandom, &kRandom2, &kDebug, &kHost, &kLaxExtra,
                  &kLinalgMore, &kNumpyShape, &kNumpyShape2, &kNumpyStats, &kNumpyFunctional, &kNumpyMisc,
                  &kNumpyMore, &kNumpyMore2, &kSpecial, &kStats, &kScipyLinalg, &kScipySignal})
    v.insert(v.end(), t->begin(), t->end());
  return v;
}
const std::vector<Case> kTable = all_cases();

}  // namespace
