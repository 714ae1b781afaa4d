// Fusion: groups producer-consumer chains into kFusion kernels (kLoop, kInput, kOutput, kRow) as XLA does.
#pragma once
#include <cstdint>
#include <string>

#include "hlo/passes/pass.h"

namespace jitx::hlo {

/// The IR contract of a fusion, which backends emit kernels from.
///
/// A fusion is `%f = <shape> fusion(%a, %b, ...), kind=<kind>, calls=%fused_computation.N`. The called computation
/// has one parameter per operand (same types and layouts, numbered in operand order) and computes the fusion's
/// result. A multi-output fusion's root is a kTuple of its outputs (every output an array); users outside read
/// it only through get-tuple-element. No fused computation calls another computation. Which opcodes a fused
/// computation may hold depends on its kind:
///
///  kLoop    "loop ops" only: elementwise ops (incl. convert, select, clamp, compare), broadcast, reshape,
///           transpose, reverse, slice, iota, concatenate, pad and constants of at most 16 elements. One array
///           output, or several of the same dims (multi-output: the root is a tuple). A kernel computes each
///           output element from its index alone (one loop over the output), every output of an element before
///           it stores any.
///  kInput   loop ops feeding one reduce, or several reduces over operands of the same dims with the same
///           `dimensions` (sibling reductions, multi-output: the root is a tuple of the reduces, in order). Every
///           reduce has one operand and a scalar init (a fused constant, or a fusion parameter); nothing in the
///           fusion uses a reduce's result. A kernel walks the reduce input once and updates every accumulator.
///  kOutput  exactly one dot; its two operands are fusion parameters (a GEMM reads them from memory). Every
///           instruction that uses the dot's value, directly or not, is elementwise on the dot's dims (the
///           epilogue); the root is the last of them. Other instructions are loop ops producing the epilogue's
///           other inputs (a bias broadcast). A kernel runs the GEMM and applies the epilogue per output element.
///  kRow     jitx's own kind, for row-wise normalisations (layer norm, softmax). With D = [R1..Rk, N] the "row
///           space", every instruction is either full (dims == D) or per-row (R1*..*Rk elements: [R..] or
///           [R..,1]), or a small input broadcast into D along its minor dimension ([N]) or from a scalar. It holds
///           at least one reduce over the minor dimension only (D -> [R..]); per-row values return to full through
///           broadcasts along the leading dimensions; reshapes only between per-row shapes. Elementwise ops, convert
///           and scalar constants as in kLoop; no transpose/slice/concatenate/pad/reverse/iota. The root (one
///           output) is full or per-row. A kernel works row by row: for each row, full values are vectors of N
///           (a row fits in cache), per-row values scalars, computed in the fused computation's order.
///
/// How groups form (greedy, from the root of each computation up, as XLA's InstructionFusion):
///   1. output fusion first: a dot whose users are an elementwise chain on its dims takes the largest such
///      epilogue that has one output and which no other instruction reads in the middle (kOutput);
///   2. then, visiting instructions from last to first, an unfused loop op or single-operand reduce (or a kOutput
///      group) becomes a consumer and takes producers, latest first, while every user of the producer is already
///      in the group (no duplication, and no cycle through an outside instruction can form); a reduce producer
///      over the minor dimension joins a group whose values return along rows, making it kRow;
///   3. a kLoop group (or lone loop op) that reads, element for element (elementwise users of the same dims),
///      the root of another kLoop group whose root has users elsewhere takes that group in and writes its root
///      as another output (XLA's producer-consumer multi-output fusion), unless an outside path joins the two;
///   4. sibling kInput groups reducing operands of the same dims with the same dimensions, reading a common
///      operand, merge into one multi-output kInput group when neither reaches the other.
///
/// Limits, as XLA's: a producer with users outside the group is duplicated into it only when it is cheap
/// (broadcast, iota, reshape, convert, constants of at most 16 elements); expensive ops (transcendentals,
/// divide, power, ...) never go behind an expanding broadcast in a kLoop/kInput group (they would be recomputed
/// per output element); a group holds at most max_parameters operands and max_instructions instructions.
/// Stay alone: dot (except inside kOutput), convolution, sort, scatter, gather, custom-call, while,
/// conditional, call, dynamic slices, reduce-window, top-k, variadic reduces, rng and anything with a tuple
/// result. A group of one instruction is left unfused.
///
/// Deliberately does not: fuse inside fused computations or across computations, merge existing fusions
/// (running the pass twice changes nothing), recompute a producer whose users sit in different groups unless it
/// is cheap, or change layouts (layout assignment runs after it).
class Fusion : public HloPass {
 public:
  struct Options {
    int64_t max_parameters = 32;
    int64_t max_instructions = 256;
  };
  Fusion() = default;
  explicit Fusion(Options o) : options_(o) {}
  std::string_view name() const override { return "fusion"; }
  bool run(Module& m) override;

 private:
  Options options_;
};

/// Whether an opcode may sit in a kLoop fusion (see above; constants also need at most 16 elements).
bool is_loop_fusible(Opcode op);

}  // namespace jitx::hlo
