#!/usr/bin/env bash
# README command 2: set up the environment with the test extras (litellm included, so the
# web-API backend is tested against the local OpenAI-compatible server; ray, so --data-parallel
# and study plans are tested on a local cluster; yaml, so YAML study plans are read) and run the whole suite.
# Versions come from constraints.txt, so a new upstream release cannot break it overnight;
# FOLKSCOPE_CONSTRAINTS=none FOLKSCOPE_VENV=.venv-latest tests the newest releases instead.
# Extra arguments go to pytest (e.g. bash scripts/test.sh -k metrics).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "hf,api,ray,plots,datasets,baselines,essays,yaml,docs,wandb,mlflow,lmeval,dev"
# folktexts 0.7.1, the parity tests' oracle (tests/parity): beside the venv, not in it (its console scripts
# would collide with ours), without its dependencies (it runs on the venv's torch and transformers).
oracle="${FOLKSCOPE_ORACLE_DIR:-.oracle}"
if [ ! -f "$oracle/folktexts/__init__.py" ]; then
  "${FOLKSCOPE_VENV:-.venv}/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --target "$oracle" \
    -r tests/parity/oracle.txt
fi
export FOLKSCOPE_ORACLE_DIR="$oracle"
# The leaderboard's browser tests drive Debian's chromium package: installed here when we can (root
# with apt, as in CI); otherwise those tests are skipped and say why.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null) \
    || echo "scripts/test.sh: could not install chromium; the browser tests will be skipped" >&2
fi
# Lint and layout first (pyproject's [tool.ruff]): a mis-sorted import or hand-kept layout fails in seconds, not after the suite.
"${FOLKSCOPE_VENV:-.venv}/bin/ruff" check src tests benchmarks scripts
"${FOLKSCOPE_VENV:-.venv}/bin/ruff" format --check src tests benchmarks scripts
# Two workers (the machine's two cores), each taking whole test files in order: a file's tests may build on
# each other (the docs examples read the run folders earlier commands wrote), and the suite fits its 20 minutes.
exec "${FOLKSCOPE_VENV:-.venv}/bin/python" -m pytest -n 2 --dist loadfile "$@"
