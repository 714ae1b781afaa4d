// vmap internals: the batch trace, batching of closed jaxprs (for higher-order primitives), and the small
// helpers the per-primitive batching rules are written with.
//
// A batched value is (val, bdim): val holds every example, stacked along its axis bdim; the tracer's aval is
// val's without that axis (what the user's function sees). Unbatched values are never wrapped: a rule sees
// bdim == not_mapped (-1) for them, and only runs when at least one input is batched.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/trace.h"
#include "jitx/autodiff.h"
#include "jitx/lax.h"
#include "jitx/vmap.h"
#include "core/primitive.h"

namespace jitx::detail {

inline constexpr int64_t not_mapped = -1;

/// A tracer of a batch trace: the stacked value and where its batch axis is.
struct BatchTracer : Tracer {
  Array val;
  int64_t bdim = 0;
};

/// Applies each primitive's batching rule to (value, batch axis) pairs (JAX's BatchTrace).
class BatchTrace : public Trace {
 public:
  int64_t axis_size = 0;
  std::vector<Array> process_primitive(const Primitive& p, std::span<const Array> inputs,
                                       const Params& params) override;
  /// val itself when bdim is not_mapped, else a tracer of this trace.
  Array make_tracer(Array val, int64_t bdim);
  /// (val, bdim) of a value as this trace sees it (values of other traces are unbatched).
  std::pair<Array, int64_t> unpack(const Array& a) const;
};

/// What a batching rule returns: outputs and their batch axes (not_mapped for unbatched ones).
using BatchResult = std::pair<std::vector<Array>, std::vector<int64_t>>;

/// Makes the batch trace of a batch_call of size n (null: an ordinary BatchTrace). A shard_map running over its
/// mesh's devices sets one while a primitive's batching rule runs, so a loop body batched over the mesh axis keeps
/// its collectives' meaning.
using BatchTraceFactory = std::function<std::shared_ptr<BatchTrace>(int64_t n)>;
class BatchTraceFactoryScope {
 public:
  explicit BatchTraceFactoryScope(const BatchTraceFactory* f);
  ~BatchTraceFactoryScope();
  BatchTraceFactoryScope(const BatchTraceFactoryScope&) = delete;
  BatchTraceFactoryScope& operator=(const BatchTraceFactoryScope&) = delete;

 private:
  const BatchTraceFactory* prev_;
};

/// Runs fn on args (with batch axes dims) under a fresh batch trace of size n; returns the outputs as
/// (stacked value, batch axis) pairs. The building block of vmap and of rules that re-run a function.
BatchResult batch_call(int64_t n, const LeafFn& fn, std::span<const Array> args, std::span<const int64_t> dims);

/// The batched version of a closed jaxpr: inputs with in_batched[i] get a leading batch axis of size n; outputs
/// are batched (at axis 0) where they depend on a batched input or instantiate[i] is set (then broadcast).
/// Returns the jaxpr and which outputs are batched.
std::pair<ClosedJaxpr, std::vector<bool>> batch_jaxpr(const ClosedJaxpr& cj, int64_t n,
                                                      const std::vector<bool>& in_batched,
                                                      const std::vector<bool>& instantiate);

// --- helpers for rules ---------------------------------------------------------------------------------
/// x with its axis `from` moved to position `to` (a transpose; x itself when from == to).
Array move_axis(const Array& x, int64_t from, int64_t to);
/// x with its batch axis at position `to`: moved there when bdim is an axis, broadcast to size n when not_mapped.
Array batch_at(const Array& x, int64_t bdim, int64_t n, int64_t to = 0);
/// The batch size of a rule's inputs (the size of any batched input's batch axis).
int64_t batch_size(std::span<const Array> args, std::span<const int64_t> dims);
/// v with `by` added to every entry (axis numbers after a new leading axis).
std::vector<int64_t> shifted(const std::vector<int64_t>& v, int64_t by = 1);
/// first, then v.
std::vector<int64_t> prepended(int64_t first, const std::vector<int64_t>& v);
/// Binds the named primitive.
std::vector<Array> bind_named(std::string_view prim, std::vector<Array> inputs, const Params& params);
/// The rule of elementwise primitives (any arity): operands whose per-example shapes differ (a scalar next to an
/// array) are broadcast, unbatched ones only when they are not scalars; the batch axis stays where it is when
/// every batched operand has it at the same place and the others are scalars.
BatchFn elementwise_batch(std::string prim);
/// The rule of primitives with one operand that only need its batch axis in front and `adjust` applied to
/// their params (which get the batch size); outputs are batched at axis 0.
BatchFn leading_batch(std::string prim, std::function<void(Params&, int64_t n)> adjust);
/// Throws the clear error of a primitive, or a case of one, that vmap cannot batch (yet).
[[noreturn]] void not_batchable(std::string_view prim, std::string_view why);

}  // namespace jitx::detail
