// Row groups (see row_groups.h): which runs of kernel steps may run block by block, and running them.
//
// A run of kernel steps k1, k2, ... over a leading dimension of extent R becomes a group when:
//  - every output of every kernel has leading dimension R and lies in memory in row-major order, so the block of
//    rows [lo, hi) of the leading dimension is one contiguous range of its loop space (rows [lo * inner, hi * inner)
//    of a rank >= 2 output, columns [lo, hi) of a rank-1 one);
//  - a kernel reads an operand row-locally (its output row i needs only the operand's row i) when every path from
//    the operand to the kernel's outputs goes through ops that keep the leading dimension in place: elementwise
//    ops, broadcasts that map operand dim 0 to result dim 0, reduces and reverses that leave dim 0 alone,
//    transposes that keep it first, reshapes that keep its extent;
//  - wherever two steps of the group touch overlapping memory and one of them writes it (a kernel reading what an
//    earlier one wrote, a buffer reused after its value died, an output written in place of a donated parameter),
//    both touch the same slice, row-locally. Reads of memory no step of the group writes (weights, a bias
//    broadcast along the rows) may be of any kind.
// Run in blocks, each kernel then sees, for every row it computes, exactly the values it would have seen run whole.
#include "backends/cpu/row_groups.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include "backends/cpu/kernel_planner.h"
#include "backends/cpu/parallel.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::runtime::cpu_backend {
using hlo::Instruction;
using hlo::Opcode;

namespace {

constexpr int64_t kMinRows = 32;               // a shorter leading dimension gives too few blocks to share out
constexpr int64_t kBlockBytes = 256 * 1024;    // memory a block touches: well inside a core's L2 (512 KiB-2 MiB)
constexpr int64_t kRowAlign = 16;              // blocks start at multiples of 16 (a rank-1 output's vectors)
constexpr int64_t kMinParallelWork = 1 << 15;  // element reads below which the group runs on the calling thread

/// Whether output row r of i (at operand position k) depends on row r of operand k alone, both having leading
/// dimension R.
bool keeps_rows(const Instruction& i, size_t k, int64_t R) {
  const hlo::Shape& o = i.operand(k)->shape;
  if (i.shape.is_tuple || o.is_tuple || i.shape.dims.empty() || o.dims.empty() || i.shape.dims[0] != R ||
      o.dims[0] != R)
    return false;
  switch (i.opcode) {
    case Opcode::kBroadcastInDim: {
      const auto& bd = hlo::broadcast_dimensions_of(i);
      return !bd.empty() && bd[0] == 0;
    }
    case Opcode::kReduce: {
      if (k >= i.operands.size() / 2) return false;  // an init value
      const auto& rd = hlo::dimensions_of(i);
      return std::find(rd.begin(), rd.end(), 0) == rd.end();
    }
    case Opcode::kReverse: {
      const auto& rd = hlo::dimensions_of(i);
      return std::find(rd.begin(), rd.end(), 0) == rd.end();
    }
    case Opcode::kTranspose: {
      const auto& p = hlo::permutation_of(i);
      return !p.empty() && p[0] == 0;
    }
    case Opcode::kReshape:  // row-major order: row r is elements [r * n / R, (r + 1) * n / R) on both sides
      return true;
    case Opcode::kCopy: case Opcode::kSelect: case Opcode::kClamp: case Opcode::kCompare: case Opcode::kConvert:
      return o.dims == i.shape.dims;
    case Opcode::kBitcastConvert:
      return hlo::is_elementwise_bitcast(i) && o.dims == i.shape.dims;
    default:
      return hlo::is_elementwise(i.opcode) && o.dims == i.shape.dims;
  }
}

/// Per operand of kernel `inst`: whether the kernel reads it row-locally.
std::vector<bool> row_local_operands(const Instruction& inst, int64_t R) {
  std::vector<bool> local(inst.operands.size(), false);
  if (inst.opcode != Opcode::kFusion) {
    for (size_t k = 0; k < inst.operands.size(); ++k) local[k] = keeps_rows(inst, k, R);
    return local;
  }
  const hlo::Computation& fc = *inst.called.at(0);
  if (fc.parameters.size() > 64) return local;
  // Which parameters each value depends on (bit p: parameter p), and the parameters some path leaves row-locality.
  std::unordered_map<const Instruction*, uint64_t> dep;
  uint64_t bad = 0;
  for (auto& up : fc.instructions) {
    const Instruction& i = *up;
    uint64_t d = 0;
    if (i.opcode == Opcode::kParameter) d = uint64_t{1} << i.parameter_number;
    for (size_t k = 0; k < i.operands.size(); ++k) {
      uint64_t od = dep[i.operand(k)];
      bool tuple_root = &i == fc.root && i.opcode == Opcode::kTuple;
      if (od != 0 && !tuple_root && !keeps_rows(i, k, R)) bad |= od;
      d |= od;
    }
    dep[&i] = d;
  }
  auto check_output = [&](const Instruction* o) {
    if (o->shape.is_tuple || o->shape.dims.empty() || o->shape.dims[0] != R) bad |= dep[o];
  };
  if (fc.root->opcode == Opcode::kTuple)
    for (auto* o : fc.root->operands) check_output(o);
  else
    check_output(fc.root);
  for (auto* p : fc.parameters) {
    auto n = static_cast<size_t>(p->parameter_number);
    const hlo::Shape& s = p->shape;
    local[n] = !(bad >> n & 1) && !s.is_tuple && !s.dims.empty() && s.dims[0] == R;
  }
  return local;
}

/// The leading dimension kernel `inst` could be grouped over (0: none): every output row-major with that leading
/// extent (at least kMinRows) and elements, every operand an array.
int64_t kernel_extent(const Instruction& inst) {
  if (!all_row_major(inst.shape)) return 0;
  for (auto* o : inst.operands)
    if (o->shape.is_tuple) return 0;
  auto outs = cpu::output_shapes(inst);
  int64_t R = outs[0]->dims.empty() ? 0 : outs[0]->dims[0];
  for (auto* s : outs)
    if (s->is_tuple || s->dims.empty() || s->dims[0] != R || s->num_elements() == 0) return 0;
  return R >= kMinRows ? R : 0;
}

/// Instructions that make no step of their own (build_into skips them): they neither end nor join a run.
bool makes_no_step(const Instruction& i) {
  switch (i.opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple: case Opcode::kOptimizationBarrier:
    case Opcode::kGetTupleElement: case Opcode::kReshape:
      return true;
    case Opcode::kBitcastConvert: return i.shape.byte_size() == i.operand(0)->shape.byte_size();
    default: return hlo::is_layout_bitcast(i);
  }
}

/// One memory access of a step: a slice, whether it is written, whether row-locally.
struct Access {
  int64_t space, begin, end;  // space: the temp arena (-1) or an allocation (donated outputs: their parameter's)
  bool write, local;
};

class Grouper {
 public:
  explicit Grouper(const Program& prog) : prog_(prog) {}

  /// The leading dimension a kernel step could be grouped over (0: none).
  static int64_t extent(const Step& st) {
    if (st.kind != Step::Kind::kKernel || st.ins.empty()) return 0;
    for (auto& in : st.ins)
      if (in.size() != 1) return 0;
    return kernel_extent(*st.inst);
  }

  std::vector<Access> accesses(const Step& st, int64_t R) const {
    std::vector<Access> a;
    for (auto& s : st.outs) a.push_back(access(s, true, true));
    auto local = row_local_operands(*st.inst, R);
    for (size_t k = 0; k < st.ins.size(); ++k)
      a.push_back(access(st.ins[k][0], false, local[k] && row_major(st.inst->operand(k)->shape)));
    return a;
  }

  /// Whether a step with accesses `b` may join a group whose steps made accesses `group`.
  static bool compatible(const std::vector<Access>& group, const std::vector<Access>& b) {
    for (auto& x : group)
      for (auto& y : b) {
        if (x.space != y.space || x.end <= y.begin || y.end <= x.begin || (!x.write && !y.write)) continue;
        if (x.begin != y.begin || x.end != y.end || !x.local || !y.local) return false;
      }
    return true;
  }

 private:
  Access access(const Slice& s, bool write, bool local) const {
    const auto& alloc = prog_.ba.allocations.at(static_cast<size_t>(s.alloc));
    int64_t space = s.alloc;
    if (alloc.kind == hlo::Allocation::Kind::kTemp) {
      space = -1;  // every temp allocation lies in the one frame (CpuExecutable::run_program)
    } else if (alloc.kind == hlo::Allocation::Kind::kOutput && prog_.output_leaf[s.alloc] >= 0 &&
               static_cast<size_t>(prog_.output_leaf[s.alloc]) < prog_.ba.output_aliases.size()) {
      int64_t p = prog_.ba.output_aliases[static_cast<size_t>(prog_.output_leaf[s.alloc])];
      if (p >= 0)  // a donated parameter's memory
        for (auto& a : prog_.ba.allocations)
          if (a.kind == hlo::Allocation::Kind::kParameter && a.parameter_number == p) space = a.index;
    }
    return Access{space, s.offset, s.offset + s.size, write, local};
  }
  const Program& prog_;
};

/// The step that runs `members` block by block.
Step make_group(std::vector<Step> members, int64_t R, const std::vector<Access>& acc) {
  Step g;
  g.kind = Step::Kind::kRowGroup;
  g.inst = members.front().inst;
  // Bytes per row of everything touched row-locally (each slice once), for the block size.
  std::vector<std::pair<int64_t, int64_t>> seen;
  int64_t row_bytes = 0;
  for (auto& a : acc) {
    if (!a.local) continue;
    std::pair<int64_t, int64_t> key{a.space, a.begin};
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    row_bytes += (a.end - a.begin + R - 1) / R;
  }
  int threads = cpu::pool_threads();
  int64_t block = std::max<int64_t>(1, kBlockBytes / std::max<int64_t>(row_bytes, 1));
  // At least four blocks per thread when the rows allow: threads claim them dynamically, so one slowed down by
  // the machine does not hold the group up by a whole share.
  block = std::min(block, (R + 4 * threads - 1) / (4 * threads));
  block = std::max<int64_t>(kRowAlign, (block + kRowAlign - 1) / kRowAlign * kRowAlign);
  g.group_rows = R;
  g.group_block = block;
  g.group = std::move(members);
  return g;
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> row_group_spans(const hlo::Computation& c,
                                                         const std::function<bool(const Instruction&)>& is_kernel) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::unordered_map<const Instruction*, const Instruction*> source;  // through the step-less aliases
  auto src = [&](const Instruction* i) {
    auto it = source.find(i);
    return it == source.end() ? i : it->second;
  };
  std::unordered_map<const Instruction*, bool> in_run;
  int64_t R = 0, first = -1, last = -1, members = 0;
  auto close = [&] {
    if (members >= 2) spans.push_back({first, last});
    R = 0, first = last = -1, members = 0;
    in_run.clear();
  };
  for (size_t p = 0; p < c.instructions.size(); ++p) {
    const Instruction& i = *c.instructions[p];
    if (makes_no_step(i)) {
      if (!i.operands.empty() && i.opcode != Opcode::kTuple && i.opcode != Opcode::kOptimizationBarrier)
        source[&i] = src(i.operand(0));
      continue;
    }
    int64_t r = is_kernel(i) ? kernel_extent(i) : 0;
    bool joins = r != 0 && r == R;
    if (joins) {
      auto local = row_local_operands(i, R);
      for (size_t k = 0; k < i.operands.size() && joins; ++k)
        if (in_run.count(src(i.operand(k))))
          joins = local[k] && row_major(i.operand(k)->shape);
    }
    if (!joins) {
      close();
      if (r == 0) continue;
      R = r;
      first = static_cast<int64_t>(p);
    }
    in_run[&i] = true;
    last = static_cast<int64_t>(p);
    ++members;
  }
  close();
  return spans;
}

int64_t form_row_groups(Program& prog) {
  std::vector<Step>& steps = prog.steps;
  Grouper grouper(prog);
  std::vector<Step> out;
  int64_t groups = 0;
  size_t i = 0;
  while (i < steps.size()) {
    int64_t R = Grouper::extent(steps[i]);
    if (R == 0) {
      out.push_back(std::move(steps[i++]));
      continue;
    }
    std::vector<Access> acc = grouper.accesses(steps[i], R);
    // Within one kernel, run_kernel's row chunks already split it like the blocks will; only overlap between
    // kernels matters.
    size_t j = i + 1;
    for (; j < steps.size() && Grouper::extent(steps[j]) == R; ++j) {
      auto b = grouper.accesses(steps[j], R);
      if (!Grouper::compatible(acc, b)) break;
      acc.insert(acc.end(), b.begin(), b.end());
    }
    if (j - i < 2 || (R + kRowAlign - 1) / kRowAlign < 2) {
      out.push_back(std::move(steps[i++]));
      continue;
    }
    std::vector<Step> members;
    for (size_t k = i; k < j; ++k) members.push_back(std::move(steps[k]));
    out.push_back(make_group(std::move(members), R, acc));
    ++groups;
    i = j;
  }
  steps = std::move(out);
  return groups;
}

int64_t row_group_work(const Step& g) {
  int64_t work = 0;
  for (auto& s : g.group) work += s.space.work();
  return work;
}

void run_row_group(const Step& g, const std::vector<cpu::KernelFn>& fns, void* const* const* bufs) {
  const int64_t R = g.group_rows, block = g.group_block, blocks = (R + block - 1) / block;
  auto run_block = [&](int64_t b) {
    int64_t lo = b * block, hi = std::min(R, lo + block);
    for (size_t k = 0; k < g.group.size(); ++k) {
      const Step& s = g.group[k];
      const cpu::LoopSpace& sp = s.space;
      cpu::KernelFn fn = fns[s.kernel];
      if (sp.rows == 1 && sp.cols == R) {
        fn(bufs[k], 0, 1, lo, hi);  // a rank-1 output: the leading dim is the loop's columns
      } else {
        int64_t inner = sp.rows / R;
        fn(bufs[k], lo * inner, hi * inner, 0, sp.cols);
      }
    }
  };
  int threads = cpu::pool_threads();
  if (threads <= 1 || blocks < 2 || row_group_work(g) < kMinParallelWork) {
    for (int64_t b = 0; b < blocks; ++b) run_block(b);
    return;
  }
  std::atomic<int64_t> next{0};
  cpu::parallel_for(std::min<int64_t>(threads, blocks), [&](int64_t) {
    for (int64_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks;) run_block(b);
  });
}

}  // namespace jitx::runtime::cpu_backend
