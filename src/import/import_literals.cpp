// The StableHLO importer's constants: dense<...> in every form MLIR prints (splats, nested lists, hex floats,
// hex blobs, dense_resource blobs of the module's {-# dialect_resources #-} section); complex values get a clear
// error.
#include <fmt/format.h>

#include <map>

#include <cctype>
#include <cstring>

#include "core/errors.h"
#include "import/stablehlo_import.h"
#include "jitx/parse_error.h"

namespace jitx::import {

namespace {

void elements(Cursor& c, std::vector<std::string>& out, int depth) {
  if (depth > 64) c.fail("a dense literal nested at most 64 deep");
  if (c.accept("[")) {
    if (c.accept("]")) return;
    do elements(c, out, depth + 1);
    while (c.accept(","));
    c.expect("]");
    return;
  }
  if (c.peek() == '(') c.fail("a real value (complex constants are not supported: jitx has no complex dtypes)");
  c.skip_ws();
  std::string_view r = c.rest();
  size_t k = 0;
  while (k < r.size() && (std::isalnum(static_cast<unsigned char>(r[k])) || r[k] == '.' || r[k] == '-' ||
                          r[k] == '+'))
    ++k;
  if (k == 0) c.fail("a dense element (a number, true, false or 0x...)");
  out.emplace_back(r.substr(0, k));
  c.set_pos(c.pos() + k);
}

uint64_t hex_value(Cursor& c, std::string_view h) {
  uint64_t v = 0;
  if (h.size() > 18) c.fail("a hex value of at most 64 bits");
  for (size_t k = 2; k < h.size(); ++k) {
    char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(h[k])));
    int d = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10 : -1;
    if (d < 0) c.fail(fmt::format("hex digits in '{}'", h));
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

void set_element(Cursor& c, detail::Literal& lit, int64_t i, const std::string& e) {
  DType d = lit.dtype;
  size_t w = dtype_size(d);
  char* dst = static_cast<char*>(lit.data()) + static_cast<size_t>(i) * w;
  if (e == "true" || e == "false") {
    if (d != DType::bool_) c.fail(fmt::format("a number for a {} constant, not {}", dtype_name(d), e));
    lit.set_i64(i, e == "true");
    return;
  }
  if (e.size() > 2 && e[0] == '0' && (e[1] == 'x' || e[1] == 'X')) {
    uint64_t bits = hex_value(c, e);
    if (is_floating(d)) {
      std::memcpy(dst, &bits, w);  // little-endian host: the low w bytes are the element's bits
    } else {
      lit.set_u64(i, bits);
    }
    return;
  }
  try {
    size_t used = 0;
    if (is_floating(d)) {
      double v = std::stod(e, &used);
      if (used != e.size()) throw std::invalid_argument(e);
      lit.set_f64(i, v);
    } else if (is_unsigned_integer(d)) {
      uint64_t v = std::stoull(e, &used);
      if (used != e.size() || e[0] == '-') throw std::invalid_argument(e);
      lit.set_u64(i, v);
    } else {
      int64_t v = std::stoll(e, &used);
      if (used != e.size()) throw std::invalid_argument(e);
      if (d == DType::bool_ && v != 0 && v != 1) throw std::invalid_argument(e);
      lit.set_i64(i, v);
    }
  } catch (const std::logic_error&) {
    c.fail(fmt::format("a {} value, not '{}'", dtype_name(d), e));
  }
}

}  // namespace

namespace {
thread_local const std::map<std::string, std::string>* t_blobs = nullptr;
}  // namespace

ResourceScope::ResourceScope(const std::map<std::string, std::string>* blobs) : prev_(t_blobs) { t_blobs = blobs; }
ResourceScope::~ResourceScope() { t_blobs = prev_; }

std::map<std::string, std::string> read_resources(std::string_view text) {
  std::map<std::string, std::string> out;
  size_t b = text.rfind("{-#");
  if (b == std::string_view::npos) return out;
  size_t e = text.find("#-}", b);
  if (e == std::string_view::npos) throw ParseError("import_stablehlo: an unclosed {-# ... #-} section", 0, 0);
  Cursor c(text.substr(b + 3, e - b - 3));
  // dialect_resources: { builtin: { name: "0x<4-byte alignment><data>", ... } }
  while (!c.eof()) {
    std::string section = c.ident();
    c.expect(":");
    if (section != "dialect_resources") {
      c.balanced();
    } else {
      c.expect("{");
      while (!c.accept("}")) {
        std::string dialect = c.ident();
        c.expect(":");
        c.expect("{");
        while (!c.accept("}")) {
          std::string name = c.peek() == '"' ? c.string_lit() : c.ident();
          c.expect(":");
          std::string blob = c.string_lit();
          if (dialect == "builtin") out[name] = blob;
          c.accept(",");
        }
        c.accept(",");
      }
    }
    c.accept(",");
  }
  return out;
}

detail::Literal dense_literal_of(Cursor& c, std::string_view raw, const TensorType& t) {
  (void)raw;
  auto lit = detail::Literal::make(t.dtype, t.dims);
  int64_t n = lit.size();
  size_t w = dtype_size(t.dtype);
  bool resource = c.accept("dense_resource");
  if (!resource) c.expect("dense");
  c.expect("<");
  if (resource || c.peek() == '"') {
    std::string blob;
    if (resource) {
      std::string name = c.peek() == '"' ? c.string_lit() : c.ident();
      if (name == "__elided__")
        detail::throw_error<CompileError>("import_stablehlo", "a dense_resource constant was elided when the module "
                                          "was printed (print it without large-element elision)");
      auto it = t_blobs ? t_blobs->find(name) : decltype(t_blobs->end()){};
      if (!t_blobs || it == t_blobs->end())
        c.fail(fmt::format("dense_resource<{}> defined in the module's {{-# dialect_resources #-}} section", name));
      // The blob is "0x" + its alignment (4 bytes, little endian) + the data.
      if (it->second.size() < 10) c.fail(fmt::format("a dense_resource blob with its 4-byte alignment prefix"));
      blob = "0x" + it->second.substr(10);
      if (blob.size() - 2 != 2 * w * static_cast<size_t>(n))
        c.fail(fmt::format("a dense_resource blob of {} bytes, got {}", w * n, (blob.size() - 2) / 2));
    } else {
      blob = c.string_lit();
    }
    if (blob.size() < 2 || blob[0] != '0' || (blob[1] != 'x' && blob[1] != 'X')) c.fail("a hex blob \"0x...\"");
    size_t bytes = (blob.size() - 2) / 2;
    if ((blob.size() - 2) % 2 || (bytes != w * static_cast<size_t>(n) && bytes != w))
      c.fail(fmt::format("a hex blob of {} bytes ({} elements of {} bytes) or one element", w * n, n, w));
    std::vector<uint8_t> data(bytes);
    for (size_t k = 0; k < bytes; ++k)
      data[k] = static_cast<uint8_t>(hex_value(c, "0x" + blob.substr(2 + 2 * k, 2)));
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(static_cast<char*>(lit.data()) + i * w, data.data() + (bytes == w ? 0 : i * w), w);
    if (t.dtype == DType::bool_)
      for (int64_t i = 0; i < n; ++i) lit.set_i64(i, static_cast<uint8_t*>(lit.data())[i] != 0);
    c.expect(">");
    return lit;
  }
  std::vector<std::string> els;
  elements(c, els, 0);
  c.expect(">");
  if (els.size() != 1 && static_cast<int64_t>(els.size()) != n)
    c.fail(fmt::format("{} elements (or one, a splat) for tensor of {} elements, got {}", n, n, els.size()));
  if (els.size() == 1 && n > 0) {  // a splat: one value read, then copied (2^28 reads took tens of seconds)
    set_element(c, lit, 0, els[0]);
    for (int64_t i = 1; i < n; ++i)
      std::memcpy(static_cast<char*>(lit.data()) + i * w, lit.data(), w);
    return lit;
  }
  for (int64_t i = 0; i < n; ++i) set_element(c, lit, i, els[static_cast<size_t>(i)]);
  return lit;
}

}  // namespace jitx::import
