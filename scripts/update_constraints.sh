#!/usr/bin/env bash
# Move the tested versions forward: install the newest releases into a separate venv
# (default .venv-latest), run the whole suite there, and only if it passes write their
# versions to constraints.txt. Extra arguments go to pytest.
#   bash scripts/update_constraints.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${FOLKSCOPE_VENV:-.venv-latest}"
FOLKSCOPE_VENV="$venv" FOLKSCOPE_CONSTRAINTS=none bash scripts/test.sh "$@"
{
  echo "# Tested versions: README commands 1 and 2 install with these (pip -c)."
  echo "# Written by scripts/update_constraints.sh after the whole suite passed on them"
  echo "# ($("$venv/bin/python" -c 'import platform; print("Python", platform.python_version(), platform.system(), platform.machine())'), $(date -u +%Y-%m-%d))."
  echo "# torch is left to FOLKSCOPE_TORCH_SPEC (default torch==2.13.0). Test against the newest"
  echo "# releases instead with FOLKSCOPE_CONSTRAINTS=none (see README)."
  "$venv/bin/python" -m pip freeze --exclude-editable --disable-pip-version-check | grep -v -i -E '^(torch|folkscope)=='
} > constraints.txt.tmp
mv constraints.txt.tmp constraints.txt
echo "constraints.txt updated from $venv"
