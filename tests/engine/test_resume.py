"""Fault injection: a run killed with SIGKILL mid-way resumes, recomputes nothing saved, ends identical."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("resume_worker.py")
TOTAL = 24 + 12  # requests in the worker's workload


def saved(cache_dir: Path) -> int:
    path = cache_dir / "results.sqlite"
    if not path.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:  # table not created yet
        return 0


def command(cache_dir: Path, out: Path, backend: str, model: Path | None) -> list[str]:
    return [sys.executable, str(WORKER), str(cache_dir), str(out), backend] + ([str(model)] if model else [])


def kill_after_some_results(cache_dir: Path, out: Path, backend: str, model: Path | None, at_least: int) -> int:
    env = {**os.environ, "CI": "1"}
    proc = subprocess.Popen(command(cache_dir, out, backend, model), env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while saved(cache_dir) < at_least:
        if proc.poll() is not None:
            raise AssertionError(f"worker ended before it could be killed: {proc.stderr.read().decode()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("worker wrote nothing in 120 s")
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()
    return saved(cache_dir)


def finish(cache_dir: Path, out: Path, backend: str, model: Path | None) -> dict:
    done = subprocess.run(
        command(cache_dir, out, backend, model), env={**os.environ, "CI": "1"}, capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("backend", ["fake", "transformers"])
def test_sigkill_mid_run_then_resume(tmp_path, backend, request):
    model = request.getfixturevalue("random_init_llama_dir") if backend == "transformers" else None
    cache_dir = tmp_path / "cache"
    before = kill_after_some_results(cache_dir, tmp_path / "killed.json", backend, model, at_least=4)
    assert 0 < before < TOTAL

    resumed = finish(cache_dir, tmp_path / "resumed.json", backend, model)
    assert resumed["engine"]["cached"] == before  # everything saved was reused ...
    assert resumed["engine"]["computed"] == TOTAL - before  # ... and nothing saved was recomputed
    assert resumed["backend_requests"] == TOTAL - before

    # an uninterrupted run (here, in-process, same settings, one torch thread like the worker)
    spec = importlib.util.spec_from_file_location("resume_worker", WORKER)
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    fresh = worker.run(worker.build_engine(None, backend, str(model) if model else None, slow=False))
    assert fresh["engine"]["computed"] == TOTAL
    assert resumed["scores"] == fresh["scores"]  # identical, not merely close
    assert resumed["groups"] == fresh["groups"]


BUDGET = 600  # fake tokens per batch in the kill-mid-batch test: several requests per batch
SAVED_LINE = re.compile(r"scoring: (\d+)/(\d+) requests \(\d+%\)(?:, (\d+) more in the running batch)?")


def test_a_kill_mid_batch_keeps_every_row_progress_called_done_and_loses_at_most_the_running_batch(tmp_path):
    """Issue 28 (13): two kills at "20/31 rows (65 %)" had saved 0 answers; the count included the running batch.

    The fake backend takes 0.2 s between the reported steps of a batch; the
    run is killed right after the first progress line that counts 10 or more
    requests. Everything that line counted must be in the cache, and what was
    computed but lost is no more than the batch that was running.
    """
    cache_dir, out = tmp_path / "cache", tmp_path / "killed.json"
    env = {**os.environ, "CI": "1", "FOLKSCOPE_PROGRESS_INTERVAL": "0", "RESUME_WORKER_PROGRESS": str(BUDGET)}
    proc = subprocess.Popen(command(cache_dir, out, "fake", None), env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    counted = running = None
    for line in proc.stderr:
        match = SAVED_LINE.match(line)
        if match and int(match[1]) >= 10:
            proc.send_signal(signal.SIGKILL)
            counted, running = int(match[1]), int(match[3] or 0)
            break
        assert time.monotonic() < deadline, "no progress line counted 10 requests in 120 s"
    proc.wait()
    proc.stderr.close()
    assert counted is not None and proc.returncode == -signal.SIGKILL and not out.exists()
    kept = saved(cache_dir)
    assert kept >= counted  # nothing the progress line called done was lost
    # the batches the worker plans (several requests each): a kill loses the one that was running, at most
    spec = importlib.util.spec_from_file_location("resume_worker", WORKER)
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    probe = worker.build_engine(None, "fake", None, slow=False, batch_tokens=BUDGET)
    sizes = []
    original = probe.backend._run_scores

    def record(batch, units, reads):
        sizes.append(len(batch.jobs))
        return original(batch, units, reads)

    probe.backend._run_scores = record
    probe.score(worker.workload()[0])
    assert min(sizes) > 1 and counted + running - kept <= max(sizes)

    resumed = finish(cache_dir, tmp_path / "resumed.json", "fake", None)
    assert resumed["engine"]["cached"] == kept and resumed["engine"]["computed"] == TOTAL - kept
