#!/usr/bin/env bash
# jitx under the sanitizers and libFuzzer (clang-19; README "Sanitizers and fuzzing"). Usage:
#   tools/sanitize.sh asan [catch2 spec...]  the Catch2 suite under AddressSanitizer + UndefinedBehaviorSanitizer
#                                            (build-asan/; every UBSan report is printed, the run goes on);
#                                            JITX_ASAN_TEST_FILES="stem;stem" builds only those test files
#   tools/sanitize.sh asan-ctest             the same, every test case its own CTest entry, two at a time (~20 min)
#   tools/sanitize.sh asan-ci                CI's ASan + UBSan step alone (run_asan_ci, below)
#   tools/sanitize.sh tsan [--all] [spec...] the runtime, jit-cache, disk-cache, stress and threading test files
#                                            (or, with --all, every test file) under ThreadSanitizer (build-tsan/)
#   tools/sanitize.sh tsan-ctest             every test file under TSan (whole library), as CTest entries (~16 min)
#   tools/sanitize.sh tsan-ci [spec...]      what CI runs of TSan (build-tsan-ci/): the same test files, with only the
#                                            threaded library sources instrumented (gcc; everything else is compiled
#                                            as the normal Release build is, so it comes from ccache)
#   tools/sanitize.sh fuzz [seconds]         each libFuzzer target of fuzz/ for that long (60 s) from its seeds
#   tools/sanitize.sh ci                     what .ci/run runs: asan over the test files of $ci_asan_files in two
#                                            processes side by side (run_asan_ci)
#                                            (halting at the first report), the fuzzers for JITX_FUZZ_SECONDS (20)
#                                            each, then tsan-ci; each step's time printed
# The builds: the library at -O1 with line tables, the test files at -O0, nothing else (no examples/benchmarks).
# Suppressions, one reason per line: tools/sanitizers/*.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
supp=$root/tools/sanitizers
cxx=${JITX_SANITIZE_CXX:-clang++-19}
# The test files whose code runs on several threads: the runtime (devices, streams, events), the jit cache,
# the disk cache (concurrent writers), the stress test, the compile threads, and SPMD (a thread per device).
tsan_files="cpu_runtime;jit;cache_bounds;disk_cache;stress;compile_time;spmd_runtime;spmd_ir;async_collectives"
# The library sources tsan-ci instruments (regexes on the path from the source dir): those whose code runs on
# several threads or hands data between them: the runtime (devices, streams, events, sharded buffers), the
# compilation cache, dispatch (the eager op cache, execution, SPMD), the jit entry points and their caches
# (jit, jit_spmd, device, debug's sinks, random's sampler cache), Array's methods, the buffers' live counts,
# traces, host callbacks, the log, the communicator and the queue of asynchronous collectives, the CPU backend's
# executor, ORC JIT, kernel launch, the thread pool (thread_pool.cpp; eigen_dot.cpp keeps Eigen's for its
# contractions), row groups, the interpreter backend and the interpreter's collectives threads. README "Sanitizers
# and fuzzing".
tsan_ci_sources="^src/runtime/;^src/cache/;^src/dispatch/;^src/api/(jit|jit_spmd|device|debug|random)[.]cpp$"
tsan_ci_sources+=";^src/ops/array[.]cpp$"
tsan_ci_sources+=";^src/core/(storage|trace|host_callback|log|config|communicator|collective_queue)[.]cpp$"
tsan_ci_sources+=";^src/backends/cpu/(cpu_backend|cpu_executable|kernel_launch|orc_jit|eigen_dot|thread_pool|row_groups)[.]cpp$"
tsan_ci_sources+=";^src/backends/interpreter/;^src/hlo/evaluator/evaluator_collectives[.]cpp$"
halt=0
# CI's ASan + UBSan selection (a subset: the whole suite does not fit in CI's time; README "Sanitizers and
# fuzzing"): the API and bad-input walks, the error catalogue, random, the stress test, the runtime and jit.
ci_asan_files="api_walk;bad_input_walk;error_catalogue;random;stress;cpu_runtime;jit"

configure() {  # dir, extra cmake arguments...
  local dir=$1; shift
  # MPI is off here: the sanitized runs cover the one-process library (the MPI tests run under mpirun in ctest).
  # No C compiler is named: with MPI off C is never enabled, and a CMAKE_C_COMPILER defined without it makes
  # LLVM's FindFFI (find_package(LLVM)) call check_c_source_compiles, which fails at configure.
  # JITX_SANITIZE_CUDA=OFF (what ci sets) leaves the CUDA backend out: none of CI's sanitized test files use it.
  cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER="$cxx" -DJITX_ENABLE_MPI=OFF \
    -DJITX_ENABLE_CUDA="${JITX_SANITIZE_CUDA:-ON}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DCMAKE_CXX_FLAGS= \
    -DCMAKE_EXE_LINKER_FLAGS= -DCMAKE_SHARED_LINKER_FLAGS= \
    -DJITX_BUILD_BENCHMARKS=OFF -DJITX_BUILD_EXAMPLES=OFF -DJITX_BUILD_TESTS=ON -DJITX_TEST_COMPILE_OPTIONS=-O0 \
    -DCMAKE_UNITY_BUILD="${JITX_SANITIZE_UNITY:-ON}" -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
    "$@" >/dev/null
}

# The sanitized builds compile 16 sources as one (CMake's unity build): the headers (LLVM's, the library's) are
# parsed once per 16 files, which more than halves a cold ASan build here. Two sources that define the same
# file-local name (or a file-scope `using namespace` that hides a later file's name) break it: then this says
# so and builds each source alone (slower, but CI stays right); rename the name (see git log for examples).
build_sanitized() {  # dir, targets...
  local dir=$1; shift
  if cmake --build "$dir" -j2 --target "$@"; then return 0; fi
  echo "tools/sanitize.sh: the unity build of $dir failed; building each source alone" >&2
  cmake -S . -B "$dir" -DCMAKE_UNITY_BUILD=OFF >/dev/null
  cmake --build "$dir" -j2 --target "$@"
}

asan_env() {
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"  # the tests ask for impossible sizes on purpose
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="suppressions=$supp/ubsan.supp:print_stacktrace=1:halt_on_error=$halt:report_error_type=1"
}

run_asan() {
  configure build-asan -DJITX_BUILD_FUZZERS=ON -DJITX_TEST_FILES="${JITX_ASAN_TEST_FILES:-}"
  build_sanitized build-asan jitx_tests
  asan_env
  local log=build-asan/asan-run.log
  ./build-asan/tests/jitx_tests "$@" 2>&1 | tee "$log"
  if grep -q "runtime error:" "$log"; then
    echo "tools/sanitize.sh: UndefinedBehaviorSanitizer reported errors (see $log)" >&2
    return 1
  fi
}

# CI's ASan + UBSan run: the test files of $ci_asan_files in two processes side by side (two cores), each halting
# at its first report; both logs are printed. The public-function walk (api_walk_test.cpp) was 6 of the 7.4 minutes
# of running under ASan here, so each process runs half of it (its hidden half test cases), and the second
# process the other files too.
run_asan_ci() {
  configure build-asan -DJITX_BUILD_FUZZERS=ON -DJITX_TEST_FILES="$ci_asan_files"
  build_sanitized build-asan jitx_tests
  asan_env
  local rc1=0 rc2=0
  local coverage="api walk: every public jnp/lax/nn/linalg/random function has an entry in the table"
  ./build-asan/tests/jitx_tests -# "[api_walk_half_0],$coverage" >build-asan/asan-run-1.log 2>&1 &
  local pid=$!
  ./build-asan/tests/jitx_tests -# "[api_walk_half_1],~[#api_walk_test]" >build-asan/asan-run-2.log 2>&1 || rc2=$?
  wait "$pid" || rc1=$?
  for k in 1 2; do
    echo "== build-asan/asan-run-$k.log"
    tail -n 40 "build-asan/asan-run-$k.log"
  done
  if grep -q "runtime error:" build-asan/asan-run-1.log build-asan/asan-run-2.log; then
    echo "tools/sanitize.sh: UndefinedBehaviorSanitizer reported errors (build-asan/asan-run-*.log)" >&2
    return 1
  fi
  if [ "$rc1" != 0 ] || [ "$rc2" != 0 ]; then
    echo "tools/sanitize.sh: the ASan run failed (exit codes $rc1 and $rc2; build-asan/asan-run-*.log)" >&2
    return 1
  fi
}

# Every test file under ASan + UBSan as CTest entries, two at a time (each test case in its own process, so a crash
# or leak names its case): 581 entries, ~20 min on 2 cores. UBSan reports are collected from CTest's log.
run_asan_ctest() {
  configure build-asan -DJITX_BUILD_FUZZERS=ON -DJITX_TEST_FILES=
  build_sanitized build-asan jitx_tests
  asan_env
  ctest --test-dir build-asan -j2 --timeout 3000 -E "install_consumer|subdir_and_cli|compile_fail|check_" \
    --output-on-failure
  if grep -q "runtime error:" build-asan/Testing/Temporary/LastTest.log; then
    echo "tools/sanitize.sh: UndefinedBehaviorSanitizer reported errors (build-asan/Testing/Temporary/LastTest.log)" >&2
    return 1
  fi
}

run_tsan() {
  local files=$tsan_files
  if [ "${1:-}" = "--all" ]; then files=""; shift; fi
  local f="-fno-omit-frame-pointer -fsanitize=thread"
  configure build-tsan -DJITX_BUILD_FUZZERS=OFF -DJITX_TEST_FILES="$files" -DCMAKE_CXX_FLAGS="$f" \
    -DCMAKE_EXE_LINKER_FLAGS="$f" -DCMAKE_SHARED_LINKER_FLAGS="$f"
  build_sanitized build-tsan jitx_tests
  tsan_env
  ./build-tsan/tests/jitx_tests "$@"
}

# Every test file under ThreadSanitizer, the whole library instrumented, as CTest entries two at a time (~16 min).
run_tsan_ctest() {
  local f="-fno-omit-frame-pointer -fsanitize=thread"
  configure build-tsan -DJITX_BUILD_FUZZERS=OFF -DJITX_TEST_FILES= -DCMAKE_CXX_FLAGS="$f" \
    -DCMAKE_EXE_LINKER_FLAGS="$f" -DCMAKE_SHARED_LINKER_FLAGS="$f"
  build_sanitized build-tsan jitx_tests
  tsan_env
  local norand=()
  if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
    norand=(setarch "$(uname -m)" -R)
  fi
  "${norand[@]}" ctest --test-dir build-tsan -j2 --timeout 3000 -E "install_consumer|subdir_and_cli|compile_fail|check_" \
    --output-on-failure
}

tsan_env() {
  # allocator_may_return_null: the tests ask for impossible sizes on purpose (a RuntimeError, not an abort)
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=4:allocator_may_return_null=1"
}

# ThreadSanitizer on part of the library, with the normal build's compiler and flags for everything else (README
# "Sanitizers and fuzzing"): the uninstrumented objects are ccache hits of the normal build (.ci/run builds it just
# before), so only the instrumented sources and the test files are compiled. The test files are instrumented too
# (the jit's templates in include/jitx are instantiated in them).
run_tsan_ci() {
  cmake -S . -B build-tsan-ci -DCMAKE_BUILD_TYPE=Release -DJITX_BUILD_BENCHMARKS=OFF -DJITX_BUILD_EXAMPLES=OFF \
    -DJITX_BUILD_TESTS=ON -DJITX_TEST_FILES="$tsan_files" -DJITX_TSAN_SOURCES="$tsan_ci_sources" \
    -DJITX_TEST_COMPILE_OPTIONS="-fsanitize=thread;-O1;-g1" >/dev/null
  cmake --build build-tsan-ci -j2 --target jitx_tests
  tsan_env
  # Without address-space randomisation: some kernels' mmap randomisation (vm.mmap_rnd_bits > 28) places
  # mappings where gcc 12's TSan runtime does not expect them ("unexpected memory mapping").
  local norand=()
  if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
    norand=(setarch "$(uname -m)" -R)
  fi
  # The canary first: a deliberate race in a test file must be reported, or the sanitizer is not on.
  "${norand[@]}" ./build-tsan-ci/tests/jitx_tests "[.tsan_canary]" >build-tsan-ci/canary.log 2>&1 || true
  if ! grep -q "ThreadSanitizer: data race" build-tsan-ci/canary.log; then
    echo "tools/sanitize.sh: the TSan canary was not reported (build-tsan-ci/canary.log)" >&2
    return 1
  fi
  if [ $# -gt 0 ]; then
    "${norand[@]}" ./build-tsan-ci/tests/jitx_tests "$@"
  else  # both platforms (the interpreter has its own collectives threads)
    "${norand[@]}" ./build-tsan-ci/tests/jitx_tests
    JITX_PLATFORM=interpreter "${norand[@]}" ./build-tsan-ci/tests/jitx_tests
  fi
}

run_fuzz() {
  local seconds=${1:-60}
  configure build-asan -DJITX_BUILD_FUZZERS=ON
  build_sanitized build-asan fuzz_hlo_parser fuzz_stablehlo_import fuzz_executable_file
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

kind=${1:?asan, asan-ctest, asan-ci, tsan, tsan-ctest, tsan-ci, fuzz or ci}; shift
case "$kind" in
  asan) run_asan "$@" ;;
  asan-ctest) run_asan_ctest ;;
  asan-ci) halt=1; export JITX_SANITIZE_CUDA=OFF; run_asan_ci ;;
  tsan) run_tsan "$@" ;;
  tsan-ctest) run_tsan_ctest ;;
  tsan-ci) run_tsan_ci "$@" ;;
  fuzz) run_fuzz "$@" ;;
  ci)
    halt=1
    export JITX_SANITIZE_CUDA=OFF
    timed "asan+ubsan subset" run_asan_ci
    timed "fuzzers" run_fuzz "${JITX_FUZZ_SECONDS:-20}"
    timed "tsan (partly instrumented)" run_tsan_ci
    ;;
  *) echo "tools/sanitize.sh: unknown kind $kind (asan, asan-ctest, asan-ci, tsan, tsan-ctest, tsan-ci, fuzz or ci)" >&2
     exit 2 ;;
esac
