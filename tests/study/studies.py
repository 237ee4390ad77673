"""What the study tests share: a private folkscope home, a study run as a user runs it, one killed at a known point,
and a study's folders as bytes apart from what records when and how long."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from folkscope.paths import models_home
from folkscope.study.grid import HOLD_ENV

#: what a run records of when and how long, not of what: two runs of one configuration differ only there
VOLATILE_KEYS = {"created", "current_time", "scoring_seconds", "elicitation_seconds"}
#: what a run records of how its answers were obtained (computed or read from the cache, batches, tokens run)
ACCOUNTING_KEYS = {"engine_stats", "backend_stats"}
VOLATILE_FILES = {"run.log", "study.log", ".lock", "timing.json"}


def _steady(value, drop: set[str]):
    if isinstance(value, dict):
        return {k: _steady(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_steady(v, drop) for v in value]
    return value


def folder_bytes(results: Path, *, accounting: bool = True) -> dict[str, bytes]:
    """Every file of the study's run folders and ledger, byte for byte, but for what records when or how long.

    With ``accounting=False`` (a study served from a warm cache), also but for how the answers were obtained: the
    run accounting in the JSON files, and the pages, which state it."""
    drop = VOLATILE_KEYS if accounting else VOLATILE_KEYS | ACCOUNTING_KEYS
    out = {}
    for path in sorted(results.rglob("*")):
        rel = path.relative_to(results).as_posix()
        if not path.is_file() or rel.startswith("leaderboard/") or path.name in VOLATILE_FILES:
            continue
        if "/." in f"/{rel}":  # lock files beside run folders
            continue
        if path.suffix == ".html" and not accounting:
            continue
        data = path.read_bytes()
        if path.suffix == ".json":
            data = json.dumps(_steady(json.loads(data), drop), sort_keys=True).encode()
        elif path.suffix == ".html":  # the numeric page states its scoring time
            data = b"\n".join(line for line in data.splitlines() if not line.startswith(b"<p>Timing: "))
        out[rel] = data
    return out


def home(folder: Path, *, answers_from: Path | None = None) -> dict[str, str]:
    """A folkscope home of the test's own, so every study computes its answers (a shared result cache would serve
    some, and a run's metrics record how many answers were cached): the same bytes are then a real check. Its
    ``models`` is the suite's converted default model, so nothing is converted twice; ``answers_from`` (another
    test folder) starts it with a copy of that folder's result cache instead of an empty one."""
    root = folder / "home"
    if not root.exists():
        root.mkdir(parents=True)
        if models_home().is_dir():
            (root / "models").symlink_to(models_home(), target_is_directory=True)
        if answers_from is not None:
            shutil.copytree(answers_from / "home" / "engine-cache", root / "engine-cache")
    return {"FOLKSCOPE_HOME": str(root), "CI": "1"}


def study(folder: Path, plan: str | Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``folkscope study run PLAN ...`` in ``folder``, as a user runs it (its own process)."""
    return subprocess.run(
        [sys.executable, "-m", "folkscope.cli.main", "study", "run", str(plan), *extra],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, **home(folder), **(env or {})},
        check=False,
        timeout=1500,
    )


def start_held(folder: Path, plan: str | Path, cells: int, *extra: str) -> tuple[subprocess.Popen, Path]:
    """Start a study that holds after ``cells`` cells until killed; wait until it holds."""
    marker = folder / f"held-{cells}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "folkscope.cli.main", "study", "run", str(plan), *extra],
        cwd=folder,
        env={**os.environ, **home(folder), HOLD_ENV: f"{cells}:{marker}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 1200
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the study ended before it held: {proc.stderr.read().decode()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the study did not reach its cell {cells} in 1200 s")
        time.sleep(0.05)
    return proc, marker


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL: nothing of the study's own clean-up runs."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()
