"""The round trip through the real lm-evaluation-harness on a tiny random-initialised model.

folkscope exports a risk run as an lm-eval task; ``lm_eval`` (its own CLI,
its own batching and tokenization) scores it with ``--log_samples``; the
import turns the log back into a run. Its risk scores must be those of
folkscope's own engine on the same model to 1e-4 (the two batch and pad
differently, so float32 sums may differ in the last digits).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import build_parser, main
from folkscope.lmeval import export_task, import_samples

pytest.importorskip("lm_eval", reason="lm-evaluation-harness is in the test extras (pip install 'folkscope[lmeval]')")
pytestmark = pytest.mark.slow

RISK = ["risk", "run", "--task", "NISTIncome", "--limit", "6", "--n-bootstrap", "20", "--no-baselines"]


@pytest.fixture(scope="module")
def random_model(tmp_path_factory):
    from folkscope.testing import build_random_model

    return build_random_model(tmp_path_factory.mktemp("model") / "tiny-llama", arch="llama")


def test_lm_eval_log_of_an_exported_task_imports_as_the_own_engines_scores_on_a_random_initialised_model(
    tmp_path, random_model
):
    task = export_task(build_parser(), RISK, tmp_path / "tasks")
    assert task.context_size == 600
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
        "TOKENIZERS_PARALLELISM": "false",
    }
    command = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={random_model},dtype=float32,max_length={task.context_size}",
        "--device",
        "cpu",
        "--batch_size",
        "4",
        "--include_path",
        str(task.folder.parent),
        "--tasks",
        task.name,
        "--log_samples",
        "--output_path",
        str(tmp_path / "lm-eval-out"),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next((tmp_path / "lm-eval-out").rglob("results_*.json")).read_text())
    assert results["n-samples"][task.name]["original"] == task.documents
    log = next((tmp_path / "lm-eval-out").rglob(f"samples_{task.name}_*.jsonl"))
    assert len(log.read_text().splitlines()) == task.documents

    imported = import_samples(build_parser(), [tmp_path / "lm-eval-out"], task.folder, tmp_path / "results")
    assert imported.model == "tiny-llama"
    code = main([*RISK, "--model", str(random_model), "--no-cache", "--results-dir", str(tmp_path / "own")])
    assert code == 0
    own = next((tmp_path / "own" / "NISTIncome" / "tiny-llama").iterdir())
    mine, theirs = (pd.read_parquet(f / "scores.parquet").set_index("row_id") for f in (own, imported.folder))
    columns = ["risk_score", "score_ordering_0", "score_ordering_1"]
    assert np.isfinite(mine[columns].to_numpy()).all()
    np.testing.assert_allclose(theirs.loc[mine.index, columns], mine[columns], rtol=0, atol=1e-4)
    # not equal by accident: the orderings disagree (the order-bias correction had something to average)
    assert (mine["score_ordering_0"] - mine["score_ordering_1"]).abs().max() > 1e-3
