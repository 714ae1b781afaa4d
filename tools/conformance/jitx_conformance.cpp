// The C++ side of tools/conformance.py: reads cases (an op name and its input arrays as bit patterns), runs
// each through jitx eagerly and under jit on the platform JITX_PLATFORM selects, and writes the results (or
// the error's class) as bit patterns. `jitx_conformance --list` prints the op names it knows.
//
// Case line:   <id> <op> <n> then n times: <dtype> <ndim> <dims...> <hex bits...>
// Result line: <id> <eager|jit> OK <dtype> <ndim> <dims...> <hex bits...>   or   <id> <mode> ERR <class> <message>
#include <cxxabi.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "jitx/jitx.h"

using namespace jitx;
using Args = std::vector<Array>;
using Op = std::function<Array(const Args&)>;

namespace {

std::map<std::string, Op>& table() {
  static std::map<std::string, Op> t;
  return t;
}

// One entry per op and variant; the names are the ones tools/conformance.py maps to JAX.
#define U(ns, name) table()[#ns "." #name] = [](const Args& a) { return ns::name(a[0]); };
#define B(ns, name) table()[#ns "." #name] = [](const Args& a) { return ns::name(a[0], a[1]); };
#define R(name)                                                                                   \
  table()["jnp." #name] = [](const Args& a) { return jnp::name(a[0]); };                          \
  table()["jnp." #name "[axis=0]"] = [](const Args& a) { return jnp::name(a[0], {0}); };          \
  table()["jnp." #name "[axis=-1,keepdims]"] = [](const Args& a) { return jnp::name(a[0], {-1}, true); };
#define RI(name)                                                                                  \
  table()["jnp." #name] = [](const Args& a) { return jnp::name(a[0]); };                          \
  table()["jnp." #name "[axis=0]"] = [](const Args& a) { return jnp::name(a[0], 0); };

void register_ops() {
  // jnp unary
  U(jnp, negative) U(jnp, abs) U(jnp, sign) U(jnp, floor) U(jnp, ceil) U(jnp, exp) U(jnp, exp2) U(jnp, expm1)
  U(jnp, log) U(jnp, log1p) U(jnp, log2) U(jnp, log10) U(jnp, sqrt) U(jnp, cbrt) U(jnp, square)
  U(jnp, reciprocal) U(jnp, tanh) U(jnp, sin) U(jnp, cos) U(jnp, tan) U(jnp, arcsin) U(jnp, arccos)
  U(jnp, arctan) U(jnp, sinh) U(jnp, cosh) U(jnp, arcsinh) U(jnp, arccosh) U(jnp, arctanh) U(jnp, isfinite)
  U(jnp, isnan) U(jnp, isinf) U(jnp, logical_not) U(jnp, bitwise_not) U(jnp, invert) U(jnp, ravel)
  table()["jnp.round"] = [](const Args& a) { return jnp::round(a[0]); };
  table()["jnp.nan_to_num"] = [](const Args& a) { return jnp::nan_to_num(a[0]); };
  // numpy_more.h
  U(jnp, trunc) U(jnp, rint) U(jnp, fabs) U(jnp, isposinf) U(jnp, isneginf) U(jnp, bitwise_count)
  U(jnp, bitwise_invert)
  table()["jnp.modf[0]"] = [](const Args& a) { return jnp::modf(a[0]).first; };
  table()["jnp.modf[1]"] = [](const Args& a) { return jnp::modf(a[0]).second; };
  table()["jnp.frexp[0]"] = [](const Args& a) { return jnp::frexp(a[0]).first; };
  table()["jnp.frexp[1]"] = [](const Args& a) { return jnp::frexp(a[0]).second; };
  // lax unary
  U(lax, neg) U(lax, abs) U(lax, sign) U(lax, floor) U(lax, ceil) U(lax, exp) U(lax, exp2) U(lax, expm1)
  U(lax, log) U(lax, log1p) U(lax, sqrt) U(lax, rsqrt) U(lax, cbrt) U(lax, tanh) U(lax, logistic) U(lax, sin)
  U(lax, cos) U(lax, tan) U(lax, asin) U(lax, acos) U(lax, atan) U(lax, sinh) U(lax, cosh) U(lax, asinh)
  U(lax, acosh) U(lax, atanh) U(lax, erf) U(lax, erfc) U(lax, erf_inv) U(lax, lgamma) U(lax, digamma)
  U(lax, is_finite) U(lax, bitwise_not) U(lax, population_count)
  table()["lax.round"] = [](const Args& a) { return lax::round(a[0]); };
  // lax_special.h
  U(lax, bessel_i0e) U(lax, bessel_i1e)
  B(lax, igamma) B(lax, igammac) B(lax, igamma_grad_a) B(lax, random_gamma_grad) B(lax, zeta) B(lax, polygamma)
  // nn unary
  U(nn, relu) U(nn, gelu) U(nn, silu) U(nn, sigmoid) U(nn, softplus) U(nn, relu6) U(nn, elu) U(nn, leaky_relu)
  U(nn, log_sigmoid) U(nn, swish) U(nn, celu) U(nn, selu) U(nn, hard_tanh) U(nn, hard_sigmoid) U(nn, hard_silu)
  U(nn, hard_swish) U(nn, mish) U(nn, squareplus) U(nn, soft_sign) U(nn, sparse_plus) U(nn, sparse_sigmoid)
  U(nn, softmax) U(nn, log_softmax)
  table()["nn.logsumexp"] = [](const Args& a) { return nn::logsumexp(a[0], -1); };
  // binary
  B(jnp, add) B(jnp, subtract) B(jnp, multiply) B(jnp, divide) B(jnp, true_divide) B(jnp, floor_divide)
  B(jnp, remainder) B(jnp, mod) B(jnp, power) B(jnp, maximum) B(jnp, minimum) B(jnp, arctan2) B(jnp, equal)
  B(jnp, not_equal) B(jnp, less) B(jnp, less_equal) B(jnp, greater) B(jnp, greater_equal) B(jnp, logical_and)
  B(jnp, logical_or) B(jnp, logical_xor) B(jnp, bitwise_and) B(jnp, bitwise_or) B(jnp, bitwise_xor)
  B(jnp, left_shift) B(jnp, right_shift) B(jnp, fmod) B(jnp, logaddexp)
  B(jnp, fmax) B(jnp, fmin) B(jnp, logaddexp2) B(jnp, bitwise_left_shift) B(jnp, bitwise_right_shift)
  table()["jnp.divmod[0]"] = [](const Args& a) { return jnp::divmod(a[0], a[1]).first; };
  table()["jnp.divmod[1]"] = [](const Args& a) { return jnp::divmod(a[0], a[1]).second; };
  B(lax, add) B(lax, sub) B(lax, mul) B(lax, div) B(lax, rem) B(lax, pow) B(lax, max) B(lax, min) B(lax, atan2)
  B(lax, bitwise_and) B(lax, bitwise_or) B(lax, bitwise_xor) B(lax, shift_left) B(lax, shift_right_arithmetic)
  B(lax, shift_right_logical) B(lax, eq) B(lax, ne) B(lax, lt) B(lax, le) B(lax, gt) B(lax, ge)
  // reductions
  R(sum) R(prod) R(max) R(min) R(all) R(any) R(mean) R(var) R(std) R(nansum) R(nanmean) R(nanmax) R(nanmin)
  RI(argmax) RI(argmin) RI(cumsum) RI(cumprod)
  // shape ops
  table()["jnp.sort"] = [](const Args& a) { return jnp::sort(a[0]); };
  table()["jnp.argsort"] = [](const Args& a) { return jnp::argsort(a[0]); };
  table()["jnp.flip"] = [](const Args& a) { return jnp::flip(a[0]); };
  table()["jnp.transpose"] = [](const Args& a) { return jnp::transpose(a[0]); };
  table()["jnp.expand_dims[0]"] = [](const Args& a) { return jnp::expand_dims(a[0], {0}); };
  table()["jnp.concatenate[self]"] = [](const Args& a) { return jnp::concatenate({a[0], a[0]}, 0); };
  table()["jnp.stack[self]"] = [](const Args& a) { return jnp::stack({a[0], a[0]}, 0); };
  table()["jnp.tile[2]"] = [](const Args& a) { return jnp::tile(a[0], {2}); };
  table()["jnp.roll[1]"] = [](const Args& a) { return jnp::roll(a[0], 1); };
  table()["jnp.cumsum"] = [](const Args& a) { return jnp::cumsum(a[0]); };
  table()["jnp.where"] = [](const Args& a) { return jnp::where(a[0], a[1], a[2]); };
  // int64 literals: a Python int is a weak int64 under x64 (a C++ int is a weak int32 in jitx).
  table()["jnp.clip[-1,2]"] = [](const Args& a) { return jnp::clip(a[0], Array(int64_t{-1}), Array(int64_t{2})); };
}
#undef U
#undef B
#undef R
#undef RI

DType dtype_named(const std::string& s) {
  static const std::map<std::string, DType> m = {
      {"bool", DType::bool_},     {"int8", DType::int8},         {"int16", DType::int16},
      {"int32", DType::int32},    {"int64", DType::int64},       {"uint8", DType::uint8},
      {"uint16", DType::uint16},  {"uint32", DType::uint32},     {"uint64", DType::uint64},
      {"float16", DType::float16}, {"bfloat16", DType::bfloat16}, {"float32", DType::float32},
      {"float64", DType::float64}};
  return m.at(s);
}

DType bits_dtype(int bits) {
  return bits == 8 ? DType::uint8 : bits == 16 ? DType::uint16 : bits == 32 ? DType::uint32 : DType::uint64;
}

Array read_array(std::istream& in) {
  std::string dt;
  int64_t ndim;
  in >> dt >> ndim;
  Shape shape(static_cast<size_t>(ndim));
  int64_t n = 1;
  for (auto& d : shape) in >> d, n *= d;
  DType d = dtype_named(dt);
  std::vector<uint64_t> bits(static_cast<size_t>(n));
  for (auto& b : bits) {
    std::string h;
    in >> h;
    b = std::stoull(h, nullptr, 16);
  }
  Array u = array(bits, shape, DType::uint64);
  if (d == DType::bool_) return lax::ne(u, Array::scalar_int(0, DType::uint64));
  int w = dtype_bits(d);
  return lax::bitcast_convert_type(lax::convert_element_type(u, bits_dtype(w)), d);
}

std::string write_array(const Array& x) {
  std::ostringstream o;
  o << "OK " << dtype_name(x.dtype()) << ' ' << x.ndim();
  for (auto d : x.shape()) o << ' ' << d;
  Array bits = x.dtype() == DType::bool_ ? lax::convert_element_type(x, DType::uint8)
                                         : lax::bitcast_convert_type(x, bits_dtype(dtype_bits(x.dtype())));
  for (auto v : lax::convert_element_type(bits, DType::uint64).to_vector<uint64_t>()) o << ' ' << std::hex << v;
  return o.str();
}

std::string class_name(const std::exception& e) {
  int status = 0;
  char* n = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
  std::string s = status == 0 ? n : typeid(e).name();
  std::free(n);
  return s;
}

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s.substr(0, 300);
}

template <class F>
std::string guarded(F f) {
  try {
    return write_array(f());
  } catch (const std::exception& e) {
    return "ERR " + class_name(e) + " " + one_line(e.what());
  }
}

}  // namespace

void register_extra_ops(std::map<std::string, Op>& t);  // jitx_conformance_extra.cpp

int main(int argc, char** argv) {
  register_ops();
  register_extra_ops(table());
  if (argc > 1 && std::string(argv[1]) == "--list") {
    for (auto& [name, op] : table()) std::cout << name << '\n';
    return 0;
  }
  if (argc < 3) {
    std::cerr << "usage: jitx_conformance CASES OUT | --list\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::ofstream out(argv[2]);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string id, name;
    int n;
    ls >> id >> name >> n;
    Args args;
    for (int i = 0; i < n; ++i) args.push_back(read_array(ls));
    auto it = table().find(name);
    if (it == table().end()) {
      out << id << " eager ERR unknown-op " << name << '\n' << id << " jit ERR unknown-op " << name << '\n';
      continue;
    }
    const Op& op = it->second;
    out << id << " eager " << guarded([&] { return op(args); }) << '\n';
    out << id << " jit " << guarded([&] {
      auto j = jit([op](std::vector<Array> a) { return op(a); });
      return j(args);
    }) << '\n';
    out.flush();
  }
  return 0;
}
