#!/usr/bin/env bash
# CI step (issue 18): exports the JAX corpus (tools/jax_export_corpus.py, in a virtualenv with pip's jax: a
# temporary one unless JITX_JAX_VENV names one, created there when missing) and runs the [import_corpus] test on
# cpu and interpreter; each fails unless JITX_IMPORT_CORPUS_MIN (default 0.95) of the modules import, run and
# match JAX. The reports (what does not import or match, by op and reason) are printed and left in the corpus
# folder (JITX_CORPUS_DIR, default a temporary folder). Then, when build/jitx-run exists, runs it on the MLP block
# and a training step and compares its .npy output with JAX's. Runs from the repository root after the build
# into build/.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d -t jitx-jax-corpus-XXXXXX)
corpus="${JITX_CORPUS_DIR:-$tmp/corpus}"
venv="${JITX_JAX_VENV:-$tmp/venv}"
start=$(date +%s)
python3 tools/jax_export_corpus.py --out "$corpus" --venv "$venv"
exported=$(date +%s)
status=0
for platform in cpu interpreter; do
  echo "== [import_corpus] on $platform"
  JITX_PLATFORM=$platform JITX_IMPORT_CORPUS="$corpus" ./build/tests/jitx_tests "[import_corpus]" || status=1
done
if [[ -x build/jitx-run ]]; then
  for name in mlp_block train_step; do
    n=$(awk -v m="$name" '$1 == m {print $2}' "$corpus/MANIFEST")
    nout=$(awk -v m="$name" '$1 == m {print $3}' "$corpus/MANIFEST")
    args=()
    paths=()
    for ((k = 0; k < n; k++)); do
      args+=(--input "$corpus/$name.in$k.npy")
      paths+=("$corpus/$name.in$k.npy")
    done
    for platform in cpu interpreter; do
      build/jitx-run "$corpus/$name.mlir" "${args[@]}" --output "$tmp/$name.$platform.npy" --platform "$platform" >/dev/null
      "$venv/bin/python" -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); \
assert a.shape == b.shape and a.dtype == b.dtype and np.allclose(a, b, rtol=1e-4, atol=1e-5), (a, b); \
print('jitx-run', sys.argv[3], 'on', sys.argv[4] + ': output 0 matches JAX')" \
        "$tmp/$name.$platform.npy" "$corpus/$name.out0.npy" "$name" "$platform" || status=1
    done
    # The same through .npz: every input in one archive, every result in another.
    "$venv/bin/python" -c "import numpy as np, sys; np.savez(sys.argv[1], *[np.load(p) for p in sys.argv[2:]])" \
      "$tmp/$name.in.npz" "${paths[@]}"
    build/jitx-run "$corpus/$name.mlir" --input "$tmp/$name.in.npz" --output "$tmp/$name.out.npz" >/dev/null
    "$venv/bin/python" -c "import numpy as np, sys; o = np.load(sys.argv[1]); n = int(sys.argv[4]); \
assert sorted(o.files) == sorted(f'arr_{k}' for k in range(n)), o.files; \
ok = all(np.allclose(o[f'arr_{k}'], np.load(f'{sys.argv[2]}.out{k}.npy'), rtol=1e-4, atol=1e-5) for k in range(n)); \
assert ok; print('jitx-run', sys.argv[3], 'with .npz in and out: all', n, 'outputs match JAX')" \
      "$tmp/$name.out.npz" "$corpus/$name" "$name" "$nout" || status=1
  done
fi
echo "jax_corpus: export $((exported - start)) s, runs $(($(date +%s) - exported)) s; corpus and reports in $corpus"
exit $status
