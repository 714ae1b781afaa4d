// The differential fuzzer's control flow (cond, switch, while, scan with generated bodies) and the step that draws
// an op family (see difffuzz_gen.h).
#pragma once

namespace jitx::difffuzz {

inline std::vector<Array> arrays(const std::vector<Val>& v) {
  std::vector<Array> a;
  for (auto& x : v) a.push_back(x.a);
  return a;
}

/// A generated body: a sub-generator (its own seed) over the given inputs, returning values of the given avals.
inline std::vector<Val> gen_body(uint64_t seed, bool smooth, bool excess, int nest, std::vector<Val> inputs,
                                 const std::vector<ShapedArray>& outs) {
  Gen g(seed, smooth, excess);
  g.nest = nest;
  g.pool = std::move(inputs);
  g.run(static_cast<int>(g.uni(1, 5)));
  std::vector<Val> r;
  for (auto& o : outs) r.push_back(g.like(o.dtype, o.shape));
  return r;
}

/// The depths a body gives its outputs for these input depths, found by tracing it on its own.
inline std::vector<int> probe_body(uint64_t seed, bool smooth, bool excess, int nest,
                                   const std::vector<ShapedArray>& in, const std::vector<int>& depths,
                                   const std::vector<ShapedArray>& outs) {
  std::vector<int> r;
  detail::trace_to_jaxpr("probe", in, [&](const std::vector<Array>& xs) {
    std::vector<Val> vs;
    for (size_t i = 0; i < xs.size(); ++i) vs.push_back({xs[i], depths[i]});
    auto o = gen_body(seed, smooth, excess, nest, vs, outs);
    for (auto& v : o) r.push_back(v.depth);
    return arrays(o);
  });
  return r;
}

inline std::vector<ShapedArray> avals_of(const std::vector<Val>& v) {
  std::vector<ShapedArray> a;
  for (auto& x : v) a.push_back(x.a.aval());
  return a;
}

inline void Gen::cond() {
  if (nest >= 2) return;
  std::vector<Val> ops{some(smooth() ? is_float_dt : any_dt)};
  if (coin()) ops.push_back(some(smooth() ? is_float_dt : any_dt));
  std::vector<ShapedArray> outs{ops[0].a.aval()};
  if (coin()) outs.push_back(some(smooth() ? is_float_dt : any_dt).a.aval());
  std::vector<int> in_depths;
  for (auto& o : ops) in_depths.push_back(o.depth);
  auto depths = std::make_shared<std::vector<int>>(outs.size(), 0);
  bool sm = smooth(), ex = excess();
  int ns = nest + 1;
  auto branch = [=](uint64_t seed) {
    return [=](std::vector<Array> args) {
      std::vector<Val> in;
      for (size_t i = 0; i < args.size(); ++i) in.push_back({args[i], in_depths[i]});
      auto r = gen_body(seed, sm, ex, ns, in, outs);
      for (size_t i = 0; i < r.size(); ++i) (*depths)[i] = std::max((*depths)[i], r[i].depth);
      return arrays(r);
    };
  };
  std::vector<Array> res;
  if (coin(0.7)) {
    Val p = like(DType::bool_, {}, true);
    if (p.depth) return;
    res = lax::cond(p.a, branch(sub_seed()), branch(sub_seed()), arrays(ops));
  } else {
    Val i = like(DType::int32, {}, true);
    if (i.depth) return;
    std::vector<decltype(branch(0))> bs;
    for (int64_t k = uni(1, 3); k > 0; --k) bs.push_back(branch(sub_seed()));
    res = lax::switch_(i.a, bs, arrays(ops));
  }
  for (size_t i = 0; i < res.size(); ++i) add(res[i], {(*depths)[i]}, false);
}

/// while_loop (a counter and 1-2 carried values) or scan (carried values and a sliced xs).
inline void Gen::loop(bool is_scan) {
  if (nest >= 2) return;
  std::vector<Val> carry{some(smooth() ? is_float_dt : any_dt)};
  if (coin()) carry.push_back(some(smooth() ? is_float_dt : any_dt));
  int64_t trips = uni(0, 3);
  Val xs;
  std::vector<ShapedArray> in = avals_of(carry), outs = avals_of(carry);
  if (is_scan) {
    Val x = some(smooth() ? is_float_dt : any_dt);
    Shape s = x.a.shape();
    s.insert(s.begin(), trips);
    xs = like(x.a.dtype(), s);
    in.push_back(x.a.aval());
    outs.push_back(some(smooth() ? is_float_dt : any_dt).a.aval());  // the ys' slice
  }
  // Carried values stay exact only if the body keeps them exact (a fixed point over the iterations).
  std::vector<int> d_in;
  for (auto& c : carry) d_in.push_back(c.depth ? 1 : 0);
  if (is_scan) d_in.push_back(xs.depth ? 1 : 0);
  uint64_t seed = sub_seed();
  int ns = nest + 1;
  std::vector<int> d_out;
  for (int it = 0; it < 4; ++it) {
    d_out = probe_body(seed, smooth(), excess(), ns, in, d_in, outs);
    bool changed = false;
    for (size_t i = 0; i < carry.size(); ++i)
      if (d_out[i] > 0 && d_in[i] == 0) d_in[i] = 1, changed = true;
    if (!changed) break;
  }
  int max_in = xs.depth, b = 0;
  for (auto& c : carry) max_in = std::max(max_in, c.depth);
  for (int d : d_out) b = std::max(b, d);
  auto final_depth = [&](size_t i) {
    return d_out[i] == 0 && (i >= carry.size() || d_in[i] == 0) ? 0 : max_in + 1 + static_cast<int>(trips) * b;
  };
  bool sm = smooth(), ex = excess();
  if (!is_scan) {
    std::vector<Array> init{scalar(0, DType::int32)};
    for (auto& c : carry) init.push_back(c.a);
    auto res = lax::while_loop(
        [trips](const std::vector<Array>& c) {
          return lax::lt(c[0], array_from_data(&trips, DType::int64, {}, DType::int32));
        },
        [=](const std::vector<Array>& c) {
          std::vector<Val> vs;
          for (size_t i = 1; i < c.size(); ++i) vs.push_back({c[i], d_in[i - 1]});
          auto r = gen_body(seed, sm, ex, ns, vs, outs);
          int64_t one = 1;
          std::vector<Array> o{lax::add(c[0], array_from_data(&one, DType::int64, {}, DType::int32))};
          for (auto& v : r) o.push_back(v.a);
          return o;
        },
        init);
    for (size_t i = 1; i < res.size(); ++i) add(res[i], {final_depth(i - 1)}, false);
    return;
  }
  size_t nc = carry.size();
  lax::ScanOptions opt;
  opt.reverse = coin(0.3);
  auto [c, ys] = lax::scan(
      [=](const std::vector<Array>& cs, const Array& x) {
        std::vector<Val> vs;
        for (size_t i = 0; i < cs.size(); ++i) vs.push_back({cs[i], d_in[i]});
        vs.push_back({x, d_in.back()});
        auto r = gen_body(seed, sm, ex, ns, vs, outs);
        std::vector<Array> cn;
        for (size_t i = 0; i < nc; ++i) cn.push_back(r[i].a);
        return std::pair{cn, r.back().a};
      },
      arrays(carry), xs.a, opt);
  for (size_t i = 0; i < c.size(); ++i) add(c[i], {final_depth(i)}, false);
  add(ys, {final_depth(nc)}, false);
}

inline void Gen::step() {
  int k = static_cast<int>(uni(0, 99));
  if (k < 12) return unary_float();
  if (k < 20) return unary_other();
  if (k < 34) return binary();
  if (k < 40) return compare_select();
  if (k < 45) return convert();
  if (k < 55) return structural();
  if (k < 60) return concat_pad();
  if (k < 67) return reduction();
  if (k < 70) return window();
  if (k < 75) return dot();
  if (k < 77) return conv();
  if (k < 81) return gather();
  if (k < 85) return scatter();
  if (k < 88) return dynamic();
  if (k < 91) return sort();
  if (k < 94) return cond();
  return loop(k >= 97 || smooth());  // grad needs scan (while_loop has no reverse mode, as in JAX)
}

}  // namespace jitx::difffuzz
