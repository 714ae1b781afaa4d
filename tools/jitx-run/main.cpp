// jitx-run: runs a StableHLO module exported from JAX on .npy inputs.
//   jitx-run model.mlir --input x.npy --input w.npy --output out.npy [--platform cpu|interpreter]
//            [--benchmark N] [--print-hlo]
// Without --output the results are printed. Exit status 1 with the error's message on failure.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "jitx/import.h"
#include "jitx/jitx.h"
#include "npy.h"

int main(int argc, char** argv) {
  CLI::App app{"jitx-run: run a StableHLO module (jax.jit(f).lower(...).as_text()) on .npy inputs"};
  std::string model, platform;
  std::vector<std::string> inputs, outputs;
  int benchmark = 0;
  bool print_hlo = false;
  app.add_option("model", model, "the module's MLIR text (.mlir)")->required()->check(CLI::ExistingFile);
  app.add_option("-i,--input", inputs, "an argument as .npy, in order (repeat for each)")->check(CLI::ExistingFile);
  app.add_option("-o,--output", outputs, "where to write a result as .npy, in order (repeat for each)");
  app.add_option("--platform", platform, "cpu (default) or interpreter")->check(CLI::IsMember({"cpu", "interpreter"}));
  app.add_option("--benchmark", benchmark, "run N more times and print the time per call")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--print-hlo", print_hlo, "print the optimised HLO module");
  CLI11_PARSE(app, argc, argv);
  if (!platform.empty()) {
    setenv("JITX_PLATFORM", platform.c_str(), 1);
    jitx::config().platform = platform;
  }
  try {
    auto module = jitx::import_stablehlo_file(model);
    std::vector<jitx::Array> args;
    for (auto& p : inputs) args.push_back(jitx_run::read_npy(p));
    if (args.size() != module.in_avals().size()) {
      std::fprintf(stderr, "jitx-run: %s takes %zu argument(s), got %zu --input\n", model.c_str(),
                   module.in_avals().size(), args.size());
      for (auto& a : module.in_avals()) std::fprintf(stderr, "  expects %s\n", a.str().c_str());
      return 1;
    }
    auto compiled = module.compile();
    if (print_hlo) std::printf("%s\n", compiled.as_text().c_str());
    auto results = compiled(args);
    for (auto& r : results) r.block_until_ready();
    if (outputs.size() > results.size()) {
      std::fprintf(stderr, "jitx-run: %zu --output for %zu result(s)\n", outputs.size(), results.size());
      return 1;
    }
    for (size_t k = 0; k < results.size(); ++k) {
      if (k < outputs.size())
        jitx_run::write_npy(outputs[k], results[k]);
      else
        std::cout << "result " << k << ": " << results[k] << "\n";
    }
    if (benchmark > 0) {
      std::vector<double> ms;
      for (int it = 0; it < benchmark; ++it) {
        auto t0 = std::chrono::steady_clock::now();
        auto r = compiled(args);
        for (auto& a : r) a.block_until_ready();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      double mean = 0;
      for (double v : ms) mean += v / static_cast<double>(ms.size());
      std::printf("benchmark: %d calls on %s: min %.4f ms, median %.4f ms, mean %.4f ms\n", benchmark,
                  jitx::default_platform().c_str(), ms.front(), ms[ms.size() / 2], mean);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jitx-run: %s\n", e.what());
    return 1;
  }
  return 0;
}
