#!/usr/bin/env bash
# Builds jitx and its Catch2 suite with AddressSanitizer + UndefinedBehaviorSanitizer (or ThreadSanitizer) into
# build-<kind>/ and runs the suite (or the tags given). Usage: tools/sanitize.sh asan|tsan [catch2 test spec...]
# Suppressions: tools/sanitizer_suppressions/<kind>.supp (one reason per line).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?asan or tsan}; shift
case "$kind" in
  asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined" ;;
  tsan) flags="-fsanitize=thread" ;;
  *) echo "tools/sanitize.sh: unknown kind $kind (asan or tsan)" >&2; exit 2 ;;
esac
cmake -S . -B "build-$kind" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITX_BUILD_BENCHMARKS=OFF -DJITX_BUILD_EXAMPLES=OFF \
  -DCMAKE_CXX_FLAGS="-g -fno-omit-frame-pointer $flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
cmake --build "build-$kind" -j2 --target jitx_tests
supp="$PWD/tools/sanitizer_suppressions"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
[ -f "$supp/lsan.supp" ] && export LSAN_OPTIONS="suppressions=$supp/lsan.supp"
[ -f "$supp/tsan.supp" ] && export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1"
"./build-$kind/tests/jitx_tests" "$@"
