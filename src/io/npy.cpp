// The .npy format (NumPy's NEP 1): magic, version, a Python-literal header dict, then the raw values.
#include <algorithm>
#include <bit>
#include <cstring>

#include "io/io_util.h"

namespace jitx {
namespace {
using io_detail::io_error;
static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

/// The descr numpy writes for each dtype; bfloat16 as ml_dtypes' (NumPy has no bfloat16: '<V2').
std::string_view npy_descr(DType d) {
  switch (d) {
    case DType::bool_: return "|b1";
    case DType::int8: return "|i1";
    case DType::int16: return "<i2";
    case DType::int32: return "<i4";
    case DType::int64: return "<i8";
    case DType::uint8: return "|u1";
    case DType::uint16: return "<u2";
    case DType::uint32: return "<u4";
    case DType::uint64: return "<u8";
    case DType::float16: return "<f2";
    case DType::bfloat16: return "<V2";
    case DType::float32: return "<f4";
    case DType::float64: return "<f8";
  }
  return "?";
}

/// A descr string -> dtype and whether its bytes are big-endian; false when jitx has no such dtype.
bool parse_descr(const std::string& s, DType* d, bool* big) {
  if (s == "bfloat16") {
    *d = DType::bfloat16, *big = false;
    return true;
  }
  if (s.empty()) return false;
  // The byte order may be left out ('f4', as NumPy reads it: native, little-endian here), and NumPy's one-character
  // type codes name the same dtypes ('?', 'b', 'B', 'h', 'H', 'i', 'I', 'q', 'Q', 'e', 'f', 'd').
  char order = s[0];
  bool has_order = order == '<' || order == '>' || order == '|' || order == '=';
  *big = order == '>';
  std::string k = has_order ? s.substr(1) : s;
  static const std::pair<const char*, DType> codes[] = {
      {"?", DType::bool_},   {"b", DType::int8},     {"B", DType::uint8},   {"h", DType::int16},
      {"H", DType::uint16},  {"i", DType::int32},    {"I", DType::uint32},  {"q", DType::int64},
      {"Q", DType::uint64},  {"l", DType::int64},    {"L", DType::uint64},  {"e", DType::float16},
      {"f", DType::float32}, {"d", DType::float64}};
  for (auto& [name, dt] : codes)
    if (k == name) {
      *d = dt;
      return true;
    }
  static const std::pair<const char*, DType> table[] = {
      {"b1", DType::bool_},   {"i1", DType::int8},    {"i2", DType::int16},   {"i4", DType::int32},
      {"i8", DType::int64},   {"u1", DType::uint8},   {"u2", DType::uint16},  {"u4", DType::uint32},
      {"u8", DType::uint64},  {"f2", DType::float16}, {"f4", DType::float32}, {"f8", DType::float64},
      {"V2", DType::bfloat16}};
  for (auto& [name, dt] : table)
    if (k == name) {
      *d = dt;
      return true;
    }
  return false;
}

/// A reader over numpy's header: a Python dict literal of str keys and str / bool / tuple-of-int values.
struct HeaderParser {
  const std::string& s;
  const std::string& path;
  size_t i = 0;

  [[noreturn]] void fail(std::string_view what) const {
    std::string shown;
    for (char c : s.substr(0, 200)) shown += (c >= 32 && c < 127) ? c : '?';
    io_error("load", path, "malformed .npy header ({} at offset {} of the header \"{}\")", what, i, shown);
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  std::string str() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail("expected a quoted string");
    char q = s[i++];
    size_t start = i;
    while (i < s.size() && s[i] != q) ++i;
    if (i >= s.size()) fail("unterminated string");
    return s.substr(start, i++ - start);
  }
  bool boolean() {
    ws();
    if (s.compare(i, 4, "True") == 0) return i += 4, true;
    if (s.compare(i, 5, "False") == 0) return i += 5, false;
    fail("expected True or False");
  }
  std::vector<int64_t> shape() {
    if (!eat('(')) fail("expected a shape tuple");
    std::vector<int64_t> dims;
    while (!eat(')')) {
      ws();
      size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      if (i == start || i - start > 18) fail("expected a non-negative dimension");
      dims.push_back(std::stoll(s.substr(start, i - start)));
      if (eat('L')) {}  // Python 2's long suffix
      if (!eat(',')) {
        if (!eat(')')) fail("expected ',' or ')' in the shape");
        // Python reads "(3)" as the int 3, not a tuple (NumPy refuses it: "shape is not valid").
        if (dims.size() == 1) fail("expected a shape tuple (one dimension needs a trailing comma: (3,))");
        break;
      }
    }
    return dims;
  }
};

struct NpyHeader {
  DType dtype = DType::float32;
  bool big_endian = false, fortran = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
};

NpyHeader parse_header(const std::string& bytes, const std::string& path) {
  if (bytes.size() < kMagicLen + 4 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    io_error("load", path, "not a .npy file (it does not start with the magic string \\x93NUMPY; {} bytes long)",
             bytes.size());
  auto u8 = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
  int major = u8(6), minor = u8(7);
  size_t hlen = 0, pre = 0;
  if (major == 1) {
    hlen = u8(8) | (size_t(u8(9)) << 8), pre = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) io_error("load", path, "truncated: the file ends inside the .npy preamble");
    hlen = u8(8) | (size_t(u8(9)) << 8) | (size_t(u8(10)) << 16) | (size_t(u8(11)) << 24), pre = 12;
  } else {
    io_error("load", path, "unsupported .npy format version {}.{} (jitx reads 1.0, 2.0 and 3.0)", major, minor);
  }
  if (bytes.size() < pre + hlen)
    io_error("load", path, "truncated: the header says it is {} bytes long but the file has {} bytes after the "
             "preamble", hlen, bytes.size() - pre);
  std::string h = bytes.substr(pre, hlen);
  NpyHeader out;
  out.data_offset = pre + hlen;
  HeaderParser p{h, path};
  bool have_descr = false, have_order = false, have_shape = false;
  if (!p.eat('{')) p.fail("expected '{'");
  while (!p.eat('}')) {
    std::string key = p.str();
    if (!p.eat(':')) p.fail("expected ':'");
    if (key == "descr") {
      p.ws();
      if (p.i < h.size() && h[p.i] == '[')
        io_error("load", path, "structured dtypes (a descr list) are not supported: jitx arrays have one dtype");
      std::string d = p.str();
      if (!parse_descr(d, &out.dtype, &out.big_endian))
        io_error("load", path, "dtype descr '{}' has no jitx dtype (jitx reads bool, int8..int64, uint8..uint64, "
                 "float16, bfloat16 ('<V2'), float32, float64)", d);
      have_descr = true;
    } else if (key == "fortran_order") {
      out.fortran = p.boolean(), have_order = true;
    } else if (key == "shape") {
      out.shape = p.shape(), have_shape = true;
    } else {
      p.fail(fmt::format("unexpected key '{}'", key));
    }
    if (!p.eat(',')) {
      if (!p.eat('}')) p.fail("expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    io_error("load", path, "the .npy header lacks the key '{}'",
             !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
  return out;
}

/// Fortran-order values (dims reversed in memory) -> C order, element by element.
void fortran_to_c(const char* src, char* dst, const std::vector<int64_t>& dims, size_t esize) {
  size_t nd = dims.size();
  int64_t n = io_detail::checked_count(dims);
  std::vector<int64_t> idx(nd, 0), fstride(nd, 1);
  for (size_t k = 1; k < nd; ++k) fstride[k] = fstride[k - 1] * dims[k - 1];
  for (int64_t c = 0; c < n; ++c) {
    int64_t off = 0;
    for (size_t k = 0; k < nd; ++k) off += idx[k] * fstride[k];
    std::memcpy(dst + c * esize, src + off * esize, esize);
    for (size_t k = nd; k-- > 0;) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}
}  // namespace

std::string npy_bytes(const Array& a, Loc loc) {
  detail::ApiScope s(loc);
  detail::Literal lit = io_detail::host_values(a, "save");
  std::string dims;
  for (int64_t d : lit.dims) dims += fmt::format("{}, ", d);
  if (lit.dims.size() > 1) dims.resize(dims.size() - 2);
  else if (lit.dims.size() == 1) dims.pop_back();  // "(3,)"
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", npy_descr(lit.dtype), dims);
  bool v2 = h.size() + 1 + 10 > 65535;
  size_t pre = v2 ? 12 : 10;
  size_t total = (pre + h.size() + 1 + 63) / 64 * 64;  // numpy pads the header with spaces to 64 bytes, then '\n'
  h.append(total - pre - h.size() - 1, ' ');
  h += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  size_t hl = h.size();
  for (size_t k = 0; k < (v2 ? 4u : 2u); ++k) out += static_cast<char>((hl >> (8 * k)) & 0xff);
  out += h;
  out.append(static_cast<const char*>(lit.data()), lit.nbytes());
  return out;
}

Array from_npy_bytes(const std::string& bytes, const std::string& what, Loc loc) {
  detail::ApiScope s(loc);
  NpyHeader h = parse_header(bytes, what);
  int64_t n = io_detail::checked_count(h.shape);
  size_t esize = dtype_size(h.dtype);
  int64_t nbytes = 0;
  if (n < 0 || __builtin_mul_overflow(n, static_cast<int64_t>(esize), &nbytes))
    io_error("load", what, "the shape {} in the header is too large", detail::shape_str(h.shape));
  size_t avail = bytes.size() - h.data_offset;
  if (avail < static_cast<size_t>(nbytes))
    io_error("load", what, "truncated: shape {} of {} needs {} bytes of data, the file has {}",
             detail::shape_str(h.shape), dtype_name(h.dtype), nbytes, avail);
  auto lit = detail::Literal::make(h.dtype, h.shape);
  const char* src = bytes.data() + h.data_offset;
  char* dst = static_cast<char*>(lit.data());
  if (h.fortran && h.shape.size() > 1) {
    std::vector<int64_t> dims = h.shape;
    fortran_to_c(src, dst, dims, esize);
  } else if (nbytes > 0) {
    std::memcpy(dst, src, static_cast<size_t>(nbytes));
  }
  if (h.big_endian && esize > 1)
    for (int64_t k = 0; k < n; ++k) std::reverse(dst + k * esize, dst + (k + 1) * esize);
  if (h.dtype == DType::bool_)
    for (int64_t k = 0; k < n; ++k) dst[k] = dst[k] != 0;
  return io_detail::from_literal(lit);
}

void save(const std::string& path, const Array& a, Loc loc) {
  detail::ApiScope s(loc);
  std::string bytes = npy_bytes(a, loc);
  io_detail::write_atomic("save", path, [&](const std::string& tmp) { io_detail::write_bytes("save", tmp, bytes); });
}

Array load(const std::string& path, Loc loc) {
  detail::ApiScope s(loc);
  return from_npy_bytes(io_detail::read_file("load", path), path, loc);
}

}  // namespace jitx
