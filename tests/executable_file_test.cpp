// Serialised executables that are well-formed files (their size and checksum right) but whose contents are not
// what jitx wrote: counts that would allocate without bound, a signature that is not the module's, a donated
// argument out of range, a payload size the compressed bytes cannot hold. Each must be a jitx RuntimeError, not
// std::bad_alloc / std::length_error or a call that reads past its arguments (the fuzz/executable_file_fuzz.cpp
// target's class of input; the checksum only guards against accidents).
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cache/compilation_cache.h"
#include "cache/executable_file.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {
bool cpu() { return default_platform() == "cpu"; }

std::string serialized(std::vector<int> donate = {}) {
  Array x = ones({4, 8}), w = ones({8, 3});
  auto f = jit([](Array a, Array b) { return std::make_tuple(jnp::tanh(jnp::matmul(a, b)), a * 2.0f); },
               {.donate_argnums = std::move(donate), .name = "entry"});
  return f.lower(x, w).compile().serialize();
}

void put_u64(std::string& s, size_t at, uint64_t v) {
  REQUIRE(at + sizeof v <= s.size());
  std::memcpy(s.data() + at, &v, sizeof v);
}

uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v;
  REQUIRE(at + sizeof v <= s.size());
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

/// The file with one section's bytes edited, re-encoded (so size and checksum are right).
std::string with_section(const std::string& bytes, const std::string& name,
                         const std::function<void(std::string&)>& edit) {
  cache::Decoded d = cache::decode(bytes);
  REQUIRE(d.sections.count(name));
  edit(d.sections[name]);
  return cache::encode(d.header, d.sections);
}

void check_refused(const std::string& bytes, const std::string& part) {
  try {
    deserialize_executable(bytes);
    FAIL("deserialize_executable accepted it");
  } catch (const RuntimeError& e) {
    CHECK_THAT(e.what(), Catch::Contains(part));
  }
}
}  // namespace

TEST_CASE("serialised executables: corrupted counts in a well-formed file are RuntimeErrors",
          "[disk_cache][executable_file]") {
  if (!cpu()) return;  // the interpreter does not serialise
  std::string bytes = serialized();
  REQUIRE_NOTHROW(deserialize_executable(bytes));
  // The signature: the name (u64 length + bytes), then the argument count.
  size_t args_at = 8 + std::string("entry").size();
  for (uint64_t n : {uint64_t{1} << 60, uint64_t{1} << 40, uint64_t{100000}}) {
    INFO("argument count " << n);
    check_refused(with_section(bytes, "signature", [&](std::string& s) { put_u64(s, args_at, n); }), "corrupted");
  }
  // The first argument's rank: after its dtype and weak-type words.
  check_refused(with_section(bytes, "signature", [&](std::string& s) { put_u64(s, args_at + 16, ~uint64_t{0}); }),
                "corrupted");
  // The cpu backend's object count: after its payload version and fallback words.
  check_refused(with_section(bytes, cache::kBackendSection, [](std::string& s) { put_u64(s, 8, uint64_t{1} << 59); }),
                "corrupted");
}

TEST_CASE("serialised executables: a signature that is not the module's is refused", "[disk_cache][executable_file]") {
  if (!cpu()) return;
  std::string bytes = serialized({0});
  size_t args_at = 8 + std::string("entry").size();
  // The first argument's dtype code: out of range, then another valid dtype (f64 for f32).
  check_refused(with_section(bytes, "signature", [&](std::string& s) { s[args_at + 8] = char(200); }), "dtype code");
  check_refused(with_section(bytes, "signature",
                             [&](std::string& s) { s[args_at + 8] = char(static_cast<int>(DType::float64)); }),
                "not its module's");
  // The first argument's first dimension 4 -> 5: a call with a (5, 8) array would read past the code's buffers.
  check_refused(with_section(bytes, "signature", [&](std::string& s) {
                  REQUIRE(get_u64(s, args_at + 24) == 4);
                  put_u64(s, args_at + 24, 5);
                }),
                "not its module's");
  // The donated argument (the signature's last u64) out of range: a call would write past its flags.
  for (uint64_t p : {uint64_t{2}, uint64_t{1} << 40, ~uint64_t{0}}) {
    INFO("donated " << p);
    check_refused(with_section(bytes, "signature", [&](std::string& s) {
                    REQUIRE(get_u64(s, s.size() - 8) == 0);
                    put_u64(s, s.size() - 8, p);
                  }),
                  "donated argument");
  }
}

TEST_CASE("serialised executables: a payload size its compressed bytes cannot hold is refused",
          "[disk_cache][executable_file]") {
  if (!cpu()) return;
  std::string bytes = serialized();
  // The payload size is the u64 after the header's ten strings and the flags word.
  size_t at = 8 + 4 + 8;
  for (int k = 0; k < 10; ++k) at += 8 + get_u64(bytes, at);
  at += 4;
  for (uint64_t n : {uint64_t{1} << 62, uint64_t{1} << 35, get_u64(bytes, at) + 1}) {
    INFO("payload size " << n);
    std::string bad = bytes;
    put_u64(bad, at, n);
    uint64_t sum = XXH3_64bits(bad.data(), bad.size() - 8);
    put_u64(bad, bad.size() - 8, sum);
    check_refused(bad, "corrupted");
  }
}
