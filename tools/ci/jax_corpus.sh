#!/usr/bin/env bash
# CI step (issue 18): exports the JAX corpus (tools/jax_export_corpus.py: a virtualenv with pip's jax, created in
# a temporary folder unless JITX_JAX_VENV names one) and runs the [import_corpus] test on cpu and interpreter.
# Each platform's test fails unless JITX_IMPORT_CORPUS_MIN (default 0.95) of the modules import, run and match
# JAX; the reports (what does not import or match, by op and reason) are printed and left in the corpus folder
# (JITX_CORPUS_DIR, default a temporary folder). Runs from the repository root after the build into build/.
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus="${JITX_CORPUS_DIR:-$(mktemp -d -t jitx-jax-corpus-XXXXXX)}"
venv_args=()
if [[ -n "${JITX_JAX_VENV:-}" ]]; then venv_args=(--venv "$JITX_JAX_VENV"); fi
start=$(date +%s)
python3 tools/jax_export_corpus.py --out "$corpus" "${venv_args[@]}"
exported=$(date +%s)
status=0
for platform in cpu interpreter; do
  echo "== [import_corpus] on $platform"
  JITX_PLATFORM=$platform JITX_IMPORT_CORPUS="$corpus" ./build/tests/jitx_tests "[import_corpus]" || status=1
done
echo "jax_corpus: export $((exported - start)) s, runs $(( $(date +%s) - exported )) s; corpus and reports in $corpus"
exit $status
