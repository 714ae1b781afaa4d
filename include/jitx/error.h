// jitx exceptions: every user-facing failure is a jitx::Error subclass.
#pragma once
#include <source_location>
#include <stdexcept>
#include <string>

namespace jitx {

/// Base of every exception jitx throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// Wrong dtype, or an argument of the wrong kind.
class TypeError : public Error {
 public:
  using Error::Error;
};
/// Shapes, ranks or axes that do not fit the op.
class ShapeError : public Error {
 public:
  using Error::Error;
};
/// A traced value used where a concrete one is needed, or an escaped tracer.
class TracerError : public Error {
 public:
  using Error::Error;
};
/// The compiler could not build an executable (includes "not implemented yet").
class CompileError : public Error {
 public:
  using Error::Error;
};
/// A failure while running: allocation, device, stream, cache files.
class RuntimeError : public Error {
 public:
  using Error::Error;
};

/// "file.cpp:12" for a user call site.
std::string format_location(const std::source_location& loc);

}  // namespace jitx
