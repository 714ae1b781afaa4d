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

}  // namespace jitx::detail
