// Concrete arrays: an Array that stands for a runtime buffer (its contents ready when the buffer's event is).
#pragma once
#include <memory>
#include <string_view>

#include "core/trace.h"
#include "runtime/runtime.h"

namespace jitx::detail {

/// A value on a device: a buffer (whose ready event says when its contents are computed).
struct ConcreteArray : ArrayImpl {
  std::shared_ptr<runtime::Buffer> buffer;
  Literal host_literal(std::string_view op) const override;
};

/// A concrete array's buffer (looking through JVP tracers to a concrete primal); throws TracerError for tracers.
const std::shared_ptr<runtime::Buffer>& concrete_buffer(const Array& a, std::string_view op);
Array make_concrete(std::shared_ptr<runtime::Buffer> buf, bool weak_type = false);
struct LiteralValue;
/// A jaxpr literal (a scalar atom) as a concrete 0-d array on the default device, with its weak type.
Array literal_array(const LiteralValue& v);

}  // namespace jitx::detail
