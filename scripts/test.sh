#!/usr/bin/env bash
# README command 2: set up the environment with the test extras (litellm included, so the
# web-API backend is tested against the local OpenAI-compatible server) and run the whole suite.
# Versions come from constraints.txt, so a new upstream release cannot break it overnight;
# FOLKSCOPE_CONSTRAINTS=none FOLKSCOPE_VENV=.venv-latest tests the newest releases instead.
# Extra arguments go to pytest (e.g. bash scripts/test.sh -k metrics).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "hf,api,plots,datasets,baselines,essays,dev"
exec "${FOLKSCOPE_VENV:-.venv}/bin/python" -m pytest "$@"
