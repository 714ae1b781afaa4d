// The process-wide table of host callbacks, and the call that checks a pure callback's results.
#include "core/host_callback.h"

#include <deque>
#include <mutex>

#include "core/errors.h"

namespace jitx::detail {
namespace {
struct Table {
  std::mutex mu;
  std::deque<HostCallback> entries;  // a deque: references stay valid while others are added
};
Table& table() {
  static auto* t = new Table();  // never destroyed: programs may still run while the process exits
  return *t;
}
}  // namespace

int64_t register_host_callback(HostCallback cb) {
  Table& t = table();
  std::lock_guard<std::mutex> l(t.mu);
  t.entries.push_back(std::move(cb));
  return static_cast<int64_t>(t.entries.size()) - 1;
}

const HostCallback& host_callback(int64_t id) {
  Table& t = table();
  std::lock_guard<std::mutex> l(t.mu);
  JITX_ASSERT(id >= 0 && id < static_cast<int64_t>(t.entries.size()), "unknown host callback id {}", id);
  return t.entries[static_cast<size_t>(id)];
}

namespace {
thread_local int callback_depth = 0;
struct InCallback {
  InCallback() { ++callback_depth; }
  ~InCallback() { --callback_depth; }
};
}  // namespace

bool in_host_callback() { return callback_depth > 0; }

std::vector<Literal> call_host_callback(int64_t id, std::vector<Literal> args) {
  const HostCallback& cb = host_callback(id);
  std::vector<Literal> out;
  {
    InCallback scope;
    out = cb.fn(std::move(args));
  }
  if (cb.has_side_effect) return {};
  if (out.size() != cb.result_avals.size())
    throw_error<TypeError>(cb.name, "the callback returned {} values, but result_shape_dtypes declares {}", out.size(),
                           cb.result_avals.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const ShapedArray& want = cb.result_avals[k];
    if (out[k].dtype != want.dtype)
      throw_error<TypeError>(cb.name, "result {} of the callback has dtype {}, but result_shape_dtypes declares {}", k,
                             dtype_name(out[k].dtype), want.str());
    if (out[k].dims != want.shape)
      throw_error<ShapeError>(cb.name, "result {} of the callback has shape {}, but result_shape_dtypes declares {}", k,
                              shape_str(out[k].dims), want.str());
  }
  return out;
}

}  // namespace jitx::detail
