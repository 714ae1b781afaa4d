// The all-reduce combiner: small independent all-reduces of one kind become one (XLA's AllReduceCombiner).
#pragma once
#include <cstdint>

#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// Combines all-reduces with the same reducer, dtype and replica groups, none depending on another, each of at most
/// `max_member_bytes` and together at most `max_total_bytes`, into one: the operands flattened and concatenated,
/// one all-reduce, each result sliced back out. A partitioned training step's small gradients (biases, the loss)
/// then meet in one rendezvous instead of one each; large ones stay apart (the concatenation would copy them).
class AllReduceCombiner : public HloPass {
 public:
  explicit AllReduceCombiner(int64_t max_member_bytes = 256 << 10, int64_t max_total_bytes = 1 << 20)
      : max_member_(max_member_bytes), max_total_(max_total_bytes) {}
  std::string_view name() const override { return "all-reduce-combiner"; }
  bool run(Module& m) override;

 private:
  int64_t max_member_, max_total_;
};

}  // namespace jitx::hlo
