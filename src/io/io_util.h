// Shared pieces of the file formats: whole-file reads, atomic writes, an Array's bytes, and arrays from bytes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/errors.h"
#include "core/literal.h"
#include "jitx/array.h"
#include "jitx/io.h"

namespace jitx::io_detail {

/// IOError "[op] <path>: <message>".
template <class... Args>
[[noreturn]] void io_error(std::string_view op, const std::string& path, fmt::format_string<Args...> f,
                           Args&&... args) {
  throw IOError(detail::error_message(op, fmt::format("'{}': {}", path, fmt::format(f, std::forward<Args>(args)...))));
}

/// The whole file (IOError when it cannot be opened or read).
std::string read_file(std::string_view op, const std::string& path);
/// Writes a file atomically: `write(tmp_path)` fills a temporary file next to `path`, which is then renamed over
/// it; on any failure the temporary file is removed and `path` is untouched.
void write_atomic(std::string_view op, const std::string& path, const std::function<void(const std::string&)>& write);
/// Writes `bytes` to `path` (a plain write, no rename: write_atomic's callback uses it).
void write_bytes(std::string_view op, const std::string& path, std::string_view bytes);

/// The host values of a concrete array, C order (waits for the value; TypeError naming op for tracers).
detail::Literal host_values(const Array& a, std::string_view op);
/// A concrete Array holding a literal's values.
Array from_literal(const detail::Literal& lit);
/// Product of dims, or -1 when a dim is negative or the product overflows int64.
int64_t checked_count(const std::vector<int64_t>& dims);

}  // namespace jitx::io_detail
