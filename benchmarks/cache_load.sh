#!/usr/bin/env bash
# Compile time against persistent-cache load time for the MLP block (examples/mlp_block, issue 18's 5 ms target):
# for each of N repetitions, a fresh cache directory, one process that compiles and stores, then one that loads.
# Prints a markdown table of medians from the JITX_LOG_COMPILES lines (the times jitx itself measures):
#   compiled: the whole jit compile (trace + lower + HLO passes + LLVM);
#   first load in a new process: reading, checking and linking the entry (what replaces LLVM), including the
#     start of LLVM's JIT, which the first load in a process pays;
#   warm start: that first call's whole compile step (trace + lower + HLO passes + load);
#   later loads in that process: the example's further fresh jit objects loading the same entry.
# Usage: benchmarks/cache_load.sh [N] (default 7), after the build into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-7}
exe=build/examples/mlp_block
tmp=$(mktemp -d -t jitx-cache-load-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/rows"
for ((i = 0; i < n; i++)); do
  dir="$tmp/cache$i"
  first=$(JITX_COMPILATION_CACHE_DIR=$dir JITX_LOG_COMPILES=1 JITX_PLATFORM=cpu "$exe" 2>&1 >/dev/null)
  second=$(JITX_COMPILATION_CACHE_DIR=$dir JITX_LOG_COMPILES=1 JITX_PLATFORM=cpu "$exe" 2>&1 >/dev/null)
  c=$(grep -o "Compiled 'block' for .* in [0-9.]* ms" <<<"$first" | head -1 | grep -o "in [0-9.]* ms" | grep -o "[0-9.]*")
  loads=$(grep -o "loaded from cache ([0-9.]* ms)" <<<"$second" | grep -o "[0-9][0-9.]*")
  l=$(head -1 <<<"$loads")
  later=$(tail -n +2 <<<"$loads" | sort -g | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "nan"}')
  t=$(grep -o "(trace [0-9.]* ms, lower [0-9.]* ms, hlo passes and load [0-9.]* ms)" <<<"$second" | head -1 |
      grep -o "[0-9][0-9.]*" | awk '{s += $1} END {print s}')
  [[ -n "$c" && -n "$l" && -n "$t" ]] || { echo "cache_load: run $i did not compile then load:"; echo "$second"; exit 1; }
  echo "$c $l $t $later" >> "$tmp/rows"
done
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mc=$(awk '{print $1}' "$tmp/rows" | median)
ml=$(awk '{print $2}' "$tmp/rows" | median)
mt=$(awk '{print $3}' "$tmp/rows" | median)
ml2=$(awk '{print $4}' "$tmp/rows" | median)
maxl=$(awk '{print $2}' "$tmp/rows" | sort -g | tail -1)
echo "| workload | runs | compiled (ms) | first load in a new process (ms) | worst first load (ms) | warm start (ms) | later loads in that process (ms) | compile / first load |"
echo "|---|---|---|---|---|---|---|---|"
awk -v n="$n" -v c="$mc" -v l="$ml" -v w="$maxl" -v t="$mt" -v l2="$ml2" \
  'BEGIN {printf "| mlp_block f32[64,128]x[128,128] (examples/mlp_block) | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.1fx |\n", n, c, l, w, t, l2, c / l}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
