// The interpreter backend: executables that run the reference evaluator on a device's stream.
#include "hlo/evaluator/evaluator.h"
#include "runtime/runtime.h"

#include <cstring>

namespace jitx::runtime {
namespace {

class InterpreterExecutable : public Executable {
 public:
  std::vector<std::shared_ptr<Buffer>> execute(std::span<const std::shared_ptr<Buffer>> args, Device* device) override {
    const hlo::Shape& result = module->entry->root->shape;
    JITX_ASSERT(result.is_tuple, "entry computation must return a tuple");
    std::vector<std::shared_ptr<Buffer>> outs;
    for (auto& s : result.tuple_shapes) outs.push_back(Buffer::pending(s.dtype, s.dims, device));
    std::vector<std::shared_ptr<Buffer>> ins(args.begin(), args.end());
    auto mod = module;
    device->stream.enqueue([mod, ins, outs] {
      try {
        std::vector<detail::Literal> lits;
        for (auto& b : ins) lits.push_back(b->literal());  // waits on each input's event
        evaluator::Value v = evaluator::evaluate(*mod, lits);
        for (size_t i = 0; i < outs.size(); ++i) {
          auto& lit = v.tuple.at(i).array;
          // Outputs own their storage: a result that aliases an input (a reshape) is copied.
          bool aliases = false;
          for (auto& b : ins) aliases = aliases || b->storage == lit.storage;
          if (aliases) {
            auto copy = detail::Literal::make(lit.dtype, lit.dims);
            std::memcpy(copy.data(), lit.data(), lit.nbytes());
            outs[i]->storage = copy.storage;
          } else {
            outs[i]->storage = lit.storage;
          }
          outs[i]->ready->set();
        }
      } catch (...) {
        for (auto& o : outs) o->ready->set_error(std::current_exception());
      }
    });
    return outs;
  }
};

class InterpreterBackend : public Backend {
 public:
  std::string name() const override { return "interpreter"; }
  using Backend::compile;
  // Donation is ignored: the reference evaluator allocates every result.
  std::shared_ptr<Executable> compile(std::shared_ptr<const hlo::Module> module, const CompileOptions&) override {
    hlo::verify(*module);
    auto e = std::make_shared<InterpreterExecutable>();
    e->module = std::move(module);
    return e;
  }
};
}  // namespace

std::unique_ptr<Backend> make_interpreter_backend() { return std::make_unique<InterpreterBackend>(); }
namespace {
const bool kBackendRegistered = register_backend("interpreter", &make_interpreter_backend);
}  // namespace

}  // namespace jitx::runtime
