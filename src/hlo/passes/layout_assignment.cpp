// Layout assignment: bitcast transposes where consumers accept them, copies where they disagree, GEMM operands.
#include "hlo/passes/layout_assignment.h"

#include <algorithm>
#include <unordered_set>

#include "hlo/ir/attributes.h"
#include "hlo/passes/fusion.h"

namespace jitx::hlo {
namespace {
using Ints = std::vector<int64_t>;

Ints row_major(int64_t rank) {
  Ints l;
  for (int64_t d = rank - 1; d >= 0; --d) l.push_back(d);
  return l;
}
/// The canonical spelling: empty for row-major.
Ints canonical(Ints l) { return l == row_major(static_cast<int64_t>(l.size())) ? Ints{} : l; }

/// The layout that makes transpose(x, perm) copy-free: result dim k is operand dim perm[k].
Ints bitcast_layout(const Instruction& t) {
  const Ints& perm = permutation_of(t);
  Ints out;
  for (auto d : minor_to_major(t.operand(0)->shape))
    out.push_back(std::find(perm.begin(), perm.end(), d) - perm.begin());
  return out;
}

bool dims_minor(const Ints& layout, const Ints& dims) {
  if (dims.size() > layout.size()) return false;
  for (size_t k = 0; k < dims.size(); ++k)
    if (std::find(dims.begin(), dims.end(), layout[k]) == dims.end()) return false;
  return true;
}

bool plain_rank2_dot(const Instruction& d) {
  if (d.opcode != Opcode::kDot || d.operand(0)->shape.rank() != 2 || d.operand(1)->shape.rank() != 2) return false;
  // One contracting dim on each side (a rank-2 dot contracting none, an outer product, is no GEMM: the fuzzer's
  // std::out_of_range from .at(0) below).
  auto dn = DotDimensionNumbers::of(d);
  return dn.lhs_batch_dims.empty() && dn.lhs_contracting_dims.size() == 1 && dn.rhs_contracting_dims.size() == 1;
}

/// The layout in which loop fusion f writes its result while reading its main operand in memory order: from the
/// root through elementwise ops and transposes to a parameter, the result's dims ordered as that operand's dims
/// lie in memory. Empty when the root is reached otherwise (a broadcast, a slice: no single order is cheapest).
Ints streaming_layout(const Instruction& f) {
  const Instruction* x = f.called.at(0)->root;
  Ints perm;  // result dim k is x's dim perm[k]
  for (int64_t k = 0; k < f.shape.rank(); ++k) perm.push_back(k);
  for (int steps = 0; steps < 64; ++steps) {
    if (x->opcode == Opcode::kParameter) {
      Ints out;
      for (auto d : minor_to_major(f.operand(x->parameter_number)->shape))
        out.push_back(std::find(perm.begin(), perm.end(), d) - perm.begin());
      return out;
    }
    if (x->opcode == Opcode::kTranspose) {
      const Ints& p = permutation_of(*x);
      for (auto& k : perm) k = p[k];
      x = x->operand(0);
      continue;
    }
    if (!is_elementwise(x->opcode) && x->opcode != Opcode::kCopy) return {};
    const Instruction* next = nullptr;
    for (auto* o : x->operands)
      if (o->shape.dims == x->shape.dims && (!next || o->opcode == Opcode::kParameter)) next = o;
    if (!next) return {};
    x = next;
  }
  return {};
}

enum class Take { kNo, kAccepts, kPrefers };

/// How consumer `c` takes value `v` (its operand) in layout L.
Take takes(const Instruction& c, const Instruction& v, const Ints& L) {
  switch (c.opcode) {
    case Opcode::kDot:
      return plain_rank2_dot(c) ? Take::kPrefers : Take::kNo;
    case Opcode::kReduce:
      return c.operand(0) == &v && c.operands.size() == 2 && dims_minor(L, dimensions_of(c))
                 ? Take::kPrefers
                 : Take::kNo;
    case Opcode::kFusion: {
      const Computation* f = c.called.at(0);
      FusionKind kind = fusion_kind_of(c);
      Take best = Take::kAccepts;
      for (size_t k = 0; k < c.operands.size(); ++k) {
        if (c.operand(k) != &v) continue;
        const Instruction* p = f->parameters.at(k);
        for (auto& fi : f->instructions) {
          if (std::find(fi->operands.begin(), fi->operands.end(), p) == fi->operands.end()) continue;
          if (kind == FusionKind::kRow) return Take::kNo;  // rows must stay contiguous
          if (fi->opcode == Opcode::kDot) {
            if (!plain_rank2_dot(*fi)) return Take::kNo;
            best = Take::kPrefers;
          } else if (fi->opcode == Opcode::kReduce && kind == FusionKind::kInput) {
            if (!dims_minor(L, dimensions_of(*fi))) return Take::kNo;
            best = Take::kPrefers;
          }
          // Loop ops index through any layout.
        }
      }
      return best;
    }
    default:
      return Take::kNo;
  }
}

class Assigner {
 public:
  Assigner(Module& m, std::string_view pass) : m_(m), pass_(pass) {}

  bool run() {
    std::unordered_set<const Computation*> fused;
    for (auto& c : m_.computations)
      for (auto& i : c->instructions)
        if (i->opcode == Opcode::kFusion) fused.insert(i->called.at(0));
    for (auto& c : m_.computations)
      if (!fused.count(c.get())) {
        transposes(*c);
        dot_operands(*c);
      }
    for (auto& c : m_.computations)
      for (auto& i : c->instructions)
        if (i->opcode == Opcode::kFusion) mirror(*i);
    for (auto& c : m_.computations)
      for (auto& i : c->instructions) normalise(i->shape);
    return changed_;
  }

 private:
  Module& m_;
  std::string_view pass_;
  bool changed_ = false;

  static void normalise(Shape& s) {
    if (s.is_tuple) {
      for (auto& t : s.tuple_shapes) normalise(t);
      return;
    }
    s.layout = canonical(minor_to_major(s));
  }

  // Rule 2: transposes become layout changes where a consumer prefers it.
  void transposes(Computation& c) {
    std::vector<Instruction*> ts;
    for (auto& i : c.instructions)
      if (i->opcode == Opcode::kTranspose && !is_layout_bitcast(*i)) ts.push_back(i.get());
    for (Instruction* t : ts) {
      Ints L = bitcast_layout(*t);
      bool prefer = false;
      std::vector<Instruction*> refuse;
      for (auto* u : t->users()) {
        Take k = takes(*u, *t, L);
        if (k == Take::kPrefers) prefer = true;
        if (k == Take::kNo) refuse.push_back(u);
      }
      bool is_result = t == c.root;
      if (!prefer) continue;
      t->shape.layout = canonical(L);
      changed_ = true;
      std::string copy_note;
      if (!refuse.empty() || is_result) {
        // The consumers that want row-major read one physical transpose.
        auto at = std::find_if(c.instructions.begin(), c.instructions.end(), [&](auto& x) { return x.get() == t; });
        Shape rm = t->shape;
        rm.layout.clear();
        Instruction* copy = std::next(at) == c.instructions.end()
                                ? c.add(Opcode::kCopy, rm, {t})
                                : c.insert_before(std::next(at)->get(), Opcode::kCopy, rm, {t});
        for (auto* u : refuse)
          for (auto*& o : u->operands)
            if (o == t) o = copy;
        if (is_result) c.root = copy;
        copy_note = fmt::format(", %{} copies it back to row-major for {} consumer(s)", copy->name,
                                refuse.size() + (is_result ? 1 : 0));
      }
      trace_rewrite(pass_, *t,
                    fmt::format("transpose => layout change {}{} (rule: consumer prefers the layout)",
                                t->shape.str(true), copy_note));
    }
  }

  // Rule 3: a kLoop fusion feeding only a GEMM writes the layout the GEMM reads fastest, unless the fusion streams
  // its operand in the other matrix order (gelu(w.T) feeding a dot as [K, N] is written column-major, a plain
  // copy of w's memory order): the GEMM takes a transposed matrix without a copy, while a fusion writing
  // against its operand's order strides through memory.
  void dot_operands(Computation& c) {
    for (auto& up : c.instructions) {
      Instruction* d = up.get();
      if (!plain_rank2_dot(*d)) continue;
      for (int side = 0; side < 2; ++side) {
        Instruction* p = d->operand(side);
        if (p->opcode != Opcode::kFusion || fusion_kind_of(*p) != FusionKind::kLoop || p == c.root || p->shape.is_tuple)
          continue;
        auto us = p->users();
        if (us.size() != 1 || d->operand(0) == d->operand(1)) continue;
        auto dn = DotDimensionNumbers::of(*d);
        int64_t contracting = (side == 0 ? dn.lhs_contracting_dims : dn.rhs_contracting_dims).at(0);
        int64_t other = 1 - contracting;
        Ints want = side == 0 ? Ints{contracting, other} : Ints{other, contracting};
        Ints stream = streaming_layout(*p);
        if (stream.size() == 2) want = stream;  // either order is a plain or a transposed matrix to the GEMM
        if (minor_to_major(p->shape) == want) continue;
        p->shape.layout = canonical(want);
        changed_ = true;
        trace_rewrite(pass_, *p, fmt::format("GEMM {} operand written as {} (rule: dot operand layout)",
                                             side == 0 ? "lhs" : "rhs", p->shape.str(true)));
      }
    }
  }

  // Rule 4: fused parameters and roots mirror the fusion instruction.
  void mirror(Instruction& f) {
    Computation* fc = f.called.at(0);
    for (size_t k = 0; k < f.operands.size(); ++k) fc->parameters.at(k)->shape.layout = f.operand(k)->shape.layout;
    if (f.shape.is_tuple) {
      for (size_t k = 0; k < f.shape.tuple_shapes.size(); ++k)
        fc->root->operand(k)->shape.layout = f.shape.tuple_shapes[k].layout;
      fc->root->shape = f.shape;
    } else {
      fc->root->shape.layout = f.shape.layout;
    }
  }
};
}  // namespace

bool LayoutAssignment::run(Module& m) { return Assigner(m, name()).run(); }

}  // namespace jitx::hlo
