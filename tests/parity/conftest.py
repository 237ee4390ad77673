"""The folktexts oracle: folktexts 0.7.1 itself, asked through a worker process (see ``oracle_worker.py``).

``scripts/test.sh`` installs folktexts into ``.oracle`` (``tests/parity/oracle.txt``);
``FOLKSCOPE_ORACLE_DIR`` points elsewhere. Without it the parity tests are
skipped with the command that installs it, except under CI (``CI`` set),
where a missing oracle is a failure: the suite that CI runs must compare
against folktexts, not quietly skip the comparison.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("oracle_worker.py")
#: the longest one op may take (the slowest, risk scores of a task's rows, takes seconds)
OP_SECONDS = 600
INSTALL = "pip install --no-deps --target .oracle -r tests/parity/oracle.txt"


def oracle_dir() -> Path:
    return Path(os.environ.get("FOLKSCOPE_ORACLE_DIR") or ROOT / ".oracle")


class FolktextsOracle:
    """folktexts answering in a worker process; ``oracle("prompts", task=..., rows=...)`` returns what folktexts does."""

    def __init__(self, path: Path) -> None:
        # last on the path: the install also holds top-level folders named tests/ and docs/ (netcal's)
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + [str(path)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONWARNINGS": "ignore"}
        self._proc = subprocess.Popen(
            [sys.executable, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )

    def __call__(self, op: str, **args: Any) -> Any:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"op": op, "args": args}, default=str) + "\n")
        self._proc.stdin.flush()
        # a stuck oracle fails its test instead of holding the suite until CI's own limit
        stuck = threading.Event()
        watchdog = threading.Timer(OP_SECONDS, lambda: (stuck.set(), self._proc.kill()))
        watchdog.start()
        try:
            line = self._proc.stdout.readline()
        finally:
            watchdog.cancel()
        if stuck.is_set():
            raise RuntimeError(f"the folktexts oracle took more than {OP_SECONDS} s on {op!r} and was stopped")
        if not line:
            raise RuntimeError(f"the folktexts oracle exited (code {self._proc.poll()}) while answering {op!r}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"folktexts failed on {op!r}: {reply['error']}\n{reply.get('traceback', '')}")
        return reply["ok"]

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


@pytest.fixture(scope="session")
def folktexts() -> Iterator[FolktextsOracle]:
    path = oracle_dir()
    if not (path / "folktexts" / "__init__.py").is_file():
        message = f"folktexts 0.7.1 (the parity oracle) is not installed at {path}; install it with: {INSTALL}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    oracle = FolktextsOracle(path)
    try:
        assert oracle("version") == "0.7.1"
        yield oracle
    finally:
        oracle.close()
