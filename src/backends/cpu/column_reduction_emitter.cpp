// The column reduction emitter (see column_reduction_emitter.h): reductions over leading dimensions, walked in
// memory order over tiles of accumulators.
#include "backends/cpu/column_reduction_emitter.h"

#include <algorithm>
#include <functional>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "backends/cpu/llvm_emit.h"
#include "core/errors.h"
#include "hlo/ir/attributes.h"

namespace jitx::cpu {
using hlo::Instruction;
using hlo::Opcode;
using llvm::Value;

bool ColumnReductionEmitter::column_reduction(const std::vector<const Instruction*>& roots,
                                              const std::vector<Layout>& out_layouts) const {
  for (auto& l : out_layouts)
    if (!l.empty()) return false;  // the tiles are written row-major
  for (auto* r : roots) {
    if (r->opcode != Opcode::kReduce || r->operands.size() != 2) return false;
    // ... and the reduced rows read row-major (an operand whose layout puts the reduced dims minor is a row
    // reduction, see gen_reduce).
    if (!read_layout(r->operand(0)).empty()) return false;
    const auto& xd = r->operand(0)->shape.dims;
    const auto& rd = hlo::dimensions_of(*r);
    if (xd != roots[0]->operand(0)->shape.dims || rd != hlo::dimensions_of(*roots[0])) return false;
    if (rd.empty() || rd.size() >= xd.size()) return false;
    for (size_t k = 0; k < rd.size(); ++k)
      if (rd[k] != static_cast<int64_t>(k)) return false;
  }
  return !roots.empty();
}

void ColumnReductionEmitter::emit_column_reduction(const std::vector<const Instruction*>& roots,
                                             const std::vector<const hlo::Shape*>& outs,
                                             const std::vector<Value*>& ptrs, Value* r0, Value* r1, Value* c0,
                                             Value* c1) {
  const auto& dims = outs[0]->dims;
  int64_t cols = dims.back(), out_n = detail::num_elements(dims);
  const auto& xd = roots[0]->operand(0)->shape.dims;
  int64_t n = out_n == 0 ? 0 : detail::num_elements(xd) / out_n;
  struct Acc {
    const Instruction* root;
    std::string r;
    DType d;
    bool wide;  // a float sum, accumulated in double
    llvm::Type* type;
    Value* array;
    Value* init;
  };
  std::vector<Acc> accs;
  auto ip = b_.saveIP();
  b_.SetInsertPoint(&f_->getEntryBlock(), f_->getEntryBlock().begin());
  for (auto* root : roots) {
    Acc a{root,
          std::string(hlo::reducer_name(hlo::reducer_of(*root))),
          root->operand(0)->shape.dtype,
          false,
          nullptr,
          nullptr,
          nullptr};
    a.wide = is_float(a.d) && a.r == "add";
    a.type = a.wide ? b_.getDoubleTy() : ctype(a.d);
    if (a.type->isIntegerTy(1)) a.type = b_.getInt8Ty();  // bool accumulators live in memory as bytes
    a.array = b_.CreateAlloca(llvm::ArrayType::get(a.type, kColumnTile));
    accs.push_back(a);
  }
  b_.restoreIP(ip);
  for (auto& a : accs) a.init = gen(a.root->operand(1), scalar_index());
  auto slot = [&](Acc& a, Value* j) { return b_.CreateInBoundsGEP(a.type, a.array, j); };
  auto get = [&](Acc& a, Value* j) {
    Value* v = b_.CreateLoad(a.type, slot(a, j));
    return a.type == b_.getInt8Ty() && a.d == DType::bool_ ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
  };
  auto put = [&](Acc& a, Value* j, Value* v) {
    if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, b_.getInt8Ty());
    b_.CreateStore(v, slot(a, j));
  };
  loop(r0, r1, nullptr, [&](Value* r, Value*) {
    Value* width = b_.CreateSub(c1, c0);
    Value* tiles = b_.CreateUDiv(b_.CreateAdd(width, i64(kColumnTile - 1)), i64(kColumnTile));
    loop(i64(0), tiles, nullptr, [&](Value* t, Value*) {
      Value* lo = b_.CreateAdd(c0, b_.CreateMul(t, i64(kColumnTile)));
      Value* len = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, i64(kColumnTile), b_.CreateSub(c1, lo));
      Value* base = b_.CreateAdd(b_.CreateMul(r, i64(cols)), lo);  // the tile's first output element
      loop(i64(0), len, nullptr, [&](Value* j, Value*) {
        for (auto& a : accs) put(a, j, a.wide ? fconst(b_.getDoubleTy(), 0.0) : identity(a.r, a.d));
        return nullptr;
      });
      // Reduced rows k0 .. k0 + count - 1 into the tile: their elements are combined first, pairwise, then into
      // the accumulator, so each accumulator is loaded and stored once per `count` rows and `count` rows are read
      // as parallel streams. A float sum of f32, bf16 or f16 elements adds the `count` rows in f32 (a tree of
      // depth 3: at most 3 roundings of 2^-24 on eight elements' magnitudes) and widens that one partial sum to
      // the double accumulator: an eighth of the conversions and double adds, which were what a column sum in
      // cache was bound by on the Zen 1, whose conversions run on one pipe (a 256^2 column sum: 15.3 -> 7.5 us).
      auto rows_into_tile = [&](Value* k0, int64_t count) {
        std::vector<Value*> xbase;
        for (int64_t q = 0; q < count; ++q)
          xbase.push_back(b_.CreateAdd(b_.CreateMul(b_.CreateAdd(k0, i64(q)), i64(out_n)), base));
        loop(i64(0), len, nullptr, [&](Value* j, Value*) {
          std::vector<Index> xi(count);
          for (int64_t q = 0; q < count; ++q) {
            xi[q].dims = xd;
            xi[q].linear = b_.CreateAdd(xbase[q], j);
          }
          for (auto& a : accs) {
            llvm::Type* sum_t = a.d == DType::float64 ? b_.getDoubleTy() : b_.getFloatTy();
            std::vector<Value*> parts;
            for (int64_t q = 0; q < count; ++q) {
              Value* x = gen(a.root->operand(0), xi[q]);
              parts.push_back(a.wide && x->getType() != sum_t ? b_.CreateFPExt(x, sum_t) : x);
            }
            for (size_t width = 1; width < parts.size(); width *= 2)
              for (size_t q = 0; q + width < parts.size(); q += 2 * width)
                parts[q] = a.wide ? b_.CreateFAdd(parts[q], parts[q + width])
                                  : combine(a.r, a.d, parts[q], parts[q + width], false);
            Value* part = a.wide && sum_t != b_.getDoubleTy() ? b_.CreateFPExt(parts[0], b_.getDoubleTy()) : parts[0];
            Value* cur = get(a, j);
            put(a, j, a.wide ? b_.CreateFAdd(cur, part) : combine(a.r, a.d, cur, part, false));
          }
          return nullptr;
        });
      };
      constexpr int64_t kRowsPerPass = 8;
      loop(i64(0), i64(n / kRowsPerPass), nullptr, [&](Value* k, Value*) {
        rows_into_tile(b_.CreateMul(k, i64(kRowsPerPass)), kRowsPerPass);
        return nullptr;
      });
      loop(i64(n / kRowsPerPass * kRowsPerPass), i64(n), nullptr, [&](Value* k, Value*) {
        rows_into_tile(k, 1);
        return nullptr;
      });
      loop(i64(0), len, nullptr, [&](Value* j, Value*) {
        for (size_t k = 0; k < accs.size(); ++k) {
          Acc& a = accs[k];
          Value* v = get(a, j);
          if (a.wide) v = b_.CreateFPTrunc(v, ctype(a.d));
          store(ptrs[k], b_.CreateAdd(base, j), outs[k]->dtype, round(a.d, combine(a.r, a.d, a.init, v, false)));
        }
        return nullptr;
      });
      return nullptr;
    });
    return nullptr;
  });
}

}  // namespace jitx::cpu
