"""Helpers: lm-eval's --log_samples files written from a folkscope engine, in lm-eval's own layout."""

from __future__ import annotations

import json
from pathlib import Path

from folkscope.engine import Engine, ScoreRequest

STAMP = "2026-11-27T10-00-00.000000"


def write_log(task_dir: Path, out: Path, engine: Engine, *, model: str, results: dict | None = None) -> Path:
    """lm-eval's output for an exported task, its log-likelihoods computed by ``engine``: strings, as lm-eval writes them."""
    docs = [json.loads(line) for line in (task_dir / "docs.jsonl").read_text(encoding="utf-8").splitlines()]
    task = json.loads((task_dir / "folkscope.json").read_text(encoding="utf-8"))["task"]
    answers = engine.score([ScoreRequest(d["context"], tuple(d["choices"])) for d in docs])
    folder = out / model.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_{task}_{STAMP}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for doc, answer in zip(docs, answers):
            sample = {
                "doc_id": doc["doc_id"],
                "doc": doc,
                "target": "0",
                "arguments": {
                    f"gen_args_{i}": {"arg_0": doc["context"], "arg_1": choice}
                    for i, choice in enumerate(doc["choices"])
                },
                "resps": [[[str(lp), "False"]] for lp in answer.logprobs],
                "filtered_resps": [[str(lp), "False"] for lp in answer.logprobs],
                "filter": "none",
                "metrics": [],
            }
            handle.write(json.dumps(sample) + "\n")
    summary = {"model_name": model, "n-shot": {task: 0}, "chat_template": None, "system_instruction": None}
    (folder / f"results_{STAMP}.json").write_text(json.dumps({**summary, **(results or {})}), encoding="utf-8")
    return path
