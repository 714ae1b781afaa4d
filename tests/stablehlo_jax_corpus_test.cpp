// The JAX corpus (issue 18): every module tools/jax_export_corpus.py exported is imported, run on the current
// platform (JITX_PLATFORM) and compared with JAX's outputs; a report lists what does not import, run or match,
// grouped by reason. Hidden ([.]) unless run by tag with JITX_IMPORT_CORPUS=<dir> (tools/ci/jax_corpus.sh does).
//   JITX_IMPORT_CORPUS=/tmp/corpus ./build/tests/jitx_tests "[import_corpus]"
// Report: $JITX_IMPORT_CORPUS_REPORT (default <dir>/REPORT-<platform>.md). Bar: JITX_IMPORT_CORPUS_MIN (default
// 0.95) of the modules import, run and match.
// Tolerances (|got - want| <= atol + rtol |want|; NaN matches NaN): integers and bool exact; floats by the least
// precise float type the module computes in: f64 rtol 1e-9, atol 1e-12; f32 rtol 1e-4, atol 1e-5; f16 and bf16
// rtol 2e-2, atol 1e-2 (JAX computes transcendental functions with XLA's own approximations, and sums in another
// order).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "jitx/import.h"
#include "jitx/jitx.h"

using namespace jitx;

namespace {

// --- a minimal .npy (v1, v2, v3) reader: little-endian bool, ints, uints, f16, f32, f64, C order ---
struct Npy {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

Npy read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not .npy");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen = 0, off = 0;
  auto u8 = [&](size_t k) { return static_cast<size_t>(static_cast<unsigned char>(bytes.at(k))); };
  if (major == 1) {
    hlen = u8(8) | (u8(9) << 8);
    off = 10;
  } else {
    hlen = u8(8) | (u8(9) << 8) | (u8(10) << 16) | (u8(11) << 24);
    off = 12;
  }
  std::string h = bytes.substr(off, hlen);
  auto field = [&](const std::string& key) {
    auto p = h.find("'" + key + "'");
    if (p == std::string::npos) throw std::runtime_error(path + ": no " + key);
    return h.substr(h.find(':', p) + 1);
  };
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  if (field("fortran_order").find("True") < field("fortran_order").find(',')) throw std::runtime_error("fortran");
  std::string sh = field("shape");
  sh = sh.substr(sh.find('(') + 1, sh.find(')') - sh.find('(') - 1);
  Npy n;
  std::stringstream ss(sh);
  std::string tok;
  while (std::getline(ss, tok, ','))
    if (tok.find_first_of("0123456789") != std::string::npos) n.shape.push_back(std::stoll(tok));
  static const std::map<std::string, DType> kTypes = {
      {"|b1", DType::bool_},   {"|i1", DType::int8},     {"<i2", DType::int16},   {"<i4", DType::int32},
      {"<i8", DType::int64},   {"|u1", DType::uint8},    {"<u2", DType::uint16},  {"<u4", DType::uint32},
      {"<u8", DType::uint64},  {"<f2", DType::float16},  {"<f4", DType::float32}, {"<f8", DType::float64}};
  auto it = kTypes.find(descr);
  if (it == kTypes.end()) throw std::runtime_error(path + ": dtype " + descr + " is not read here");
  n.dtype = it->second;
  n.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(off + hlen), bytes.end());
  return n;
}

Array to_array(const Npy& n, DType want) {
  Array a = array_from_data(n.data.data(), n.dtype, n.shape, n.dtype);
  return n.dtype == want ? a : a.astype(want);  // bf16 inputs are stored as f32
}

struct Tol {
  double rtol, atol;
};
/// The bound of the least precise float type the module computes in (an f64 result of f32 work is as exact as
/// f32).
Tol tol_of(DType d, const std::string& text) {
  if (d == DType::float16 || d == DType::bfloat16 || text.find("f16") != std::string::npos) return {2e-2, 1e-2};
  if (d == DType::float32 || text.find("f32") != std::string::npos) return {1e-4, 1e-5};
  return {1e-9, 1e-12};
}

/// "" when got matches want, else what differs.
std::string compare(const Array& got, const Npy& want_npy, const std::string& text) {
  Array want = array_from_data(want_npy.data.data(), want_npy.dtype, want_npy.shape, want_npy.dtype);
  if (got.shape() != want.shape()) return "shape " + got.aval().str() + " vs JAX's " + want.aval().str();
  DType gd = got.dtype();
  bool bf16_stored = gd == DType::bfloat16 && want_npy.dtype == DType::float32;
  if (gd != want_npy.dtype && !bf16_stored)
    return fmt::format("dtype {} vs JAX's {}", dtype_name(gd), dtype_name(want_npy.dtype));
  if (is_floating(gd)) {
    auto g = got.to_vector<double>(), w = want.to_vector<double>();
    Tol t = tol_of(gd, text);
    for (size_t k = 0; k < g.size(); ++k) {
      if (std::isnan(g[k]) && std::isnan(w[k])) continue;
      if (g[k] == w[k]) continue;
      if (!(std::abs(g[k] - w[k]) <= t.atol + t.rtol * std::abs(w[k])))
        return fmt::format("element {}: {} vs JAX's {}", k, g[k], w[k]);
    }
    return "";
  }
  if (gd == DType::uint64) {
    auto g = got.to_vector<uint64_t>(), w = want.to_vector<uint64_t>();
    for (size_t k = 0; k < g.size(); ++k)
      if (g[k] != w[k]) return fmt::format("element {}: {} vs JAX's {}", k, g[k], w[k]);
    return "";
  }
  auto g = got.to_vector<int64_t>(), w = want.to_vector<int64_t>();
  for (size_t k = 0; k < g.size(); ++k)
    if (g[k] != w[k]) return fmt::format("element {}: {} vs JAX's {}", k, g[k], w[k]);
  return "";
}

/// The reason's group: the op an error names (`stablehlo.x` / `chlo.x`) or its first words.
std::string group_of(const std::string& stage, const std::string& msg) {
  for (const char* dialect : {"stablehlo.", "chlo."}) {
    auto p = msg.find(dialect);
    if (p != std::string::npos) {
      size_t e = p;
      while (e < msg.size() && (std::isalnum(static_cast<unsigned char>(msg[e])) || msg[e] == '_' || msg[e] == '.'))
        ++e;
      return stage + ": " + msg.substr(p, e - p);
    }
  }
  std::string m = msg;
  if (auto c = m.find("column "); c != std::string::npos && m.find(": ", c) != std::string::npos)
    m = m.substr(m.find(": ", c) + 2);  // drop "import_stablehlo: line 3, column 7: "
  return stage + ": " + m.substr(0, std::min<size_t>(m.size(), 60));
}

}  // namespace

TEST_CASE("import_stablehlo: the JAX corpus imports, runs and matches JAX", "[.][import_corpus]") {
  const char* dir_env = std::getenv("JITX_IMPORT_CORPUS");
  if (!dir_env) {
    WARN("JITX_IMPORT_CORPUS is not set: run tools/ci/jax_corpus.sh (it exports the corpus with JAX first)");
    return;
  }
  std::string dir = dir_env;
  std::ifstream manifest(dir + "/MANIFEST");
  REQUIRE(manifest.good());
  std::string platform = default_platform();
  std::map<std::string, std::vector<std::string>> failures;  // group -> "name: detail"
  int total = 0, passed = 0;
  std::string line;
  while (std::getline(manifest, line)) {
    std::istringstream ls(line);
    std::string name;
    int nin = 0, nout = 0;
    if (!(ls >> name >> nin >> nout)) continue;
    std::string data = name, prefix;  // the .npy files' prefix (a generic-form module reads its pretty twin's)
    if (ls >> prefix) data = prefix;
    if (const char* only = std::getenv("JITX_IMPORT_CORPUS_FILTER"); only && name.find(only) == std::string::npos)
      continue;
    ++total;
    std::string stage = "import";
    try {
      std::ifstream tf(dir + "/" + name + ".mlir");
      std::string text((std::istreambuf_iterator<char>(tf)), std::istreambuf_iterator<char>());
      auto m = import_stablehlo(text);
      stage = "inputs";
      std::vector<Array> args;
      for (int k = 0; k < nin; ++k)
        args.push_back(to_array(read_npy(fmt::format("{}/{}.in{}.npy", dir, data, k)), m.in_avals().at(k).dtype));
      stage = "compile";
      auto c = m.compile();
      stage = "run";
      auto outs = c(args);
      stage = "match";
      if (static_cast<int>(outs.size()) != nout) throw std::runtime_error(fmt::format("{} outputs, JAX has {}",
                                                                                      outs.size(), nout));
      std::string diff;
      for (int k = 0; k < nout && diff.empty(); ++k) {
        diff = compare(outs[k], read_npy(fmt::format("{}/{}.out{}.npy", dir, data, k)), text);
        if (!diff.empty()) diff = fmt::format("output {}: {}", k, diff);
      }
      if (!diff.empty()) throw std::runtime_error(diff);
      ++passed;
    } catch (const std::exception& e) {
      std::string msg = e.what();
      std::string first = msg.substr(0, msg.find('\n'));
      failures[group_of(stage, first)].push_back(name + ": " + first);
    }
  }
  double rate = total ? double(passed) / total : 0.0;
  std::string report = fmt::format("# jitx import_stablehlo: JAX corpus on {}\n\n{} of {} modules import, run and "
                                   "match JAX ({:.1f}%).\n\n## Not passing, by reason\n",
                                   platform, passed, total, 100.0 * rate);
  for (auto& [group, names] : failures) {
    report += fmt::format("\n### {} ({})\n", group, names.size());
    for (auto& n : names) report += "- " + n.substr(0, 300) + "\n";
  }
  const char* rp = std::getenv("JITX_IMPORT_CORPUS_REPORT");
  std::string report_path = rp ? rp : dir + "/REPORT-" + platform + ".md";
  std::ofstream(report_path) << report;
  std::printf("%s\n(report written to %s)\n", report.c_str(), report_path.c_str());
  const char* min_env = std::getenv("JITX_IMPORT_CORPUS_MIN");
  double min_rate = min_env ? std::atof(min_env) : 0.95;
  CHECK(total > 0);
  CHECK(rate >= min_rate);
}
