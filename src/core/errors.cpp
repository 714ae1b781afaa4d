// Call-site tracking and error formatting.
#include "core/errors.h"

#include <filesystem>

namespace jitx {
std::string format_location(const std::source_location& loc) {
  return fmt::format("{}:{}", std::filesystem::path(loc.file_name()).filename().string(), loc.line());
}
}  // namespace jitx

namespace jitx::detail {
namespace {
thread_local const std::source_location* t_call_site = nullptr;
thread_local std::source_location t_call_site_storage;
thread_local std::source_location t_last_site_storage;
thread_local bool t_has_last_site = false;
thread_local const char* t_api_fn = nullptr;  // function_name() of the outermost API call
}  // namespace

const std::source_location* current_call_site() { return t_call_site; }
const std::source_location* last_call_site() { return t_has_last_site ? &t_last_site_storage : nullptr; }

ApiScope::ApiScope(const std::source_location& loc, const std::source_location& here)
    : owner_(t_call_site == nullptr) {
  if (owner_) {
    t_api_fn = here.function_name();
    t_call_site_storage = loc;
    t_call_site = &t_call_site_storage;
    t_last_site_storage = loc;
    t_has_last_site = true;
  }
}

ApiScope::ApiScope(const std::source_location& loc, std::nullptr_t) : ApiScope(loc) {
  if (owner_) t_api_fn = nullptr;
}

CallSiteReset::CallSiteReset() : saved_(t_call_site), saved_fn_(t_api_fn) {
  if (saved_) saved_storage_ = *saved_;
  t_call_site = nullptr;
  t_api_fn = nullptr;
}
CallSiteReset::~CallSiteReset() {
  if (saved_) {
    t_call_site_storage = saved_storage_;
    t_call_site = &t_call_site_storage;
  } else {
    t_call_site = nullptr;
  }
  t_api_fn = saved_fn_;
}
ApiScope::~ApiScope() {
  if (owner_) t_call_site = nullptr, t_api_fn = nullptr;
}

std::string function_short_name(std::string_view f) {
  f = f.substr(0, f.find('('));
  if (auto sp = f.find_last_of(" :"); sp != std::string_view::npos) f = f.substr(sp + 1);
  if (f.rfind("operator", 0) == 0 || f.empty()) return "";
  return std::string(f);
}

std::string error_message(std::string_view op, std::string_view msg) {
  std::string s = fmt::format("[{}] {}", op, msg);
  if (const auto* loc = current_call_site()) {
    std::string fn = t_api_fn ? function_short_name(t_api_fn) : "";
    if (!fn.empty() && fn != op && op.find(fn) == std::string_view::npos)
      s += fmt::format(" (at {}, in {})", format_location(*loc), fn);
    else
      s += fmt::format(" (at {})", format_location(*loc));
  }
  return s;
}

void assert_fail(const char* cond, const char* file, int line, const std::string& msg) {
  throw Error(fmt::format("jitx internal error: {} failed at {}:{}: {}", cond,
                          std::filesystem::path(file).filename().string(), line, msg));
}

std::string shape_str(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

}  // namespace jitx::detail
