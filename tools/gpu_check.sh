#!/usr/bin/env bash
# The CUDA backend's GPU check, in two halves.
#
#   tools/gpu_check.sh pack [build-dir]   here (a machine with LLVM and the CUDA toolkit): packs into gpu_pack/ the
#                                         test binary (built with the cuda tests), libjitx, every shared library they
#                                         need beyond glibc (libLLVM-19 among them) compressed with xz, and libdevice;
#                                         fails if the pack exceeds 60 MiB (the device tool carries 64 MiB in all).
#   tools/gpu_check.sh run                there (the H200 machine, which has no LLVM): unpacks into a temp dir, runs
#                                         the GPU tests ("[gpu]": kernels against the interpreter, the asynchronous
#                                         runtime (cuda_runtime.h: streams, events, pinned copies, a kernel after a
#                                         cross-stream wait) and device_put to cuda:0 and back, the memory-bound
#                                         benchmarks) and the JAX peer (tools/gpu_jax_peer.py), and prints one table.
#                                         ("[cuda_fake]" is not run there: it needs the build tree's fake driver.)
#
# The run half takes one call of the device tool, e.g. run(command="tools/gpu_check.sh run", carry=["gpu_pack"],
# timeout_s=540); it stays under 9 minutes (the tests get 6, JAX 2).
#
# Build for packing: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DJITX_TEST_FILES="cuda_codegen;cuda_gpu"
#                    cmake --build build -j2 --target jitx_tests
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pack="$root/gpu_pack"

case "${1:-}" in
pack)
  build=${2:-$root/build}
  test -x "$build/tests/jitx_tests" || { echo "gpu_check: no $build/tests/jitx_tests (build it first)"; exit 1; }
  rm -rf "$pack" && mkdir -p "$pack/lib" "$pack/bin"
  cp "$build/tests/jitx_tests" "$pack/bin/"
  # Every library the binaries resolve here, except glibc's own (the GPU machine's are newer and compatible).
  libs=$( (ldd "$build/tests/jitx_tests"; ldd "$build"/libjitx.so.0) | awk '$3 ~ /^\// {print $3}' | sort -u |
          grep -Ev '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so')
  for l in $libs; do
    name=$(basename "$l")
    echo "gpu_check: packing $name ($(stat -L -c %s "$l") bytes)"
    xz -T0 "-${JITX_GPU_PACK_XZ:-6}" -c "$l" > "$pack/lib/$name.xz"
  done
  lib=$(ls /usr/local/cuda/nvvm/libdevice/libdevice.10.bc 2>/dev/null || true)
  [ -n "$lib" ] && cp "$lib" "$pack/"
  size=$(du -sb "$pack" | cut -f1)
  echo "gpu_check: gpu_pack/ is $((size / 1048576)) MiB"
  [ "$size" -le $((60 * 1048576)) ] || { echo "gpu_check: over 60 MiB: it will not fit the carry limit"; exit 1; }
  ;;
run)
  test -d "$pack/lib" || { echo "gpu_check: no gpu_pack/ (run 'tools/gpu_check.sh pack' and carry gpu_pack)"; exit 1; }
  work=$(mktemp -d)
  mkdir -p "$work/lib"
  for f in "$pack"/lib/*.xz; do xz -dc "$f" > "$work/lib/$(basename "$f" .xz)"; done
  export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -f "$pack/libdevice.10.bc" ] && export JITX_CUDA_LIBDEVICE="$pack/libdevice.10.bc"
  # cuBLASLt (opened with dlopen): the toolkit's, else the one pip's CUDA wheels put beside JAX.
  if [ -z "${JITX_CUBLASLT_LIBRARY:-}" ] && ! ls /usr/local/cuda/lib64/libcublasLt.so.1[23] >/dev/null 2>&1; then
    lt=$(python3 -c 'import nvidia.cublas; print(list(nvidia.cublas.__path__)[0])' 2>/dev/null || true)
    lt=$(ls "$lt"/lib/libcublasLt.so.1[23] 2>/dev/null | head -1 || true)
    [ -n "$lt" ] && export JITX_CUBLASLT_LIBRARY="$lt"
  fi
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo "no nvidia-smi")
  log="$work/tests.log"
  set +e
  timeout 360 "$pack/bin/jitx_tests" "[gpu]" --durations yes > "$log" 2>&1
  rc=$?
  set -e
  jax="$work/jax.log"
  timeout 120 python3 "$root/tools/gpu_jax_peer.py" > "$jax" 2>&1 || echo "(the JAX peer failed: see below)" >> "$jax"
  echo
  echo "== jitx CUDA backend on: $gpu"
  echo "| check | result |"
  echo "|---|---|"
  grep -E "^[0-9.]+ s: " "$log" | sed -E 's/^([0-9.]+) s: (.*)$/| \2 | ran in \1 s |/' || true
  summary=$(grep -E "All tests passed|test cases?:|assertions" "$log" | tail -1 || true)
  echo "| summary (rc $rc) | ${summary:-no summary: see the log tail} |"
  grep -q "skipped the GPU runs" "$log" && echo "| NOTE | the GPU runs were SKIPPED: $(grep -m1 -A2 'skipped the GPU' "$log" | tr '\n' ' ') |"
  echo
  echo "== memory-bound kernels (jitx), then JAX on the same GPU"
  sed -n '/| kernel (64 MiB f32)/,/^$/p' "$log" | grep '^|' || true
  sed -n '/| jitx on cuda:0 (jit)/,/^$/p' "$log" | grep '^|' || true
  grep '^|' "$jax" || cat "$jax"
  if [ "$rc" -ne 0 ]; then
    echo
    echo "== failures (the log's last 60 lines)"
    tail -60 "$log"
  fi
  rm -rf "$work"
  exit "$rc"
  ;;
*)
  echo "usage: tools/gpu_check.sh pack [build-dir] | run"
  exit 2
  ;;
esac
