// The README's error catalogue ("## Errors") against real messages: every jitx::Error kind the public headers
// declare has a row, and every example message of a row is produced by one of that kind's triggers below (the
// example's "..." parts and its "(at file:line)" are left out of the comparison).
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "hlo/ir/hlo.h"
#include "hlo/ir/hlo_parser.h"
#include "test_util.h"

using namespace jitx;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
std::filesystem::path root() { return std::filesystem::path(JITX_TEST_DATA_DIR) / ".." / ".."; }

template <class E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("a different exception: ") + e.what();
  }
  return "no exception";
}

/// Real messages per kind, from inputs like the README's examples.
std::map<std::string, std::vector<std::string>> triggers() {
  std::map<std::string, std::vector<std::string>> m;
  m["TypeError"].push_back(message_of<TypeError>([] { lax::add(ones({2}), ones({2}, DType::int32)); }));
  m["ShapeError"].push_back(message_of<ShapeError>([] { jnp::add(ones({2, 3}), ones({3, 2})); }));
  m["ShapeError"].push_back(message_of<ShapeError>([] { zeros({int64_t{1} << 62, 4}); }));
  m["TracerError"].push_back(
      message_of<TracerError>([] { jit([](Array x) { return Array(x.item<float>()); })(Array(1.0f)); }));
  m["RuntimeError"].push_back(message_of<RuntimeError>([] {
    Array w = ones({4});
    auto f = jit([](Array x) { return x * 2.0f; }, JitOptions{{}, {0}, "fn"});
    f(w).block_until_ready();
    w.to_vector<float>();
  }));
  m["CompileError"].push_back(message_of<CompileError>([] {
    auto mod = hlo::parse_hlo(R"(HloModule m

ENTRY %main (a: f32[2,3,4], b: f32[4,5]) -> f32[2,3,5] {
  %a = f32[2,3,4] parameter(0)
  %b = f32[4,5] parameter(1)
  ROOT %dot.3 = f32[2,3,5] dot(%a, %b), lhs_contracting_dimensions={3}, rhs_contracting_dimensions={0}
}
)");
    hlo::verify(*mod);
  }));
  m["CompileError"].push_back(message_of<CompileError>(
      [] { grad([](const Array& a) { return jnp::sum(jnp::linalg::svd(a, true).U); })(ones({2, 3})); }));
  m["ParseError"].push_back(message_of<ParseError>([] { import_stablehlo("garbage"); }));
  m["FloatingPointError"].push_back(message_of<FloatingPointError>([] {
    config().debug_nans = true;
    struct Off {
      ~Off() { config().debug_nans = false; }
    } off;
    jit([](const Array& x) { return jnp::log(x) * 2.0; })(Array::scalar(-1.0, DType::float64));
  }));
  return m;
}

}  // namespace

TEST_CASE("error catalogue: every kind has a row and every example is a real message", "[errors][catalogue]") {
  std::string readme = read(root() / "README.md");
  size_t b = readme.find("## Errors\n"), e = readme.find("\n## ", b + 1);
  REQUIRE(b != std::string::npos);
  std::string section = readme.substr(b, e - b);
  // The kinds: every class deriving from Error in the public headers, and Error itself.
  std::set<std::string> kinds{"Error"};
  const std::regex cls(R"(class (\w+) : public Error\b)");
  for (const char* h : {"error.h", "parse_error.h", "floating_point_error.h"}) {
    std::string t = read(root() / "include" / "jitx" / h);
    for (std::sregex_iterator m(t.begin(), t.end(), cls), end; m != end; ++m) kinds.insert((*m)[1].str());
  }
  auto real = triggers();
  std::set<std::string> rows;
  std::istringstream lines(section);
  const std::regex code("`([^`]*)`");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cols;
    for (size_t p = 1, q; (q = line.find(" |", p)) != std::string::npos; p = q + 2)
      cols.push_back(line.substr(p, q - p));
    REQUIRE(cols.size() >= 4);
    std::smatch km;
    REQUIRE(std::regex_search(cols[0], km, code));
    std::string kind = km[1];
    rows.insert(kind);
    if (kind == "Error") continue;  // only internal invariants throw the base class itself
    for (std::sregex_iterator m(cols[2].begin(), cols[2].end(), code), end; m != end; ++m) {
      if ((*m)[1].str().find('<') != std::string::npos) continue;  // a template (<n>), not a real message
      std::string ex = std::regex_replace((*m)[1].str(), std::regex(R"(\s*\(at [^)]*\)$)"), "");
      std::vector<std::string> parts;
      for (size_t p = 0;;) {
        size_t q = ex.find("...", p);
        std::string part = ex.substr(p, q == std::string::npos ? q : q - p);
        part.erase(0, part.find_first_not_of(" ("));
        while (!part.empty() && (part.back() == ' ' || part.back() == '(')) part.pop_back();
        if (!part.empty()) parts.push_back(part);
        if (q == std::string::npos) break;
        p = q + 3;
      }
      bool found = false;
      for (const std::string& msg : real[kind]) {
        size_t at = 0;
        bool all = true;
        for (auto& part : parts) {
          size_t f = msg.find(part, at);
          if (f == std::string::npos) {
            all = false;
            break;
          }
          at = f + part.size();
        }
        found = found || all;
      }
      INFO("README example of " << kind << ": " << ex << "\nreal messages:\n"
                                << fmt::format("{}", fmt::join(real[kind], "\n")));
      CHECK(found);
    }
  }
  for (auto& k : kinds) {
    INFO("jitx::" << k << " has no row in the README's error catalogue");
    CHECK(rows.count(k));
  }
}
