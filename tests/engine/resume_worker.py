"""Subprocess for the kill-and-resume tests: score a fixed workload into a cache, report what it did.

Usage: python resume_worker.py CACHE_DIR OUT_JSON {fake|transformers} [MODEL_DIR]

With ``RESUME_WORKER_PROGRESS=<batch tokens>`` the engine prints its
progress lines (plain lines on the piped stderr), and the fake backend plans
batches of that budget and takes 0.2 s between the steps of a batch it
reports, so a test can kill it while a batch is half done.
"""

from __future__ import annotations

import json
import os
import sys
import time


def workload():
    from folkscope.engine import PrefixGroupRequest, ScoreRequest

    scores = [
        ScoreRequest(f"Task: guess.\nRow {i} has value {i * 7 % 13}.\nAnswer:", (" A", " B", " yes please"))
        for i in range(24)
    ]
    groups = [
        PrefixGroupRequest(
            f"Task: guess.\nRow {i} is here.\n", ("Q: A or B?\nAnswer:", "Q: B or A?\nAnswer:"), (" A", " B")
        )
        for i in range(12)
    ]
    return scores, groups


def build_engine(
    cache_dir: str | None, backend_name: str, model: str | None, *, slow: bool = True, batch_tokens: int = 120
):
    from folkscope.engine import Engine, ResultCache

    if backend_name == "fake":
        from folkscope.engine.backends.fake import FakeBackend

        backend = FakeBackend(latency=0.15 if slow else 0.0, batch_tokens=batch_tokens)
        if slow and os.environ.get("RESUME_WORKER_PROGRESS"):
            report = backend._report_fraction

            def step(fraction):  # a batch's passes take time: its rows are computed, reported, and not saved yet
                report(fraction)
                if fraction < 1:
                    time.sleep(0.2)

            backend._report_fraction = step
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
    progress = None if os.environ.get("RESUME_WORKER_PROGRESS") else False
    return Engine(backend, cache=ResultCache(cache_dir) if cache_dir else None, progress=progress)


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
    budget = int(os.environ.get("RESUME_WORKER_PROGRESS") or 120)
    report = run(build_engine(cache_dir, backend_name, sys.argv[4] if len(sys.argv) > 4 else None, batch_tokens=budget))
    with open(out, "w") as fh:
        json.dump(report, fh)


if __name__ == "__main__":
    main()
