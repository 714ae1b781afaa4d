#!/usr/bin/env bash
# jitx under the sanitizers and libFuzzer (clang-19; README "Sanitizers and fuzzing"). Usage:
#   tools/sanitize.sh asan [catch2 spec...]  the Catch2 suite under AddressSanitizer + UndefinedBehaviorSanitizer
#                                            (build-asan/; every UBSan report is printed, the run goes on);
#                                            JITX_ASAN_TEST_FILES="stem;stem" builds only those test files
#   tools/sanitize.sh tsan [--all] [spec...] the runtime, jit-cache, disk-cache, stress and threading test files
#                                            (or, with --all, every test file) under ThreadSanitizer (build-tsan/)
#   tools/sanitize.sh fuzz [seconds]         each libFuzzer target of fuzz/ for that long (60 s) from its seeds
#   tools/sanitize.sh ci                     what .ci/run runs: asan over the test files of $ci_asan_files
#                                            (halting at the first report), the fuzzers for JITX_FUZZ_SECONDS (30)
#                                            each; tsan too with JITX_CI_TSAN=1; each step's time printed
# The builds: the library at -O1 with line tables, the test files at -O0, nothing else (no examples/benchmarks).
# Suppressions, one reason per line: tools/sanitizers/*.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
supp=$root/tools/sanitizers
cxx=${JITX_SANITIZE_CXX:-clang++-19}
# The test files whose code runs on several threads: the runtime (devices, streams, events), the jit cache,
# the disk cache (concurrent writers), the stress test, and the compile threads.
tsan_files="cpu_runtime;jit;cache_bounds;disk_cache;stress;compile_time"
halt=0
# CI's ASan + UBSan selection (a subset: the whole suite does not fit in CI's time; README "Sanitizers and
# fuzzing"): the API and bad-input walks, the error catalogue, random, the stress test, the runtime and jit.
ci_asan_files="api_walk;bad_input_walk;error_catalogue;random;stress;cpu_runtime;jit"

configure() {  # dir, extra cmake arguments...
  local dir=$1; shift
  # MPI is off here: the sanitized runs cover the one-process library (the MPI tests run under mpirun in ctest),
  # and FindMPI's C probe would run the C compiler (gcc: it refuses clang's fuzzer flags). Naming a C compiler
  # instead makes LLVM's FindFFI probe in C, which the project does not enable.
  cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER="$cxx" -DJITX_ENABLE_MPI=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DCMAKE_CXX_FLAGS= \
    -DCMAKE_EXE_LINKER_FLAGS= -DCMAKE_SHARED_LINKER_FLAGS= \
    -DJITX_BUILD_BENCHMARKS=OFF -DJITX_BUILD_EXAMPLES=OFF -DJITX_BUILD_TESTS=ON -DJITX_TEST_COMPILE_OPTIONS=-O0 \
    "$@" >/dev/null
}

asan_env() {
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"  # the tests ask for impossible sizes on purpose
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="suppressions=$supp/ubsan.supp:print_stacktrace=1:halt_on_error=$halt:report_error_type=1"
}

run_asan() {
  configure build-asan -DJITX_BUILD_FUZZERS=ON -DJITX_TEST_FILES="${JITX_ASAN_TEST_FILES:-}"
  cmake --build build-asan -j2 --target jitx_tests
  asan_env
  local log=build-asan/asan-run.log
  ./build-asan/tests/jitx_tests "$@" 2>&1 | tee "$log"
  if grep -q "runtime error:" "$log"; then
    echo "tools/sanitize.sh: UndefinedBehaviorSanitizer reported errors (see $log)" >&2
    return 1
  fi
}

run_tsan() {
  local files=$tsan_files
  if [ "${1:-}" = "--all" ]; then files=""; shift; fi
  local f="-fno-omit-frame-pointer -fsanitize=thread"
  configure build-tsan -DJITX_BUILD_FUZZERS=OFF -DJITX_TEST_FILES="$files" -DCMAKE_CXX_FLAGS="$f" \
    -DCMAKE_EXE_LINKER_FLAGS="$f" -DCMAKE_SHARED_LINKER_FLAGS="$f"
  cmake --build build-tsan -j2 --target jitx_tests
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=4"
  ./build-tsan/tests/jitx_tests "$@"
}

run_fuzz() {
  local seconds=${1:-60}
  configure build-asan -DJITX_BUILD_FUZZERS=ON
  cmake --build build-asan -j2 --target fuzz_hlo_parser fuzz_stablehlo_import fuzz_executable_file
  halt=1
  asan_env
  for t in hlo_parser stablehlo_import executable_file; do
    # New inputs go to a scratch corpus; the checked-in seeds (fuzz/corpus/<target>) are only read.
    local work=build-asan/fuzz-corpus/$t
    mkdir -p "$work" build-asan/fuzz-artifacts
    echo "== fuzz_$t: $seconds s"
    ./build-asan/fuzz/fuzz_$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix=build-asan/fuzz-artifacts/"$t"- "$work" "fuzz/corpus/$t"
  done
}

timed() {  # name, command...
  local name=$1; shift
  local t0=$SECONDS
  "$@"
  echo "tools/sanitize.sh: step '$name' took $((SECONDS - t0)) s"
}

kind=${1:?asan, tsan, fuzz or ci}; shift
case "$kind" in
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  fuzz) run_fuzz "$@" ;;
  ci)
    halt=1
    JITX_ASAN_TEST_FILES=$ci_asan_files timed "asan+ubsan subset" run_asan
    timed "fuzzers" run_fuzz "${JITX_FUZZ_SECONDS:-30}"
    if [ "${JITX_CI_TSAN:-0}" = 1 ]; then timed "tsan tests" run_tsan; fi
    ;;
  *) echo "tools/sanitize.sh: unknown kind $kind (asan, tsan, fuzz or ci)" >&2; exit 2 ;;
esac
