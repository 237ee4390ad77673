"""Reference risk scores from folktexts 0.7.1 itself, for ``tests/risk/test_folktexts_reference.py``.

Why this exists
---------------
folkscope re-implements folktexts' risk scores (multiple-choice QA with
order-bias correction, and numeric risk prompting). The prompts are already
checked byte for byte against folktexts' rendering table; this script pins
the *numbers*: it runs folktexts' own ``TransformersLLMClassifier`` on the 10
real ACSIncome fixture rows (``load_bundled("acs-income-10")``, i.e.
folktexts' ``tests/acs_income_10rows.csv``) with folkscope's default model
(SmolLM2-135M-Instruct, the local float32 safetensors folder), and writes the
scores, with the versions and the command that made them, to
``tests/risk/data/folktexts_reference_scores.json``. The test then scores the
same rows with folkscope and compares. folktexts is not a dependency of
folkscope, so the test reads the stored numbers instead of running it.

What is run, on folktexts' side
-------------------------------
- ``folktexts.llm_utils.load_model_tokenizer(MODEL, torch_dtype=torch.float32,
  device_map="cpu")`` (folktexts would pick float16 on a CPU by default);
- ``ACSTaskMetadata.get_task("ACSIncome", use_numeric_qa=...)`` (folktexts
  switches to numeric risk prompting through the task, not the classifier);
- ``TransformersLLMClassifier(model, tokenizer, task)`` with its defaults
  (``correct_order_bias=True``, ``context_size=600``) and ``batch_size=1``;
  the multiple-choice scores are also recomputed with folktexts' default
  ``batch_size=16`` (all 10 rows in one padded batch) and the largest
  difference is recorded, to show the batch size does not matter;
- ``predict_proba`` on the 10 feature columns in the task's order; the
  positive-class column is stored.

The prompts folktexts sent are stored as SHA-256 digests (per row, per
answer ordering) so a later disagreement can be traced to the text.

How to run
----------
folktexts 0.7.1 and its extra imports live outside folkscope's virtual
environment (torch and transformers come from it)::

    pip download folktexts==0.7.1 --no-deps -d /tmp && unzip -q /tmp/folktexts-0.7.1-*.whl -d /tmp/ft
    pip install --no-deps --target /tmp/ftdeps folktables netcal
    PYTHONPATH=/tmp/ft:/tmp/ftdeps .venv/bin/python scripts/folktexts_reference.py

Options: ``--model PATH`` (default: ``ensure_default_model()``), ``--out PATH``.
Takes about a minute on one CPU core.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "risk" / "data" / "folktexts_reference_scores.json"
TASK = "ACSIncome"
FIXTURE = "acs-income-10"
LABEL = "PINCP>50000"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _command(argv: list[str] | None) -> str:
    """This run's command line, from the repository root."""
    python = Path(sys.executable)
    python_arg = os.path.relpath(python, ROOT) if python.is_relative_to(ROOT) else str(python)
    env = [f"{k}={shlex.quote(os.environ[k])}" for k in ("PYTHONPATH", "OMP_NUM_THREADS") if k in os.environ]
    args = [python_arg, os.path.relpath(__file__, ROOT), *(argv if argv is not None else sys.argv[1:])]
    return " ".join([*env, shlex.join(args)])


def _score(model, tokenizer, X, *, numeric: bool, batch_size: int):
    """folktexts' scores of ``X``, the digests of the prompts it sent per row, and the orderings per row."""
    from folktexts.acs import ACSTaskMetadata
    from folktexts.classifier import TransformersLLMClassifier

    task = ACSTaskMetadata.get_task(TASK, use_numeric_qa=numeric)
    clf = TransformersLLMClassifier(model=model, tokenizer=tokenizer, task=task, batch_size=batch_size)
    sent: list[list[str]] = []  # prompts of each call, in call order
    query = clf._query_prompt_risk_estimates_batch

    def recording(prompts_batch, **kwargs):
        sent.append(list(prompts_batch))
        return query(prompts_batch, **kwargs)

    clf._query_prompt_risk_estimates_batch = recording
    proba = clf.predict_proba(X)
    # calls go batch by batch, and within a batch ordering by ordering
    per_row: list[list[str]] = [[] for _ in range(len(X))]
    n_orderings = len(sent) // -(-len(X) // batch_size)
    for call, prompts in enumerate(sent):
        start = (call // n_orderings) * batch_size
        for offset, prompt in enumerate(prompts):
            per_row[start + offset].append(_sha(prompt))
    return [float(p) for p in proba[:, 1]], per_row, n_orderings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default=None, help="model folder (default: folkscope's default model)")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    args = parser.parse_args(argv)

    import folktexts
    import numpy as np
    import torch
    import transformers
    from folktexts.llm_utils import load_model_tokenizer

    from folkscope.data import load_bundled
    from folkscope.engine import ensure_default_model

    torch.manual_seed(0)
    model_path = Path(args.model or ensure_default_model())
    model, tokenizer = load_model_tokenizer(str(model_path), torch_dtype=torch.float32, device_map="cpu")
    assert next(model.parameters()).dtype == torch.float32

    rows = load_bundled(FIXTURE)
    from folktexts.acs import ACSTaskMetadata

    features = list(ACSTaskMetadata.get_task(TASK).features)
    X = rows[features]

    modes = {}
    for mode, numeric in (("multiple_choice", False), ("numeric", True)):
        scores, prompts, orderings = _score(model, tokenizer, X, numeric=numeric, batch_size=1)
        modes[mode] = {
            "numeric_risk_prompting": numeric,
            "orderings_per_row": orderings,
            "scores": scores,
            "prompt_sha256": prompts,
        }
        print(f"{mode}: {np.round(scores, 6).tolist()}")
    batched, _, _ = _score(model, tokenizer, X, numeric=False, batch_size=16)
    batch_check = float(np.max(np.abs(np.asarray(batched) - modes["multiple_choice"]["scores"])))
    print(f"multiple_choice, batch_size 16 vs 1: max |diff| = {batch_check:.3g}")

    record = {
        "what": "folktexts 0.7.1 TransformersLLMClassifier.predict_proba(X)[:, 1] on the 10 fixture rows",
        "fixture": FIXTURE,
        "task": TASK,
        "row_ids": [int(i) for i in rows.index],
        "features": features,
        "labels": [int(v) for v in rows[LABEL]],
        "model": model_path.name,
        "dtype": "float32",
        "device": "cpu",
        "correct_order_bias": True,
        "context_size": 600,
        "batch_size": 1,
        "multiple_choice_batch_size_16_max_abs_diff": batch_check,
        "modes": modes,
        "versions": {
            "folktexts": folktexts.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
        },
        "date": dt.date.today().isoformat(),
        "command": _command(argv),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
