// jitx-run: runs a StableHLO module exported from JAX on .npy/.npz inputs.
//   jitx-run model.mlir --input x.npy --input w.npy --output out.npy [--platform cpu|interpreter]
//            [--benchmark N] [--print-hlo]
// An --input .npz gives all its arrays as arguments, in the archive's order (numpy.savez(f, x, w): x, then w);
// `p.npz:w` gives only its array `w`. An --output .npy takes the next result; an --output .npz takes every result
// not yet written, named arr_0, arr_1, ... by result number (as numpy.savez names positional arrays).
// Without --output the results are printed. Exit status 1 with the error's message on failure.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "jitx/import.h"
#include "jitx/io.h"
#include "jitx/jitx.h"

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `p.npz:name` -> {"p.npz", "name"}; anything else -> {path, ""}.
std::pair<std::string, std::string> split_member(const std::string& spec) {
  size_t colon = spec.rfind(':');
  if (colon != std::string::npos && !std::filesystem::exists(spec) && ends_with(spec.substr(0, colon), ".npz"))
    return {spec.substr(0, colon), spec.substr(colon + 1)};
  return {spec, ""};
}

void read_input(const std::string& spec, std::vector<jitx::Array>& args) {
  auto [path, member] = split_member(spec);
  if (!ends_with(path, ".npz")) {
    args.push_back(jitx::load(path));
    return;
  }
  jitx::NamedArrays items = jitx::load_npz_items(path);
  if (member.empty()) {
    for (auto& [name, a] : items) args.push_back(a);
    return;
  }
  for (auto& [name, a] : items)
    if (name == member) {
      args.push_back(a);
      return;
    }
  std::string names;
  for (auto& [name, a] : items) names += (names.empty() ? "" : ", ") + name;
  throw jitx::IOError(path + " has no array '" + member + "' (it has: " + names + ")");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"jitx-run: run a StableHLO module (jax.jit(f).lower(...).as_text()) on .npy/.npz inputs"};
  std::string model, platform;
  std::vector<std::string> inputs, outputs;
  int benchmark = 0;
  bool print_hlo = false;
  app.add_option("model", model, "the module's MLIR text (.mlir)")->required()->check(CLI::ExistingFile);
  app.add_option("-i,--input", inputs,
                 "arguments, in order (repeat): x.npy (one), p.npz (all its arrays in order), p.npz:w (one of them)")
      ->check([](const std::string& spec) {
        return std::filesystem::exists(split_member(spec).first) ? std::string() : "no such file: " + spec;
      });
  app.add_option("-o,--output", outputs,
                 "where to write results, in order (repeat): y.npy (the next result), out.npz (every remaining one)");
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
    for (auto& p : inputs) read_input(p, args);
    if (args.size() != module.in_avals().size()) {
      std::fprintf(stderr, "jitx-run: %s takes %zu argument(s), got %zu from --input\n", model.c_str(),
                   module.in_avals().size(), args.size());
      for (auto& a : module.in_avals()) std::fprintf(stderr, "  expects %s\n", a.str().c_str());
      return 1;
    }
    auto compiled = module.compile();
    if (print_hlo) std::printf("%s\n", compiled.as_text().c_str());
    auto results = compiled(args);
    for (auto& r : results) r.block_until_ready();
    size_t next = 0;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const std::string& out = outputs[k];
      if (ends_with(out, ".npz")) {
        if (k + 1 != outputs.size()) throw jitx::Error("an --output .npz takes every remaining result: " +
                                                            out + " must be the last --output");
        jitx::NamedArrays named;
        for (; next < results.size(); ++next) named.emplace_back("arr_" + std::to_string(next), results[next]);
        jitx::savez(out, named);
      } else {
        if (next >= results.size()) {
          std::fprintf(stderr, "jitx-run: %zu --output for %zu result(s)\n", outputs.size(), results.size());
          return 1;
        }
        jitx::save(out, results[next++]);
      }
    }
    if (outputs.empty())
      for (size_t k = 0; k < results.size(); ++k) std::cout << "result " << k << ": " << results[k] << "\n";
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
