"""Subprocess for the kill-and-resume tests: score a fixed workload into a cache, report what it did.

Usage: python resume_worker.py CACHE_DIR OUT_JSON {fake|transformers} [MODEL_DIR]
"""

from __future__ import annotations

import json
import sys
import time


def workload():
    from folkscope.engine import PrefixGroupRequest, ScoreRequest

    scores = [ScoreRequest(f"Task: guess.\nRow {i} has value {i * 7 % 13}.\nAnswer:", (" A", " B", " yes please")) for i in range(24)]
    groups = [PrefixGroupRequest(f"Task: guess.\nRow {i} is here.\n", ("Q: A or B?\nAnswer:", "Q: B or A?\nAnswer:"), (" A", " B")) for i in range(12)]
    return scores, groups


def build_engine(cache_dir: str | None, backend_name: str, model: str | None, *, slow: bool = True):
    from folkscope.engine import Engine, ResultCache

    if backend_name == "fake":
        from folkscope.engine.backends.fake import FakeBackend

        backend = FakeBackend(latency=0.15 if slow else 0.0, batch_tokens=120)
    else:
        import torch

        from folkscope.engine.backends.hf import HFBackend

        torch.set_num_threads(1)
        backend = HFBackend(model, device="cpu", batch_tokens=250)
        run = backend._run_scores

        def slowed(*args):  # widen the window in which the test can kill us
            time.sleep(0.3)
            return run(*args)

        if slow:
            backend._run_scores = slowed
    return Engine(backend, cache=ResultCache(cache_dir) if cache_dir else None, progress=False)


def run(engine) -> dict:
    scores, groups = workload()
    res_scores = engine.score(scores)
    res_groups = engine.score_groups(groups)
    return {
        "scores": [r.to_dict() for r in res_scores],
        "groups": [r.to_dict() for r in res_groups],
        "engine": engine.stats.to_dict(),
        "backend_requests": engine.backend.stats.requests,
    }


def main() -> None:
    cache_dir, out, backend_name = sys.argv[1:4]
    report = run(build_engine(cache_dir, backend_name, sys.argv[4] if len(sys.argv) > 4 else None))
    with open(out, "w") as fh:
        json.dump(report, fh)


if __name__ == "__main__":
    main()
