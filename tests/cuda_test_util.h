// Test helpers shared by the CUDA tests: ptxas on a kernel's PTX.
#pragma once
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/cuda/cuda_codegen.h"

namespace jitx::testing {

/// Runs ptxas on the PTX for arch; returns "" when it assembles, else ptxas's output.
inline std::string ptxas_error(const std::string& ptx, const std::string& arch) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "jitx_ptx_XXXXXX").string();
  std::vector<char> path(tmpl.begin(), tmpl.end());
  path.push_back('\0');
  int fd = mkstemp(path.data());
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, ptx.data(), ptx.size()) == static_cast<ssize_t>(ptx.size()));
  close(fd);
  std::string cmd = fmt::format("'{}' -arch={} '{}' -o /dev/null 2>&1", cuda::ptxas_path(), arch, path.data());
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  int rc = pclose(p);
  std::remove(path.data());
  return rc == 0 ? "" : (out.empty() ? "ptxas failed" : out);
}

inline bool have_ptxas() {
  if (!cuda::ptxas_path().empty()) return true;
  WARN("skipped the ptxas checks: the CUDA toolkit's ptxas was not found at configure time");
  return false;
}

}  // namespace jitx::testing
