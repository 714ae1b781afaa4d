// import_stablehlo: StableHLO text -> a module that compiles through jit's pipeline and runs with checked
// arguments.
#include "jitx/import.h"

#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "hlo/ir/hlo.h"
#include "import/stablehlo_import.h"
#include "lowering/lower.h"

namespace jitx {

namespace {
ShapedArray aval_of(const hlo::Shape& s) {
  ShapedArray a;
  a.shape = Shape(s.dims.begin(), s.dims.end());
  a.dtype = s.dtype;
  return a;
}
}  // namespace

ImportedModule import_stablehlo(std::string_view text) {
  std::shared_ptr<hlo::Module> m = import::parse_stablehlo(text);
  std::vector<ShapedArray> in, out;
  for (auto* p : m->entry->parameters) in.push_back(aval_of(p->shape));
  for (auto& s : m->entry->root->shape.tuple_shapes) out.push_back(aval_of(s));
  return ImportedModule(detail::make_module_entry(std::move(m), std::move(in), std::move(out)));
}

ImportedModule import_stablehlo_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) detail::throw_error<RuntimeError>("import_stablehlo_file", "cannot read '{}'", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return import_stablehlo(ss.str());
}

std::string ImportedModule::as_text() const { return detail::print_stablehlo(detail::entry_module(*e_)); }
std::string ImportedModule::as_hlo_text() const { return hlo::print_hlo(detail::entry_module(*e_)); }
const std::vector<ShapedArray>& ImportedModule::in_avals() const { return detail::entry_in_avals(*e_); }
const std::vector<ShapedArray>& ImportedModule::out_avals() const { return detail::entry_out_avals(*e_); }
ImportedCompiled ImportedModule::compile() const {
  detail::compile_module_entry(*e_);
  return ImportedCompiled(e_);
}

const std::vector<ShapedArray>& ImportedCompiled::in_avals() const { return detail::entry_in_avals(*e_); }
const std::vector<ShapedArray>& ImportedCompiled::out_avals() const { return detail::entry_out_avals(*e_); }

std::vector<Array> ImportedCompiled::operator()(const std::vector<Array>& args) const {
  const auto& in = in_avals();
  if (args.size() != in.size())
    detail::throw_error<TypeError>("imported module", "takes {} argument(s), got {}", in.size(), args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    if (args[k].dtype() != in[k].dtype)
      detail::throw_error<TypeError>("imported module", "argument {}: expected dtype {}, got {} (expected {}, got {})",
                                     k, dtype_name(in[k].dtype), dtype_name(args[k].dtype()), in[k].str(),
                                     args[k].aval().str());
    if (args[k].shape() != in[k].shape)
      detail::throw_error<ShapeError>("imported module", "argument {}: expected shape {}, got {}", k, in[k].str(),
                                      args[k].aval().str());
  }
  return detail::execute_module_entry(*e_, args);
}

}  // namespace jitx
