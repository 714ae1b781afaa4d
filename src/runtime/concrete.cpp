// Concrete arrays and their buffers: the checks a host read or an execution makes before it touches one.
#include "runtime/concrete.h"

#include "core/errors.h"
#include "core/jaxpr.h"
#include "core/literal.h"
#include "runtime/sharded.h"

namespace jitx::detail {

namespace {
const std::shared_ptr<runtime::Buffer>& live_buffer(const ConcreteArray& c, std::string_view op) {
  if (c.buffer->deleted)
    throw_error<RuntimeError>(op, "this Array's buffer was donated to a jitted call (donate_argnums) and is no "
                                  "longer valid; use the call's output instead");
  return c.buffer;
}
}  // namespace

Literal ConcreteArray::host_literal(std::string_view op) const { return live_buffer(*this, op)->literal(); }

const std::shared_ptr<runtime::Buffer>& concrete_buffer(const Array& a, std::string_view op) {
  if (!a.valid()) throw_error<TypeError>(op, "the Array is empty (default-constructed)");
  if (a.is_tracer()) {
    if (const Array* p = concrete_primal(a)) return concrete_buffer(*p, op);
    auto& t = static_cast<const Tracer&>(*a.impl());
    check_alive(t, op);  // a tracer stored outside its function, used after that trace ended
    throw_error<TracerError>(op,
                             "needs a concrete value, but got a tracer {} while tracing '{}'. The value is not known "
                             "until the compiled function runs: return it from the function instead, or use "
                             "lax::cond / lax::while_loop for data-dependent control flow",
                             t.aval.str(), t.trace->fn_name);
  }
  if (a.impl()->is_sharded()) return static_cast<ShardedArray*>(a.impl().get())->assembled(op);
  return live_buffer(static_cast<const ConcreteArray&>(*a.impl()), op);
}

Array make_concrete(std::shared_ptr<runtime::Buffer> buf, bool weak_type) {
  auto c = std::make_shared<ConcreteArray>();
  c->aval = ShapedArray{buf->dims, buf->dtype, weak_type};
  c->buffer = std::move(buf);
  return Array(c);
}

Array literal_array(const LiteralValue& v) {
  auto lit = Literal::make(v.aval.dtype, {});
  if (is_floating(v.aval.dtype))
    lit.set_f64(0, v.f);
  else if (v.aval.dtype == DType::uint64)
    lit.set_u64(0, v.u);
  else
    lit.set_i64(0, v.i);
  return make_concrete(runtime::Buffer::from_literal(lit, runtime::Client::get().default_device()), v.aval.weak_type);
}

}  // namespace jitx::detail
