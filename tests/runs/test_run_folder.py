"""Run folders appear whole or not at all: staging, publish, recovery after kill -9, one writer at a time."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from folkscope._io import atomic_write, remove_temporaries
from folkscope.runs import RunFolder, RunFolderBusyError


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def _write(folder: Path, generation: str, names=("config.json", "scores.txt", "metrics.json", "plots/a.png")) -> None:
    for name in names:
        atomic_write(folder / name, lambda fh: fh.write(generation.encode()))


def test_the_folder_appears_only_when_every_file_is_written(tmp_path):
    final = tmp_path / "task" / "run"
    with RunFolder(final) as staging:
        _write(staging, "1")
        assert not final.exists()
    assert _files(final) == {"config.json": "1", "metrics.json": "1", "plots/a.png": "1", "scores.txt": "1"}
    assert sorted(p.name for p in final.parent.iterdir()) == [".run.lock", "run"]  # no staging or old folder left


def test_a_failed_update_leaves_the_published_run_as_it_was_and_the_next_attempt_continues(tmp_path):
    final = tmp_path / "run"
    with RunFolder(final) as staging:
        _write(staging, "1")
    with pytest.raises(RuntimeError), RunFolder(final) as staging:
        assert _files(staging) == _files(final)  # an update starts from a copy of the published run
        _write(staging, "2", names=("scores.txt",))
        (staging / "run.log").write_text("attempt 2\n")
        raise RuntimeError("killed by the test")
    assert set(_files(final).values()) == {"1"}
    with RunFolder(final) as staging:
        assert (staging / "run.log").read_text() == "attempt 2\n"  # the unfinished attempt's log is kept
        _write(staging, "3")
    assert _files(final) == {
        "config.json": "3",
        "metrics.json": "3",
        "plots/a.png": "3",
        "run.log": "attempt 2\n",
        "scores.txt": "3",
    }


@pytest.mark.parametrize("step", ["marked complete", "old moved aside", "renamed into place"])
def test_a_publish_killed_between_two_steps_is_finished_by_the_next_writer(tmp_path, step):
    final = tmp_path / "run"
    with RunFolder(final) as staging:
        _write(staging, "old")
    rf = RunFolder(final)
    rf.staging.mkdir()
    _write(rf.staging, "new")
    (rf.staging / ".complete").touch()
    if step != "marked complete":
        os.replace(final, rf.old)
    if step == "renamed into place":
        os.replace(rf.staging, final)
    with RunFolder(final):
        pass  # recovery publishes the finished staging folder; the (empty) update changes nothing
    assert _files(final) == {"config.json": "new", "metrics.json": "new", "plots/a.png": "new", "scores.txt": "new"}
    assert not rf.old.exists() and not rf.staging.exists()


def test_stale_temporaries_of_dead_writers_are_removed_and_live_ones_kept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "plots").mkdir()
    stale = tmp_path / "plots" / f".a.png.{dead.pid}.x1y2.tmp"
    mine = tmp_path / f".metrics.json.{os.getpid()}.abcd.tmp"
    other = tmp_path / ".notes.tmp"  # not named by atomic_write: never touched
    for path in (stale, mine, other):
        path.write_text("half")
    assert remove_temporaries(tmp_path) == 1 and not stale.exists() and mine.exists() and other.exists()
    assert remove_temporaries(tmp_path, all_writers=True) == 1 and not mine.exists() and other.exists()


def test_temporaries_left_in_a_published_folder_are_cleaned_by_the_next_writer(tmp_path):
    final = tmp_path / "run"
    with RunFolder(final) as staging:
        _write(staging, "1")
    (final / ".metrics.json.4194303.dead.tmp").write_text("half")  # left by a run from before RunFolder
    with RunFolder(final):
        pass
    assert not list(final.rglob("*.tmp"))


def test_a_second_writer_of_the_same_folder_is_refused_in_one_line(tmp_path):
    with RunFolder(tmp_path / "run"):
        with pytest.raises(RunFolderBusyError, match="another process is writing the run folder") as info:
            RunFolder(tmp_path / "run").__enter__()
        assert "\n" not in str(info.value)
        with RunFolder(tmp_path / "other"):  # another run folder in the same place is independent
            pass


# ---------------------------------------------------------------- kill -9 during a real run's final writes
_RUN = [
    "run",
    "--model",
    "kill-fake",
    "--inference-backend",
    "fake",
    "--task",
    "NISTIncome",
    "--subsampling",
    "0.03",
    "--n-bootstrap",
    "20",
    "--no-baselines",
]
_DRIVER = "import sys; from folkscope.cli.main import main; sys.exit(main(sys.argv[1:]))"
_EXPECTED = {"config.json", "scores.parquet", "metrics.json", "report.html", "run.log"}


def _start(results: Path, cache: Path) -> subprocess.Popen:
    argv = [sys.executable, "-c", _DRIVER, *_RUN, "--results-dir", str(results), "--cache-dir", str(cache)]
    env = dict(os.environ)
    with open(results.parent / f"{results.name}.stderr", "ab") as err:  # the child keeps its own descriptor
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)


def _assert_whole(results: Path) -> Path | None:
    """Every visible run folder is complete and self-consistent; returns it (None before the first publish)."""
    runs = [p for p in results.glob("NISTIncome/kill-fake/*") if not p.name.startswith(".")]
    assert len(runs) <= 1
    if not runs:
        return None
    run = runs[0]
    names = {p.name for p in run.iterdir()}
    assert _EXPECTED <= names and len(list((run / "plots").glob("*.png"))) >= 4, names
    assert not list(run.rglob("*.tmp")) and not (run / ".complete").exists()
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["scoring"]["rows"] == len(pd.read_parquet(run / "scores.parquet"))
    return run


def test_kill_9_during_the_final_writes_never_leaves_a_half_written_folder(tmp_path):
    """12 SIGKILLs, half at random moments, half just after the scores are staged (metrics, plots, report, publish)."""
    reference = tmp_path / "reference"
    clean = _start(reference, tmp_path / "cache-ref")
    start = time.monotonic()
    assert clean.wait(timeout=300) == 0, (tmp_path / "reference.stderr").read_text()
    duration = time.monotonic() - start
    expected = pd.read_parquet(_assert_whole(reference) / "scores.parquet")

    results, cache = tmp_path / "results", tmp_path / "cache"
    rng = random.Random(17)
    kills = attempt = 0
    # a run that finishes before its kill (warm caches, a busy or an idle machine) is not a kill: try again, so the
    # count depends on the schedule, not on how fast this machine happens to be
    while kills < 12 and attempt < 36:
        attempt += 1
        proc = _start(results, cache)
        if attempt % 2 == 0:
            time.sleep(rng.uniform(0.3, 1.0) * duration)
        else:  # wait for the scores to be staged, then kill during the writes that follow
            deadline = time.monotonic() + 300
            while not list(results.glob("NISTIncome/kill-fake/.*.staging/scores.parquet")) and proc.poll() is None:
                assert time.monotonic() < deadline
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.6))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
        _assert_whole(results)
    assert kills >= 8  # most attempts were really killed mid-run
    final = _start(results, cache)
    assert final.wait(timeout=300) == 0, (tmp_path / "results.stderr").read_text()
    run = _assert_whole(results)
    pd.testing.assert_frame_equal(pd.read_parquet(run / "scores.parquet"), expected)
    assert not list(results.rglob("*.tmp")) and not list(results.glob("NISTIncome/kill-fake/.*.staging"))
    assert "scoring" in (run / "run.log").read_text()  # the log kept every attempt


@pytest.mark.parametrize(
    "name", ["folkscope.runs.folder", "folkscope.engine.usage", "folkscope.cli.run_cmd", "folkscope._io"]
)
def test_docstring_examples_run(name):
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert failures == 0
