"""The live bar on a real pseudo-terminal shows a time left, read from the whole run's rate (issue 32).

rich's own estimate uses only the updates of its last 30 seconds; a bar that
moves once per slow batch showed ``-:--:--`` for a whole run while the log
had an ETA. The child process below runs a :class:`Progress` on a pty (so
``interactive_terminal()`` is true) with a clock it drives itself: one
second per finished unit, so the time left is known exactly, however slow
the machine.
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    from folkscope.engine.progress import Progress, interactive_terminal

    assert interactive_terminal(), "the child's stderr must be a terminal"
    now = [100.0]
    with Progress(10, description="scoring", unit="rows", interval=3600, clock=lambda: now[0]) as bar:
        assert bar.mode == "bar"
        for _ in range(3):
            now[0] += 1.0  # one row a second: 7 rows left after the third is 7 seconds
            bar.advance(1, tokens=40)
        now[0] += 1.0
        bar.partial(0.5)
    print("child done")
    """
)

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def _run_on_a_pty(code: str) -> str:
    """Run ``code`` with stdin, stdout and stderr on a fresh 120-column pseudo-terminal; return what it drew."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "COLUMNS", "LINES", "NO_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert child.wait(timeout=120) == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="needs a POSIX pseudo-terminal")
def test_the_bar_on_a_terminal_says_how_long_is_left():
    drawn = ANSI.sub("", _run_on_a_pty(CHILD))
    assert "child done" in drawn
    assert "-:--:--" not in drawn
    left = re.findall(r"(\d+:\d\d:\d\d) left", drawn)
    assert left and all(re.fullmatch(r"0:00:0\d", t) for t in left), drawn
    assert "0:00:07 left" in drawn  # 3 of 10 rows in 3 s: 7 s left, redrawn as the count moved
    assert "done in" not in drawn  # the run stopped at 3 rows: no false claim of being finished
    assert "rows/s" in drawn and "tok/s" in drawn
