// jitx-run's .npy reading and writing (numpy's format, v1-v3 headers, little-endian, C order). A stop-gap until
// jitx::load / jitx::save (include/jitx/io.h, branch h-data) land: then this file goes.
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "jitx/jitx.h"

namespace jitx_run {

inline const std::map<std::string, jitx::DType>& npy_types() {
  static const std::map<std::string, jitx::DType> kTypes = {
      {"|b1", jitx::DType::bool_},   {"|i1", jitx::DType::int8},    {"<i2", jitx::DType::int16},
      {"<i4", jitx::DType::int32},   {"<i8", jitx::DType::int64},   {"|u1", jitx::DType::uint8},
      {"<u2", jitx::DType::uint16},  {"<u4", jitx::DType::uint32},  {"<u8", jitx::DType::uint64},
      {"<f2", jitx::DType::float16}, {"<f4", jitx::DType::float32}, {"<f8", jitx::DType::float64}};
  return kTypes;
}

inline jitx::Array read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not a .npy file");
  auto u8 = [&](size_t k) { return static_cast<size_t>(static_cast<unsigned char>(bytes.at(k))); };
  size_t hlen = 0, off = 0;
  if (bytes[6] == 1) {
    hlen = u8(8) | (u8(9) << 8), off = 10;
  } else {
    hlen = u8(8) | (u8(9) << 8) | (u8(10) << 16) | (u8(11) << 24), off = 12;
  }
  if (off + hlen > bytes.size()) throw std::runtime_error(path + ": truncated header");
  std::string h = bytes.substr(off, hlen);
  auto field = [&](const std::string& key) {
    auto p = h.find("'" + key + "'");
    if (p == std::string::npos) throw std::runtime_error(path + ": the header has no '" + key + "'");
    return h.substr(h.find(':', p) + 1);
  };
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  std::string fo = field("fortran_order");
  if (fo.find("True") < fo.find(',')) throw std::runtime_error(path + ": Fortran order is not supported");
  std::string sh = field("shape");
  sh = sh.substr(sh.find('(') + 1, sh.find(')') - sh.find('(') - 1);
  std::vector<int64_t> shape;
  std::stringstream ss(sh);
  std::string tok;
  while (std::getline(ss, tok, ','))
    if (tok.find_first_of("0123456789") != std::string::npos) shape.push_back(std::stoll(tok));
  auto it = npy_types().find(descr);
  if (it == npy_types().end()) throw std::runtime_error(path + ": dtype '" + descr + "' is not supported");
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  if (bytes.size() - off - hlen < n * jitx::dtype_size(it->second)) throw std::runtime_error(path + ": truncated data");
  return jitx::array_from_data(bytes.data() + off + hlen, it->second, shape, it->second);
}

template <class T>
std::string raw_bytes(const jitx::Array& a) {
  auto v = a.to_vector<T>();
  if constexpr (std::is_same_v<T, bool>) {
    std::string s(v.size(), '\0');
    for (size_t k = 0; k < v.size(); ++k) s[k] = v[k] ? 1 : 0;
    return s;
  } else {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
}

/// Writes a as .npy v1.0; bfloat16 (no numpy type code) is written as float32, exactly.
inline void write_npy(const std::string& path, const jitx::Array& in) {
  jitx::Array a = in.dtype() == jitx::DType::bfloat16 ? in.astype(jitx::DType::float32) : in;
  std::string descr, data;
  for (auto& [d, t] : npy_types())
    if (t == a.dtype()) descr = d;
  switch (a.dtype()) {
    case jitx::DType::bool_:
      data = raw_bytes<bool>(a);
      break;
    case jitx::DType::int8:
      data = raw_bytes<int8_t>(a);
      break;
    case jitx::DType::int16:
      data = raw_bytes<int16_t>(a);
      break;
    case jitx::DType::int32:
      data = raw_bytes<int32_t>(a);
      break;
    case jitx::DType::int64:
      data = raw_bytes<int64_t>(a);
      break;
    case jitx::DType::uint8:
      data = raw_bytes<uint8_t>(a);
      break;
    case jitx::DType::uint16:
      data = raw_bytes<uint16_t>(a);
      break;
    case jitx::DType::uint32:
      data = raw_bytes<uint32_t>(a);
      break;
    case jitx::DType::uint64:
      data = raw_bytes<uint64_t>(a);
      break;
    case jitx::DType::float16:
      data = raw_bytes<uint16_t>(jitx::lax::bitcast_convert_type(a, jitx::DType::uint16));
      break;
    case jitx::DType::float32:
      data = raw_bytes<float>(a);
      break;
    case jitx::DType::float64:
      data = raw_bytes<double>(a);
      break;
    default:
      throw std::runtime_error("write_npy: dtype " + std::string(jitx::dtype_name(a.dtype())) + " has no .npy code");
  }
  std::string shape = "(";
  for (auto d : a.shape()) shape += std::to_string(d) + ", ";
  if (a.shape().size() > 1)
    shape.resize(shape.size() - 2);
  else if (a.shape().size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  f.write(len, 2);
  f << header << data;
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace jitx_run
