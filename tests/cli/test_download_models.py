"""``download_models --tmp-cache-dir``: folktexts' download cache, against a Hugging Face hub on 127.0.0.1 (issue 29).

folktexts downloads each model into the Hugging Face cache named by
``--tmp-cache-dir`` and saves it under ``--save-dir``. The hub here is a
loopback server that answers the few calls ``snapshot_download`` makes
(revision, file tree, file heads and bodies), so the real download code runs
and nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from folkscope.cli.main import download_models_main, main

COMMIT = "0123456789abcdef0123456789abcdef01234567"
FILES = {"config.json": b'{"model_type": "llama"}\n', "tokenizer.json": b"{}\n", "model.safetensors": b"\x00" * 64}


class _Hub(BaseHTTPRequestHandler):
    """The hub's model API for one repository, ``org/tiny``, at one commit."""

    server: ThreadingHTTPServer

    def _answer(self, body: bytes | None, headers: dict[str, str] | None = None, *, with_body: bool) -> None:
        self.server.requests[self.command + " " + self.path.split("?")[0]] += 1  # type: ignore[attr-defined]
        self.send_response(404 if body is None else 200)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        if with_body and body:
            self.wfile.write(body)

    def _route(self, with_body: bool) -> None:
        path = self.path.split("?")[0]
        if path == f"/api/models/org/tiny/tree/{COMMIT}":
            tree = [
                {"type": "file", "path": f, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                for f, b in FILES.items()
            ]
            return self._answer(json.dumps(tree).encode(), {"Content-Type": "application/json"}, with_body=with_body)
        if path.startswith("/api/models/org/tiny/revision/"):
            info = {"id": "org/tiny", "sha": COMMIT, "siblings": [{"rfilename": f} for f in FILES]}
            return self._answer(json.dumps(info).encode(), {"Content-Type": "application/json"}, with_body=with_body)
        prefix = f"/org/tiny/resolve/{COMMIT}/"
        body = FILES.get(path[len(prefix) :]) if path.startswith(prefix) else None
        etag = {} if body is None else {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha256(body).hexdigest()}"'}
        return self._answer(body, etag, with_body=with_body)

    def do_GET(self) -> None:  # noqa: N802 (name fixed by http.server)
        self._route(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._route(False)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Keep test output clean."""


@pytest.fixture
def hub(monkeypatch, tmp_path) -> Iterator[ThreadingHTTPServer]:
    """The loopback hub as the hub, and an empty standard cache that nothing may be written to."""
    from huggingface_hub import constants

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    server.requests = Counter()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(
        constants, "ENDPOINT", endpoint
    )  # read when the module was imported: set here, not in the environment
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "standard-cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.parametrize("entry", [download_models_main, lambda argv: main(["download-models", *argv])])
def test_models_download_into_the_tmp_cache_dir_then_go_to_the_save_dir(hub, tmp_path, capsys, entry):
    """The flag was missing: 'unrecognized arguments: --tmp-cache-dir'."""
    tmp_cache, save = tmp_path / "tmp-cache", tmp_path / "models"
    assert entry(["--model", "org/tiny", "--save-dir", str(save), "--tmp-cache-dir", str(tmp_cache)]) == 0
    snapshot = tmp_cache / "models--org--tiny" / "snapshots" / COMMIT
    for name, body in FILES.items():
        assert (snapshot / name).read_bytes() == body  # downloaded into the temporary cache ...
        assert (save / "org--tiny" / name).read_bytes() == body  # ... and saved where folktexts saves it
    assert not (tmp_path / "standard-cache").exists()  # the standard cache was not used
    assert capsys.readouterr().out.strip() == f"org/tiny: {save / 'org--tiny'}"
    fetched = sum(n for key, n in hub.requests.items() if key.startswith(f"GET /org/tiny/resolve/{COMMIT}/"))
    assert fetched == len(FILES)

    # a second run finds the files in the temporary cache: nothing is downloaded again
    assert entry(["--model", "org/tiny", "--save-dir", str(tmp_path / "again"), "--tmp-cache-dir", str(tmp_cache)]) == 0
    assert sum(n for key, n in hub.requests.items() if key.startswith(f"GET /org/tiny/resolve/{COMMIT}/")) == fetched
    assert (tmp_path / "again" / "org--tiny" / "config.json").read_bytes() == FILES["config.json"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


def test_a_tmp_cache_dir_without_a_save_dir_is_refused_before_any_download(hub, tmp_path, capsys):
    assert download_models_main(["--model", "org/tiny", "--tmp-cache-dir", str(tmp_path / "t")]) != 0
    assert "add --save-dir DIR" in _one_line(capsys)
    assert not hub.requests and not (tmp_path / "t").exists()


def test_a_tmp_cache_dir_under_a_file_is_refused_before_any_download(hub, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    argv = ["--model", "org/tiny", "--save-dir", str(tmp_path / "m"), "--tmp-cache-dir", str(blocker / "t")]
    assert download_models_main(argv) != 0
    assert "pass another --tmp-cache-dir" in _one_line(capsys)
    assert not hub.requests
