"""Headless Chromium driven over the DevTools protocol, for testing the pages folkscope writes in a real browser.

Chromium's ``--remote-debugging-pipe`` speaks the DevTools protocol over two
inherited file descriptors (3: commands in, 4: events and replies out; each
message is JSON ended by a NUL byte), so no websocket library, no network
port and no browser download is needed: Debian's ``chromium`` package is
enough. :class:`Browser` opens a page from the file system, collects every
console error, uncaught exception and failed load, evaluates JavaScript in
the page, and takes a full-page screenshot.

Examples
--------
Not run here (it needs Chromium)::

    with Browser() as browser:
        page = browser.open(Path("site/index.html"))
        assert not page.errors
        title = browser.evaluate("document.title")
        browser.screenshot(Path("index.png"))
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["Browser", "BrowserUnavailable", "PageLoad", "find_chromium"]

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserUnavailable(RuntimeError):
    """No Chromium to drive (the message says how to get one)."""


def find_chromium() -> str:
    """The Chromium executable (``$FOLKSCOPE_CHROMIUM`` or the first of its usual names on PATH)."""
    chosen = os.environ.get("FOLKSCOPE_CHROMIUM")
    for name in (chosen,) if chosen else _NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserUnavailable(
        "no Chromium on PATH; install Debian's chromium package (apt-get install chromium) "
        "or point $FOLKSCOPE_CHROMIUM at a Chromium or Chrome executable"
    )


@dataclass
class PageLoad:
    """What happened while a page loaded: console errors, uncaught exceptions and failed loads, as text."""

    url: str
    errors: list[str] = field(default_factory=list)


class Browser:
    """One headless Chromium process and one tab, driven over the DevTools pipe."""

    def __init__(
        self, *, executable: str | None = None, width: int = 1280, height: int = 900, timeout: float = 60.0
    ) -> None:
        self._exe = executable or find_chromium()
        self._size = (width, height)
        self._timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self._events: list[Mapping[str, Any]] = []
        self._profile = tempfile.TemporaryDirectory(prefix="folkscope-chromium-")
        self._process: subprocess.Popen[bytes] | None = None
        self._session = ""

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Browser:
        commands_r, commands_w = os.pipe()  # we write, Chromium reads on its fd 3
        replies_r, replies_w = os.pipe()  # Chromium writes on its fd 4, we read

        def wire() -> None:  # in the child, before exec: put the pipe ends where Chromium looks for them
            os.dup2(commands_r, 3)
            os.dup2(replies_w, 4)

        args = [
            self._exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={self._profile.name}",
            f"--window-size={self._size[0]},{self._size[1]}",
            "about:blank",
        ]
        self._process = subprocess.Popen(
            args,
            preexec_fn=wire,
            pass_fds=(3, 4),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_r)
        os.close(replies_w)
        self._out, self._in = commands_w, replies_r
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self._call(f"{domain}.enable", session=True)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """End Chromium and remove its temporary profile."""
        if self._process is not None:
            try:
                self._call("Browser.close")
            except (OSError, RuntimeError, TimeoutError):
                pass
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            for fd in (self._out, self._in):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._process = None
        self._profile.cleanup()

    # ------------------------------------------------------------------ protocol
    def _send(self, method: str, params: Mapping[str, Any] | None, session: bool) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": dict(params or {})}
        if session:
            message["sessionId"] = self._session
        os.write(self._out, json.dumps(message).encode("utf-8") + b"\0")
        return self._next_id

    def _read(self, deadline: float) -> Mapping[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._in], [], [], left)
            if ready:
                chunk = os.read(self._in, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe (did it crash?)")
                self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)  # type: ignore[no-any-return]

    def _call(
        self, method: str, params: Mapping[str, Any] | None = None, *, session: bool = False
    ) -> Mapping[str, Any]:
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + self._timeout
        while True:
            message = self._read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error'].get('message')}")
                return message.get("result") or {}
            if "method" in message:
                self._events.append(message)

    def _wait_event(self, method: str) -> Mapping[str, Any]:
        deadline = time.monotonic() + self._timeout
        for i, event in enumerate(self._events):
            if event.get("method") == method:
                return self._events.pop(i)
        while True:
            message = self._read(deadline)
            if message.get("method") == method:
                return message
            if "method" in message:
                self._events.append(message)

    # ------------------------------------------------------------------ use
    def open(self, path: Path, *, settle: float = 0.3) -> PageLoad:
        """Load a file and return the errors the page raised while loading (and ``settle`` seconds after)."""
        url = path.resolve().as_uri()
        self._events.clear()
        self._call("Page.navigate", {"url": url}, session=True)
        self._wait_event("Page.loadEventFired")
        end = time.monotonic() + settle
        while time.monotonic() < end:  # late console messages (scripts run after load)
            try:
                message = self._read(end)
            except TimeoutError:
                break
            if "method" in message:
                self._events.append(message)
        return PageLoad(url=url, errors=[e for e in map(_error_text, self._events) if e])

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self._call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, session=True
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(
                f"the page's JavaScript failed: {(details.get('exception') or {}).get('description') or details.get('text')}"
            )
        return result.get("result", {}).get("value")

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page (beyond the window), written to ``path``."""
        data = self._call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=True)[
            "data"
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


def _error_text(event: Mapping[str, Any]) -> str | None:
    """An error-level event as one line, or None for anything else."""
    method, params = event.get("method"), event.get("params") or {}
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails") or {}
        return f"uncaught exception: {(details.get('exception') or {}).get('description') or details.get('text')}"
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        return "console error: " + " ".join(
            str(a.get("value", a.get("description", ""))) for a in params.get("args") or []
        )
    if method == "Log.entryAdded":
        entry = params.get("entry") or {}
        if entry.get("level") == "error":
            return f"{entry.get('source')}: {entry.get('text')} {entry.get('url') or ''}".strip()
    return None
