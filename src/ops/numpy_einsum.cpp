// jnp.einsum: explicit subscripts, repeated labels (diagonals), pairwise contraction left to right.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "core/errors.h"
#include "jitx/lax.h"
#include "jitx/numpy.h"
#include "ops/convert.h"

namespace jitx::numpy {
using detail::ApiScope;
using detail::throw_error;

namespace {
// The sum over axes as JAX's einsum sums: an OR for bool (lax.reduce_sum refuses bool).
Array sum_labels(const Array& x, const std::vector<int64_t>& axes) {
  return x.dtype() == DType::bool_ ? lax::reduce_or(x, axes) : lax::reduce_sum(x, axes);
}

// Contracts two operands labelled la and lb, keeping the labels in `keep`; returns the result's labels.
std::pair<Array, std::string> einsum_pair(Array a, std::string la, Array b, std::string lb, const std::string& keep) {
  auto sum_private = [&](Array& x, std::string& lx, const std::string& other) {
    std::vector<int64_t> axes;
    std::string rest;
    for (size_t i = 0; i < lx.size(); ++i) {
      if (other.find(lx[i]) == std::string::npos && keep.find(lx[i]) == std::string::npos) axes.push_back(i);
      else rest += lx[i];
    }
    if (!axes.empty()) {
      x = sum_labels(x, axes);
      lx = rest;
    }
  };
  sum_private(a, la, lb);
  sum_private(b, lb, la);
  std::vector<int64_t> lbatch, rbatch, lcon, rcon;
  std::string batch, lfree, rfree;
  for (size_t i = 0; i < la.size(); ++i) {
    auto j = lb.find(la[i]);
    if (j == std::string::npos) {
      lfree += la[i];
    } else if (keep.find(la[i]) != std::string::npos) {
      lbatch.push_back(i);
      rbatch.push_back(j);
      batch += la[i];
    } else {
      lcon.push_back(i);
      rcon.push_back(j);
    }
  }
  for (char c : lb)
    if (la.find(c) == std::string::npos) rfree += c;
  for (size_t i = 0; i < lcon.size(); ++i)
    if (a.shape()[lcon[i]] != b.shape()[rcon[i]])
      throw_error<ShapeError>("einsum", "label '{}' has sizes {} and {}", la[lcon[i]], a.shape()[lcon[i]],
                              b.shape()[rcon[i]]);
  Array r = lax::dot_general(a, b, {lcon, rcon, lbatch, rbatch});
  return {r, batch + lfree + rfree};
}

/// The diagonal of axes p < q (one label twice): q is moved next to p, the two are merged, and every (n+1)-th
/// element kept; the result has x's axes without q.
Array einsum_diagonal(const Array& x, int64_t p, int64_t q, char label) {
  int64_t n = x.shape()[p];
  if (x.shape()[q] != n)
    throw_error<ShapeError>("einsum", "label '{}' is repeated with sizes {} and {}", label, n, x.shape()[q]);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    if (i == q) continue;
    perm.push_back(i);
    if (i == p) perm.push_back(q);
  }
  Array y = lax::transpose(x, perm);
  Shape merged;  // the merged axis sits at p; the other axes keep their order
  for (int64_t i = 0; i < y.ndim(); ++i) {
    if (i == p + 1) continue;
    merged.push_back(i == p ? n * n : y.shape()[i]);
  }
  y = lax::reshape(y, merged);
  return lax::slice_in_dim(y, 0, n * n, n + 1, p);
}
}  // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& operands, Loc loc) {
  ApiScope s(loc);
  std::string spec;
  for (char c : subscripts)
    if (c != ' ') spec += c;
  auto arrow = spec.find("->");
  if (arrow == std::string::npos)
    throw_error<ShapeError>("einsum", "needs explicit output subscripts (like 'ij,jk->ik'), got '{}'", subscripts);
  std::string out = spec.substr(arrow + 2);
  // Labels are letters (numpy's and JAX's rule); jitx's einsum has no '...' broadcasting.
  for (size_t i = 0; i < spec.size(); ++i) {
    char c = spec[i];
    bool ok = std::isalpha(static_cast<unsigned char>(c)) || (c == ',' && i < arrow) || i == arrow || i == arrow + 1;
    if (!ok) {
      // Bytes outside printable ASCII (half of a UTF-8 sequence) are shown as escapes, keeping the message valid.
      auto escaped = [](std::string_view t) {
        std::string out;
        for (char g : t) {
          auto u = static_cast<unsigned char>(g);
          out += u >= 0x20 && u < 0x7f ? std::string(1, g) : fmt::format("\\x{:02x}", u);
        }
        return out;
      };
      throw_error<ShapeError>("einsum", "subscripts '{}' have '{}' at {}: labels must be letters{}",
                              escaped(subscripts), escaped(std::string_view(&c, 1)), i,
                              c == '.' ? " (jitx's einsum has no '...' broadcasting)" : "");
    }
  }
  std::vector<std::string> ins;
  size_t start = 0;
  std::string lhs = spec.substr(0, arrow);
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      ins.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  if (ins.size() != operands.size() || operands.empty())
    throw_error<ShapeError>("einsum", "'{}' names {} operands, got {}", subscripts, ins.size(), operands.size());
  for (size_t k = 0; k < ins.size(); ++k) {
    if (static_cast<int64_t>(ins[k].size()) != operands[k].ndim())
      throw_error<ShapeError>("einsum", "operand {} has rank {} but subscripts '{}'", k, operands[k].ndim(), ins[k]);
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (out.find(out[i]) != i) throw_error<ShapeError>("einsum", "output label '{}' is repeated in '{}'", out[i], out);
  // A label repeated within one operand takes its diagonal first ("ii->i", "ii->", "iij->j", "ii,jj->").
  std::vector<Array> ops = operands;
  for (size_t k = 0; k < ins.size(); ++k)
    for (size_t i = 0; i < ins[k].size(); ++i)
      if (auto p = ins[k].find(ins[k][i]); p != i) {
        ops[k] = einsum_diagonal(ops[k], static_cast<int64_t>(p), static_cast<int64_t>(i), ins[k][i]);
        ins[k].erase(i--, 1);
      }
  // A label of size 1 in some operands and n in others broadcasts to n, as in JAX ("ij,ij->ij" of (2, 3) and
  // (1, 3)); two sizes other than 1 are an error.
  std::map<char, int64_t> label_size;
  for (size_t k = 0; k < ins.size(); ++k)
    for (size_t i = 0; i < ins[k].size(); ++i) {
      int64_t n = ops[k].shape()[i];
      auto [it, fresh] = label_size.emplace(ins[k][i], n);
      if (fresh || it->second == n || n == 1) continue;
      if (it->second != 1)
        throw_error<ShapeError>("einsum", "label '{}' has sizes {} and {} (operand {})", ins[k][i], it->second, n, k);
      it->second = n;
    }
  for (size_t k = 0; k < ins.size(); ++k) {
    Shape want = ops[k].shape();
    for (size_t i = 0; i < ins[k].size(); ++i) want[i] = label_size[ins[k][i]];
    if (want != ops[k].shape()) ops[k] = broadcast_to(ops[k], want);
  }
  DType d = result_type(operands);
  // Weak when every operand is, as JAX's promote_dtypes.
  bool w = std::all_of(operands.begin(), operands.end(), [](const Array& x) { return x.weak_type(); });
  Array acc = detail::convert_weak(ops[0], d, w);
  std::string lacc = ins[0];
  for (size_t k = 1; k < operands.size(); ++k) {
    std::string keep = out;
    for (size_t j = k + 1; j < ins.size(); ++j) keep += ins[j];
    auto [r, l] = einsum_pair(acc, lacc, detail::convert_weak(ops[k], d, w), ins[k], keep);
    acc = r;
    lacc = l;
  }
  // Sum labels absent from the output, then permute into the output's order.
  std::vector<int64_t> sum_axes;
  std::string rest;
  for (size_t i = 0; i < lacc.size(); ++i) {
    if (out.find(lacc[i]) == std::string::npos) sum_axes.push_back(i);
    else rest += lacc[i];
  }
  if (!sum_axes.empty()) acc = sum_labels(acc, sum_axes);
  std::vector<int64_t> perm;
  for (char c : out) {
    auto p = rest.find(c);
    if (p == std::string::npos) throw_error<ShapeError>("einsum", "output label '{}' is not in any input", c);
    perm.push_back(static_cast<int64_t>(p));
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? acc : lax::transpose(acc, perm);
}

}  // namespace jitx::numpy
