// The differential fuzzer's transformation checks (included by difffuzz_test.cpp): grad of a smooth f64 program
// against central finite differences, vmap of a program against a loop over the batch. Both transformed programs
// also go through check_differential (cpu after every pass against the interpreter).
#pragma once
#include <cstring>

namespace {

Literal copy(const Literal& l) {
  Literal c = Literal::make(l.dtype, l.dims);
  if (l.nbytes()) std::memcpy(c.data(), l.data(), l.nbytes());
  return c;
}

/// grad of sum_i sum(out_i * w_i) (the float outputs, fixed random weights) against central differences of the
/// same loss on the interpreter: |ad - fd| <= 1e-6 (1 + max |ad|).
std::string check_grad(const Program& p, const std::vector<Literal>& args, Batcher& cpu) {
  auto in = p.cj.in_avals();
  auto outs_avals = p.cj.out_avals();
  int64_t n = 0;
  for (auto& a : in) n += a.size();
  if (n > 48) return "";
  std::mt19937_64 g(p.seed + 17);
  std::vector<Array> w;
  for (auto& o : outs_avals) {
    std::vector<double> v(static_cast<size_t>(o.size()));
    for (auto& x : v) x = std::uniform_real_distribution<double>(-1, 1)(g);
    w.push_back(array_from_data(v.data(), DType::float64, o.shape, DType::float64));
  }
  auto loss = [&](const std::vector<Array>& xs) {
    auto outs = eval(p.cj, xs);
    Array l = array_from_data(std::vector<double>{0}.data(), DType::float64, {}, DType::float64);
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].dtype() != DType::float64) continue;
      std::vector<int64_t> axes(static_cast<size_t>(outs[i].ndim()));
      std::iota(axes.begin(), axes.end(), 0);
      l = lax::add(l, lax::reduce_sum(lax::mul(outs[i], w[i]), axes));
    }
    return l;
  };
  Program gp = p;
  gp.cj = detail::trace_to_jaxpr("grad", in, [&](const std::vector<Array>& xs) {
    return jitx::grad([&](std::vector<Array> v) { return loss(v); })(xs);
  });
  gp.depths.assign(gp.cj.jaxpr.outvars.size(), 16);
  gp.excess = false;
  cpu.add(gp, args, "grad program: ");
  auto lm = lower(
      detail::trace_to_jaxpr("loss", in, [&](const std::vector<Array>& xs) { return std::vector<Array>{loss(xs)}; }));
  auto ad = testing::run(testing::interp(), lower(gp.cj), args);
  double scale = 1;
  for (auto& l : ad)
    for (int64_t j = 0; j < l.size(); ++j) scale = std::max(scale, std::fabs(l.get_f64(j)));
  std::string out;
  for (size_t i = 0; i < args.size(); ++i)
    for (int64_t j = 0; j < args[i].size(); ++j) {
      double x = args[i].get_f64(j), h = 1e-5;
      auto plus = args, minus = args;
      plus[i] = copy(args[i]), minus[i] = copy(args[i]);
      plus[i].set_f64(j, x + h), minus[i].set_f64(j, x - h);
      double lp = testing::run(testing::interp(), lm, plus)[0].get_f64(0);
      double lmi = testing::run(testing::interp(), lm, minus)[0].get_f64(0);
      double fd = (lp - lmi) / (2 * h), a = ad[i].get_f64(j);
      if (!(std::fabs(fd - a) <= 1e-6 * scale) && out.size() < 600)
        out += fmt::format("  d/d input {}[{}]: grad {:.12g}, finite differences {:.12g}\n", i, j, a, fd);
    }
  if (out.empty()) return "";
  return describe(p, "grad differs from central finite differences (h = 1e-5)\n" + out, *lower(p.cj)) +
         "\ngrad jaxpr:\n" + detail::print_jaxpr(gp.cj.jaxpr);
}

/// Example b of a batched literal (its leading axis).
Literal example(const Literal& l, int64_t b) {
  std::vector<int64_t> dims(l.dims.begin() + 1, l.dims.end());
  Literal c = Literal::make(l.dtype, dims);
  if (c.nbytes()) std::memcpy(c.data(), static_cast<const char*>(l.data()) + b * c.nbytes(), c.nbytes());
  return c;
}

/// vmap(f) over a batch of 1-3 against f on each example (both on the interpreter), then the batched program on
/// cpu against the interpreter.
std::string check_vmap(const Program& p, uint64_t seed, Batcher& cpu) {
  int64_t batch = static_cast<int64_t>(seed / 4 % 3) + 1;
  std::vector<ShapedArray> in;
  for (auto a : p.cj.in_avals()) {
    a.shape.insert(a.shape.begin(), batch);
    in.push_back(a);
  }
  Program vp = p;
  vp.cj = detail::trace_to_jaxpr("vmap", in, [&](const std::vector<Array>& xs) {
    return jitx::vmap([&](std::vector<Array> v) { return eval(p.cj, v); })(xs);
  });
  vp.coarse = coarsest(vp.cj.jaxpr, p.coarse);
  auto args = random_inputs(in, seed * 31 + 5);
  cpu.add(vp, args, "vmapped program: ");
  auto batched = testing::run(testing::interp(), lower(vp.cj), args);
  auto m = lower(p.cj);
  std::string out;
  for (int64_t b = 0; b < batch && out.empty(); ++b) {
    std::vector<Literal> xs;
    for (auto& a : args) xs.push_back(example(a, b));
    auto want = testing::run(testing::interp(), m, xs);
    for (size_t i = 0; i < want.size(); ++i)
      if (std::string d = compare(example(batched[i], b), want[i], p.depths[i], false, testing::Bound::kSum);
          !d.empty())
        out += fmt::format("example {} of {}, output {} (depth {}):\n{}", b, batch, i, p.depths[i], d);
  }
  if (out.empty()) return "";
  return describe(p, "vmap differs from a loop over the batch\n" + out, *m) + "\nvmapped jaxpr:\n" +
         detail::print_jaxpr(vp.cj.jaxpr);
}

}  // namespace
