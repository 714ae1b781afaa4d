// safetensors: an 8-byte little-endian header length, a JSON header (name -> dtype, shape, data_offsets; optional
// "__metadata__" of strings), then the tensors' bytes, little-endian, C order.
#include <nlohmann/json.hpp>

#include <set>

#include "io/io_util.h"

namespace jitx {
namespace {
using io_detail::io_error;
using nlohmann::json;

constexpr uint64_t kMaxHeader = 100'000'000;  // as the reference implementation: a larger header is an error

std::string_view st_dtype(DType d) {
  switch (d) {
    case DType::bool_: return "BOOL";
    case DType::int8: return "I8";
    case DType::int16: return "I16";
    case DType::int32: return "I32";
    case DType::int64: return "I64";
    case DType::uint8: return "U8";
    case DType::uint16: return "U16";
    case DType::uint32: return "U32";
    case DType::uint64: return "U64";
    case DType::float16: return "F16";
    case DType::bfloat16: return "BF16";
    case DType::float32: return "F32";
    case DType::float64: return "F64";
  }
  return "?";
}
bool st_parse_dtype(const std::string& s, DType* d) {
  for (int k = 0; k < kNumDTypes; ++k)
    if (st_dtype(static_cast<DType>(k)) == s) {
      *d = static_cast<DType>(k);
      return true;
    }
  return false;
}

void write_st(const std::string& path, const NamedArrays& arrays, const std::map<std::string, std::string>& meta) {
  json header = json::object();
  if (!meta.empty()) header["__metadata__"] = meta;
  std::vector<detail::Literal> lits;
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (auto& [name, a] : arrays) {
    if (name == "__metadata__" || name.empty() || !seen.insert(name).second)
      io_error("save_safetensors", path, "the tensor name '{}' is {}", name,
               name.empty() ? "empty" : name == "__metadata__" ? "reserved" : "given twice");
    lits.push_back(io_detail::host_values(a, "save_safetensors"));
    const auto& l = lits.back();
    header[name] = {{"dtype", st_dtype(l.dtype)}, {"shape", l.dims}, {"data_offsets", {offset, offset + l.nbytes()}}};
    offset += l.nbytes();
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // the data starts 8-byte aligned (the format allows trailing spaces)
  std::string out(8, '\0');
  for (int k = 0; k < 8; ++k) out[k] = static_cast<char>((uint64_t(h.size()) >> (8 * k)) & 0xff);
  out += h;
  for (auto& l : lits) out.append(static_cast<const char*>(l.data()), l.nbytes());
  io_detail::write_atomic("save_safetensors", path,
                          [&](const std::string& tmp) { io_detail::write_bytes("save_safetensors", tmp, out); });
}

json read_header(const std::string& bytes, const std::string& path, size_t* data_start) {
  if (bytes.size() < 8) io_error("load_safetensors", path, "truncated: {} bytes, less than the 8-byte header length",
                                 bytes.size());
  uint64_t n = 0;
  for (int k = 0; k < 8; ++k) n |= uint64_t(static_cast<uint8_t>(bytes[k])) << (8 * k);
  if (n > kMaxHeader)
    io_error("load_safetensors", path, "the header length {} is implausible (not a safetensors file?)", n);
  if (n > bytes.size() - 8)
    io_error("load_safetensors", path, "truncated: the header is {} bytes but only {} follow the length", n,
             bytes.size() - 8);
  *data_start = 8 + n;
  try {
    json h = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n));
    if (!h.is_object()) io_error("load_safetensors", path, "the JSON header is not an object");
    return h;
  } catch (const json::exception& e) {
    io_error("load_safetensors", path, "the JSON header does not parse: {}", e.what());
  }
}

Array read_tensor(const std::string& path, const std::string& name, const json& t, const std::string& bytes,
                  size_t start) {
  try {
    DType d;
    std::string ds = t.at("dtype").get<std::string>();
    if (!st_parse_dtype(ds, &d))
      io_error("load_safetensors", path, "tensor '{}' has dtype '{}', which jitx has not", name, ds);
    // Every dimension and offset a JSON integer: get<> would truncate 1.5 to 1.
    for (const char* key : {"shape", "data_offsets"})
      for (const auto& v : t.at(key))
        if (!v.is_number_integer())
          io_error("load_safetensors", path, "tensor '{}' has a {} entry {} that is not an integer", name, key,
                   v.dump());
    auto shape = t.at("shape").get<std::vector<int64_t>>();
    auto off = t.at("data_offsets").get<std::vector<uint64_t>>();
    int64_t count = io_detail::checked_count(shape);
    uint64_t need = 0;
    if (count < 0 || __builtin_mul_overflow(uint64_t(count), uint64_t(dtype_size(d)), &need))
      io_error("load_safetensors", path, "tensor '{}' has an invalid shape {}", name, detail::shape_str(shape));
    if (off.size() != 2 || off[0] > off[1] || off[1] - off[0] != need)
      io_error("load_safetensors", path, "tensor '{}': data_offsets do not span the {} bytes of {}{}", name, need,
               ds, detail::shape_str(shape));
    if (off[1] > bytes.size() - start)
      io_error("load_safetensors", path, "truncated: tensor '{}' ends at byte {} of the data, which has {}", name,
               off[1], bytes.size() - start);
    auto lit = detail::Literal::make(d, shape);
    if (need) std::memcpy(lit.data(), bytes.data() + start + off[0], need);
    if (d == DType::bool_)
      for (uint64_t k = 0; k < need; ++k) static_cast<char*>(lit.data())[k] = static_cast<char*>(lit.data())[k] != 0;
    return io_detail::from_literal(lit);
  } catch (const json::exception& e) {
    io_error("load_safetensors", path, "tensor '{}' has a malformed entry: {}", name, e.what());
  }
}
}  // namespace

void save_safetensors(const std::string& path, const NamedArrays& arrays,
                      const std::map<std::string, std::string>& metadata, Loc loc) {
  detail::ApiScope s(loc);
  write_st(path, arrays, metadata);
}
void save_safetensors(const std::string& path, const std::map<std::string, Array>& arrays,
                      const std::map<std::string, std::string>& metadata, Loc loc) {
  detail::ApiScope s(loc);
  write_st(path, NamedArrays(arrays.begin(), arrays.end()), metadata);
}

std::map<std::string, Array> load_safetensors(const std::string& path, Loc loc) {
  detail::ApiScope s(loc);
  std::string bytes = io_detail::read_file("load_safetensors", path);
  size_t start = 0;
  json h = read_header(bytes, path, &start);
  std::map<std::string, Array> out;
  for (auto& [name, t] : h.items()) {
    if (name == "__metadata__") continue;
    out.emplace(name, read_tensor(path, name, t, bytes, start));
  }
  return out;
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path, Loc loc) {
  detail::ApiScope s(loc);
  std::string bytes = io_detail::read_file("load_safetensors", path);
  size_t start = 0;
  json h = read_header(bytes, path, &start);
  if (!h.contains("__metadata__")) return {};
  try {
    return h["__metadata__"].get<std::map<std::string, std::string>>();
  } catch (const json::exception& e) {
    io_error("load_safetensors", path, "__metadata__ is not an object of strings: {}", e.what());
  }
}

}  // namespace jitx
