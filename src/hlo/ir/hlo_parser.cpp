// The HLO text parser: a hand-written recursive-descent reader of print_hlo's output (tokens in hlo_lexer.h).
#include "hlo/ir/hlo_parser.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/ranges.h>

#include "core/errors.h"
#include "hlo/ir/collectives.h"
#include "hlo/ir/hlo_lexer.h"

namespace jitx::hlo {
namespace {
constexpr int kMaxNesting = 64;
}  // namespace
namespace {

/// Reads computations, instructions, shapes, literals and attribute values from the lexer's tokens.
class Parser {
 public:
  explicit Parser(std::string_view text) : lex_(text) {}

  std::unique_ptr<Module> module();

 private:
  HloLexer lex_;
  Module* m_ = nullptr;
  std::vector<std::pair<Instruction*, std::vector<std::string>>> calls_;

  [[noreturn]] void fail(std::string_view msg) const { lex_.fail(msg); }
  DType dtype();
  Shape shape(bool with_layout, int depth = 0);
  void set_element(detail::Literal& l, int64_t i, const std::string& t);
  detail::Literal literal(const Shape& s);
  detail::ParamValue attr_value();
  void computation();
  /// One `[ROOT] %name = shape opcode(operands), attrs` line; by_name holds the computation's earlier ones.
  std::unique_ptr<Instruction> instruction(std::unordered_map<std::string, Instruction*>& by_name, bool& is_root);
  /// `, key=value` attributes and `calls=%a, %b` after the operand list.
  void attributes(Instruction& inst, std::vector<std::string>& called);
};

std::unique_ptr<Module> Parser::module() {
  lex_.expect_word("HloModule");
  auto m = std::make_unique<Module>(lex_.name());
  m_ = m.get();
  // The header's attributes (entry_computation_layout, input_output_alias, is_scheduled, ...) are derived from the
  // entry computation or describe a compile's choices: nothing to keep.
  while (lex_.try_char(',')) {
    lex_.name();
    lex_.expect('=');
    if (lex_.peek() == '{') lex_.skip_braced();
    else lex_.name();
  }
  while (!lex_.at_end()) computation();
  if (!m->entry) fail("no ENTRY computation");
  // Resolve called computations now that every computation is known.
  for (auto& [inst, names] : calls_) {
    for (auto& n : names) {
      Computation* c = m->find_computation(n);
      if (!c) fail(fmt::format("%{} calls unknown computation %{}", inst->name, n));
      inst->called.push_back(c);
    }
  }
  return m;
}

DType Parser::dtype() {
  std::string n = lex_.name();
  for (int d = 0; d < kNumDTypes; ++d)
    if (hlo_dtype_name(static_cast<DType>(d)) == n) return static_cast<DType>(d);
  fail(fmt::format("unknown element type '{}'", n));
}

Shape Parser::shape(bool with_layout, int depth) {
  if (lex_.try_char('(')) {
    // (A bound on the recursion: hostile text could nest deeply enough to overflow the stack.)
    if (depth >= kMaxNesting) fail(fmt::format("tuple shapes nested more than {} deep", kMaxNesting));
    std::vector<Shape> elems;
    if (!lex_.try_char(')')) {
      do elems.push_back(shape(with_layout, depth + 1));
      while (lex_.try_char(','));
      lex_.expect(')');
    }
    return Shape::tuple(std::move(elems));
  }
  DType d = dtype();
  Shape s(d, lex_.int_list('[', ']'));
  // Hostile text must not reach num_elements' products: sizes stay non-negative and their byte size fits int64.
  int64_t n = 1;
  for (int64_t dim : s.dims) {
    if (dim < 0) fail(fmt::format("negative dimension {} in a {} shape", dim, hlo_dtype_name(d)));
    if (dim != 0 && n > std::numeric_limits<int64_t>::max() / 16 / dim)
      fail(fmt::format("shape {}[{}] has more elements than int64 holds", hlo_dtype_name(d), fmt::join(s.dims, ",")));
    n *= dim;
  }
  if (with_layout && lex_.peek() == '{') {
    s.layout = lex_.int_list('{', '}');
    std::vector<int64_t> row_major;
    for (int64_t i = s.rank() - 1; i >= 0; --i) row_major.push_back(i);
    if (s.layout == row_major) s.layout.clear();  // the default prints the same way
    else if (static_cast<int64_t>(s.layout.size()) != s.rank()) fail("layout size does not match the rank");
  }
  return s;
}

void Parser::set_element(detail::Literal& l, int64_t i, const std::string& t) {
  DType d = l.dtype;
  size_t es = dtype_size(d);
  char* dst = static_cast<char*>(l.data()) + i * es;
  try {
    if (d == DType::bool_) {
      if (t != "true" && t != "false") fail(fmt::format("expected true or false, got '{}'", t));
      l.set_i64(i, t == "true");
    } else if (is_unsigned_integer(d)) {
      l.set_u64(i, std::stoull(t));
    } else if (is_integer(d)) {
      l.set_i64(i, std::stoll(t));
    } else if (t.rfind("nan", 0) == 0) {
      uint64_t bits = t == "nan" ? canonical_nan_bits(d) : std::stoull(t.substr(4, t.size() - 5), nullptr, 16);
      std::memcpy(dst, &bits, es);  // little-endian hosts
    } else if (d == DType::float64) {
      l.set_f64(i, lex_.to_double(t));
    } else {
      l.set_f64(i, static_cast<double>(lex_.to_float(t)));  // the printed float is exact in f32, f16 and bf16
    }
  } catch (const std::logic_error&) {
    fail(fmt::format("bad {} constant value '{}'", hlo_dtype_name(d), t));
  }
}

detail::Literal Parser::literal(const Shape& s) {
  if (s.is_tuple) fail("tuple constants are not supported");
  // Each value takes at least one character: a shape larger than the text left is refused before it is allocated.
  if (s.num_elements() > static_cast<int64_t>(lex_.left()))
    fail(fmt::format("constant of shape {} has more values than the text left", s.str()));
  auto lit = detail::Literal::make(s.dtype, s.dims);
  int64_t n = 0, total = lit.size();
  auto rec = [&](auto& self, int64_t depth) -> void {
    if (lex_.try_char('{')) {
      if (depth > s.rank()) fail(fmt::format("constant of shape {} has braces nested {} deep", s.str(), depth + 1));
      if (lex_.try_char('}')) return;
      do self(self, depth + 1);
      while (lex_.try_char(','));
      lex_.expect('}');
      return;
    }
    std::string t = lex_.scalar_token();
    if (n >= total) fail(fmt::format("constant has more than {} values", total));
    set_element(lit, n++, t);
  };
  if (lex_.peek() == ')' && total == 0) return lit;
  rec(rec, 0);
  if (n != total) fail(fmt::format("constant has {} values, its shape {} needs {}", n, s.str(), total));
  return lit;
}

detail::ParamValue Parser::attr_value() {
  char c = lex_.peek();
  if (c == '{') return lex_.int_list('{', '}');
  if (c == '"') return lex_.quoted_string();
  std::string t = lex_.bare_token();
  if (t.empty()) fail("expected an attribute value");
  if (t == "true" || t == "false") return t == "true";
  for (int d = 0; d < kNumDTypes; ++d)
    if (hlo_dtype_name(static_cast<DType>(d)) == t) return static_cast<DType>(d);
  if (t == "inf" || t == "nan" || t == "-inf" || t == "-nan") return lex_.to_double(t);
  if (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-') {
    try {
      if (t.find_first_of(".en") != std::string::npos) return lex_.to_double(t);
      size_t used = 0;
      int64_t v = std::stoll(t, &used);
      if (used == t.size()) return v;
    } catch (const std::logic_error&) {
    }
    fail(fmt::format("bad number '{}'", t));
  }
  return t;
}

void Parser::computation() {
  bool is_entry = lex_.try_word("ENTRY");
  std::string cname = lex_.percent_name();
  if (m_->find_computation(cname)) fail(fmt::format("duplicate computation %{}", cname));
  auto comp = std::make_unique<Computation>();
  comp->name = cname;
  comp->parent = m_;
  m_->reserve_name(cname);
  // The signature repeats what the parameter instructions say; it is read and checked for form only.
  lex_.expect('(');
  if (!lex_.try_char(')')) {
    do {
      lex_.name();
      lex_.expect(':');
      shape(false);
    } while (lex_.try_char(','));
    lex_.expect(')');
  }
  lex_.expect('-');
  lex_.expect('>');
  shape(false);
  lex_.expect('{');
  std::unordered_map<std::string, Instruction*> by_name;
  while (!lex_.try_char('}')) {
    bool is_root = false;
    std::unique_ptr<Instruction> inst = instruction(by_name, is_root);
    inst->parent = comp.get();
    Instruction* raw = inst.get();
    if (raw->opcode == Opcode::kParameter) comp->parameters.push_back(raw);
    if (is_root) {
      if (comp->root) fail(fmt::format("computation %{} has two ROOT instructions", cname));
      comp->root = raw;
    }
    comp->instructions.push_back(std::move(inst));
  }
  if (!comp->root) fail(fmt::format("computation %{} has no ROOT instruction", cname));
  std::stable_sort(comp->parameters.begin(), comp->parameters.end(),
                   [](auto* a, auto* b) { return a->parameter_number < b->parameter_number; });
  if (is_entry) {
    if (m_->entry) fail("two ENTRY computations");
    m_->entry = comp.get();
  }
  m_->computations.push_back(std::move(comp));
}

std::unique_ptr<Instruction> Parser::instruction(std::unordered_map<std::string, Instruction*>& by_name,
                                                 bool& is_root) {
  is_root = lex_.try_word("ROOT");
  auto inst = std::make_unique<Instruction>();
  inst->name = lex_.percent_name();
  if (by_name.count(inst->name)) fail(fmt::format("duplicate instruction %{}", inst->name));
  lex_.expect('=');
  inst->shape = shape(true);
  std::string op = lex_.opcode_word();
  try {
    inst->opcode = opcode_from_name(op);
  } catch (const CompileError&) {
    fail(fmt::format("unknown opcode '{}'", op));
  }
  lex_.expect('(');
  if (inst->opcode == Opcode::kParameter) {
    inst->parameter_number = lex_.integer();
  } else if (inst->opcode == Opcode::kConstant) {
    inst->literal = std::make_shared<detail::Literal>(literal(inst->shape));
  } else if (lex_.peek() != ')') {
    do {
      std::string on = lex_.percent_name();
      auto it = by_name.find(on);
      if (it == by_name.end()) fail(fmt::format("operand %{} is not defined before its use", on));
      inst->operands.push_back(it->second);
    } while (lex_.try_char(','));
  }
  lex_.expect(')');
  std::vector<std::string> called;
  attributes(*inst, called);
  m_->reserve_name(inst->name);
  by_name[inst->name] = inst.get();
  if (!called.empty()) calls_.emplace_back(inst.get(), std::move(called));
  return inst;
}

void Parser::attributes(Instruction& inst, std::vector<std::string>& called) {
  while (lex_.try_char(',')) {
    std::string key = lex_.name();
    lex_.expect('=');
    if (key == "calls") {
      called.push_back(lex_.percent_name());
      while (true) {  // calls=%a, %b: a comma followed by '%' continues the list
        size_t save = lex_.position();
        if (lex_.try_char(',') && lex_.peek() == '%') {
          called.push_back(lex_.percent_name());
          continue;
        }
        lex_.rewind(save);
        break;
      }
      continue;
    }
    if (inst.attrs.has(key)) fail(fmt::format("attribute {} given twice", key));
    if (is_braced_text_attribute(key)) {
      if (lex_.peek() != '{') fail(fmt::format("attribute {} expects a {{...}} value", key));
      std::string text = lex_.braced_text();
      try {  // checked now, so that bad text is a parse error at its line
        if (key == "sharding") HloSharding::parse(text);
        else parse_groups(text);
      } catch (const Error& e) {
        fail(e.what());
      }
      inst.attrs.set(key, text);
      continue;
    }
    inst.attrs.set(key, attr_value());
  }
}

}  // namespace

std::unique_ptr<Module> parse_hlo(std::string_view text) { return Parser(text).module(); }

}  // namespace jitx::hlo
