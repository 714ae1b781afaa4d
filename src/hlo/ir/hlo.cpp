// hlo::Module construction helpers, opcode tables, shapes and the HLO text printer.
#include "hlo/ir/hlo.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "hlo/ir/collectives.h"

namespace jitx::hlo {
namespace {
struct OpInfo {
  std::string_view name, mlir;
  int arity;
  char kind;
};
constexpr OpInfo kOps[] = {
#define X(e, text, mlir, arity, kind) {text, mlir, arity, #kind[0]},
#include "hlo/ir/opcodes.def"
#undef X
};
}  // namespace

std::string_view opcode_name(Opcode op) { return kOps[static_cast<int>(op)].name; }
std::string_view opcode_mlir_name(Opcode op) { return kOps[static_cast<int>(op)].mlir; }
int opcode_arity(Opcode op) { return kOps[static_cast<int>(op)].arity; }
bool is_unary_elementwise(Opcode op) { return kOps[static_cast<int>(op)].kind == 'U'; }
bool is_binary_elementwise(Opcode op) { return kOps[static_cast<int>(op)].kind == 'B'; }
bool is_elementwise(Opcode op) {
  char k = kOps[static_cast<int>(op)].kind;
  return k == 'U' || k == 'B' || k == 'T';
}
Opcode opcode_from_name(std::string_view name) {
  for (int i = 0; i < static_cast<int>(Opcode::kNumOpcodes); ++i)
    if (kOps[i].name == name) return static_cast<Opcode>(i);
  detail::throw_error<CompileError>("hlo", "unknown opcode '{}'", name);
}

std::string_view hlo_dtype_name(DType d) {
  switch (d) {
    case DType::bool_: return "pred";
    case DType::int8: return "s8";
    case DType::int16: return "s16";
    case DType::int32: return "s32";
    case DType::int64: return "s64";
    default: return dtype_name(d);
  }
}

Shape Shape::tuple(std::vector<Shape> elems) {
  Shape s;
  s.is_tuple = true;
  s.tuple_shapes = std::move(elems);
  return s;
}

int64_t Shape::num_elements() const { return detail::num_elements(dims); }

int64_t Shape::byte_size() const {
  if (is_tuple) {
    int64_t n = 0;
    for (auto& t : tuple_shapes) n += t.byte_size();
    return n;
  }
  return num_elements() * static_cast<int64_t>(dtype_size(dtype));
}

bool Shape::same_type(const Shape& o) const {
  if (is_tuple != o.is_tuple) return false;
  if (is_tuple) {
    if (tuple_shapes.size() != o.tuple_shapes.size()) return false;
    for (size_t i = 0; i < tuple_shapes.size(); ++i)
      if (!tuple_shapes[i].same_type(o.tuple_shapes[i])) return false;
    return true;
  }
  return dtype == o.dtype && dims == o.dims;
}

std::string Shape::str(bool with_layout) const {
  if (is_tuple) {
    std::vector<std::string> parts;
    for (auto& t : tuple_shapes) parts.push_back(t.str(with_layout));
    return fmt::format("({})", fmt::join(parts, ", "));
  }
  std::string s = fmt::format("{}[{}]", hlo_dtype_name(dtype), fmt::join(dims, ","));
  if (with_layout) {
    std::vector<int64_t> l = layout;
    if (l.empty())
      for (int64_t i = rank() - 1; i >= 0; --i) l.push_back(i);
    s += fmt::format("{{{}}}", fmt::join(l, ","));
  }
  return s;
}

std::string Shape::mlir() const {
  JITX_ASSERT(!is_tuple, "tuple shape has no MLIR tensor type");
  if (dims.empty()) return fmt::format("tensor<{}>", dtype_mlir_name(dtype));
  return fmt::format("tensor<{}x{}>", fmt::join(dims, "x"), dtype_mlir_name(dtype));
}

std::vector<Instruction*> Instruction::users() const {
  std::vector<Instruction*> out;
  if (!parent) return out;
  for (auto& i : parent->instructions)
    for (auto* o : i->operands)
      if (o == this) {
        out.push_back(i.get());
        break;
      }
  return out;
}

Instruction* Computation::add(Opcode op, Shape shape, std::vector<Instruction*> operands, detail::Params attrs,
                              std::string name) {
  auto inst = std::make_unique<Instruction>();
  inst->opcode = op;
  inst->shape = std::move(shape);
  inst->operands = std::move(operands);
  inst->attrs = std::move(attrs);
  inst->parent = this;
  inst->name = parent ? parent->unique_name(name.empty() ? opcode_name(op) : name) : std::string(opcode_name(op));
  instructions.push_back(std::move(inst));
  root = instructions.back().get();
  return root;
}

Instruction* Computation::add_parameter(int64_t number, Shape shape, std::string name) {
  auto* p = add(Opcode::kParameter, std::move(shape), {}, {}, name.empty() ? fmt::format("Arg_{}", number) : name);
  p->parameter_number = number;
  parameters.push_back(p);
  return p;
}

Instruction* Computation::add_constant(detail::Literal lit) {
  Shape s(lit.dtype, lit.dims);
  auto* c = add(Opcode::kConstant, s, {});
  c->literal = std::make_shared<detail::Literal>(std::move(lit));
  return c;
}

Instruction* Computation::add_scalar_constant(DType d, double v) {
  auto lit = detail::Literal::make(d, {});
  lit.set_f64(0, v);
  return add_constant(std::move(lit));
}

Computation* Module::add_computation(std::string name) {
  auto c = std::make_unique<Computation>();
  c->name = unique_name(name);
  c->parent = this;
  computations.push_back(std::move(c));
  return computations.back().get();
}

std::string Module::unique_name(std::string_view base) { return fmt::format("{}.{}", base, next_id_++); }

// --- printer -------------------------------------------------------------------------------------
namespace {
bool is_bare_word(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '-')) return false;
  if (s == "true" || s == "false" || s == "inf" || s == "nan") return false;
  for (int d = 0; d < kNumDTypes; ++d)
    if (hlo_dtype_name(static_cast<DType>(d)) == s) return false;
  return true;
}

// Unambiguous attribute values: {1,2} int lists, true/false, dtypes as pred/s32/f32, ints as digits, doubles always
// with a '.', 'e', inf or nan, strings bare when they cannot be read as anything else and quoted otherwise.
std::string attr_str(const detail::ParamValue& v) {
  if (auto* iv = std::get_if<std::vector<int64_t>>(&v)) return fmt::format("{{{}}}", fmt::join(*iv, ","));
  if (auto* d = std::get_if<DType>(&v)) return std::string(hlo_dtype_name(*d));
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* f = std::get_if<double>(&v)) {
    std::string s = fmt::format("{}", *f);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  if (auto* s = std::get_if<std::string>(&v)) {
    if (is_bare_word(*s)) return *s;
    std::string q = "\"";
    for (char ch : *s) {
      if (ch == '"' || ch == '\\') q += '\\';
      if (ch == '\n') {
        q += "\\n";
        continue;
      }
      q += ch;
    }
    return q + "\"";
  }
  JITX_ASSERT(false, "a closed jaxpr cannot be an HLO attribute");
  return "";
}

uint64_t raw_bits(const detail::Literal& l, int64_t i) {
  uint64_t bits = 0;
  size_t es = dtype_size(l.dtype);
  std::memcpy(&bits, static_cast<const char*>(l.data()) + i * es, es);  // little-endian hosts
  return bits;
}

// One element, exactly: floats in their shortest round-trip form, NaNs other than the canonical one by bit pattern.
std::string element_str(const detail::Literal& l, int64_t i) {
  DType d = l.dtype;
  if (d == DType::bool_) return l.get_i64(i) ? "true" : "false";
  if (is_unsigned_integer(d)) return std::to_string(l.get_u64(i));
  if (is_integer(d)) return std::to_string(l.get_i64(i));
  double v = l.get_f64(i);
  if (std::isnan(v)) {
    uint64_t bits = raw_bits(l, i);
    return bits == canonical_nan_bits(d) ? "nan" : fmt::format("nan(0x{:x})", bits);
  }
  if (d == DType::float64) return fmt::format("{}", v);
  return fmt::format("{}", static_cast<float>(v));  // f32, f16 and bf16 values are exact floats
}

std::string literal_str(const detail::Literal& l) {
  if (l.dims.empty()) return element_str(l, 0);
  std::string s;
  auto strides = detail::row_major_strides(l.dims);
  auto rec = [&](auto& self, size_t axis, int64_t base) -> void {
    s += "{";
    for (int64_t i = 0; i < l.dims[axis]; ++i) {
      if (i) s += ", ";
      if (axis + 1 == l.dims.size()) s += element_str(l, base + i);
      else self(self, axis + 1, base + i * strides[axis]);
    }
    s += "}";
  };
  rec(rec, 0, 0);
  return s;
}

/// Instruction and computation names as printed: their own, or canonical ones for fingerprints.
struct Namer {
  bool canonical = false;
  std::unordered_map<const void*, std::string> names;
  std::string operator()(const Instruction* i) const { return canonical ? names.at(i) : i->name; }
  std::string operator()(const Computation* c) const { return canonical ? names.at(c) : c->name; }
};

std::string instruction_line(const Instruction& inst, bool root, const Namer& nm) {
  std::string line = fmt::format("  {}%{} = {} {}(", root ? "ROOT " : "", nm(&inst), inst.shape.str(true),
                                 opcode_name(inst.opcode));
  if (inst.opcode == Opcode::kParameter) {
    line += std::to_string(inst.parameter_number);
  } else if (inst.opcode == Opcode::kConstant) {
    line += literal_str(*inst.literal);
  } else {
    std::vector<std::string> ops;
    for (auto* o : inst.operands) ops.push_back("%" + nm(o));
    line += fmt::format("{}", fmt::join(ops, ", "));
  }
  line += ")";
  for (auto& [k, v] : inst.attrs.items()) {
    JITX_ASSERT(k != "calls", "'calls' is reserved for called computations (%{})", inst.name);
    if (is_braced_text_attribute(k) && std::holds_alternative<std::string>(v))
      line += fmt::format(", {}={}", k, std::get<std::string>(v));
    else
      line += fmt::format(", {}={}", k, attr_str(v));
  }
  if (!inst.called.empty()) {
    std::vector<std::string> names;
    for (auto* cc : inst.called) names.push_back("%" + nm(cc));
    line += fmt::format(", calls={}", fmt::join(names, ", "));
  }
  return line + "\n";
}

void print_computation(std::string& out, const Computation& c, bool entry, const Namer& nm) {
  std::vector<std::string> params;
  for (auto* p : c.parameters) params.push_back(fmt::format("{}: {}", nm(p), p->shape.str()));
  out += fmt::format("{}%{} ({}) -> {} {{\n", entry ? "ENTRY " : "", nm(&c), fmt::join(params, ", "),
                     c.root ? c.root->shape.str() : "()");
  for (auto& inst : c.instructions) out += instruction_line(*inst, inst.get() == c.root, nm);
  out += "}\n";
}

std::string print_module(const Module& m, const Namer& nm) {
  std::string out;
  std::vector<std::string> ins;
  if (m.entry)
    for (auto* p : m.entry->parameters) ins.push_back(p->shape.str(true));
  out += fmt::format("HloModule {}, entry_computation_layout={{({})->{}}}\n\n", nm.canonical ? "m" : m.name,
                     fmt::join(ins, ", "), m.entry && m.entry->root ? m.entry->root->shape.str(true) : "()");
  for (auto& c : m.computations) {
    if (c.get() == m.entry) continue;
    print_computation(out, *c, false, nm);
    out += "\n";
  }
  if (m.entry) print_computation(out, *m.entry, true, nm);
  return out;
}
}  // namespace

uint64_t canonical_nan_bits(DType d) {
  switch (d) {
    case DType::float16: return 0x7e00;
    case DType::bfloat16: return 0x7fc0;
    case DType::float32: return 0x7fc00000;
    default: return 0x7ff8000000000000ULL;
  }
}

std::string print_hlo(const Module& m) { return print_module(m, Namer{}); }

std::string print_hlo_canonical(const Module& m) {
  Namer nm;
  nm.canonical = true;
  int64_t ci = 0;
  for (auto& c : m.computations) {
    nm.names[c.get()] = fmt::format("c{}", ci++);
    int64_t ii = 0;
    for (auto& i : c->instructions) nm.names[i.get()] = fmt::format("i{}", ii++);
  }
  return print_module(m, nm);
}

std::string print_instruction_canonical(const Instruction& inst) {
  Namer nm;
  nm.canonical = true;
  std::string out;
  // Operands by first occurrence, with their types: add(x, x) and add(x, y) differ.
  int64_t ai = 0;
  for (const Instruction* o : inst.operands) {
    if (nm.names.count(o)) continue;
    nm.names[o] = fmt::format("a{}", ai++);
    out += fmt::format("%{}: {}\n", nm.names[o], o->shape.str(true));
  }
  // Called computations (and the ones they call) in first-reached order, each printed once.
  std::vector<const Computation*> comps;
  auto reach = [&](const Instruction& i) {
    for (auto* c : i.called)
      if (std::find(comps.begin(), comps.end(), c) == comps.end()) comps.push_back(c);
  };
  reach(inst);
  for (size_t k = 0; k < comps.size(); ++k)
    for (auto& i : comps[k]->instructions) reach(*i);
  int64_t ii = 0;
  for (size_t k = 0; k < comps.size(); ++k) {
    nm.names[comps[k]] = fmt::format("c{}", k);
    for (auto& i : comps[k]->instructions) nm.names[i.get()] = fmt::format("i{}", ii++);
  }
  for (auto* c : comps) print_computation(out, *c, false, nm);
  nm.names[&inst] = "r";
  return out + instruction_line(inst, true, nm);
}

}  // namespace jitx::hlo
