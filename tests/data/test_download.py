"""download_file against a real loopback server that fails on purpose."""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

import pytest

from folkscope.data import download
from folkscope.data.download import download_file, sha256_file
from folkscope.errors import ConfigError, DownloadError, IntegrityError

from .http_fixture import Fault, FixtureServer

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB, every byte value, so offsets matter
PATH = "/files/payload.bin"


@pytest.fixture(autouse=True)
def delays(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record backoff delays instead of sleeping; keep proxies off loopback."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    recorded: list[float] = []
    monkeypatch.setattr(download, "_sleep", recorded.append)
    return recorded


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    with FixtureServer({PATH: PAYLOAD}) as srv:
        yield srv


def closed_port_url() -> str:
    """A loopback URL nobody listens on, so connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/x.zip"


def fail_always(path: Path) -> None:
    raise IntegrityError(f"{path.name} rejected by validate")


def test_public_names_are_exported() -> None:
    public = {name for name in vars(download) if not name.startswith("_") and callable(getattr(download, name))}
    public = {name for name in public if getattr(download, name).__module__ == download.__name__}
    assert public == set(download.__all__)


def test_downloads_verified_file_and_leaves_no_part(server: FixtureServer, tmp_path: Path) -> None:
    dest = tmp_path / "sub" / "payload.bin"
    sha = hashlib.sha256(PAYLOAD).hexdigest()
    assert download_file(server.url(PATH), dest, expected_size=len(PAYLOAD), sha256=sha) == dest
    assert dest.read_bytes() == PAYLOAD
    assert sorted(p.name for p in dest.parent.iterdir()) == ["payload.bin"]
    assert server.requests[PATH] == 1
    assert sha256_file(dest) == sha


@pytest.mark.parametrize("status", [500, 502, 503, 504, 408])
def test_transient_status_is_retried(server: FixtureServer, tmp_path: Path, delays: list[float], status: int) -> None:
    server.add_faults(PATH, Fault.error(status), Fault.error(status))
    download_file(server.url(PATH), tmp_path / "f", backoff=1.0)
    assert (tmp_path / "f").read_bytes() == PAYLOAD
    assert server.requests[PATH] == 3
    assert len(delays) == 2
    assert 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0  # exponential, jittered down to half


def test_429_waits_as_long_as_retry_after_says(server: FixtureServer, tmp_path: Path, delays: list[float]) -> None:
    server.add_faults(PATH, Fault.error(429, retry_after="7"))
    download_file(server.url(PATH), tmp_path / "f", backoff=0.01)
    assert server.requests[PATH] == 2
    assert delays == [7.0]


def test_retry_after_as_http_date(server: FixtureServer, tmp_path: Path, delays: list[float]) -> None:
    when = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    server.add_faults(PATH, Fault.error(503, retry_after=when))
    download_file(server.url(PATH), tmp_path / "f", backoff=0.01)
    assert 25 <= delays[0] <= 31


def test_gives_up_after_retries_and_keeps_nothing_final(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(PATH, *[Fault.error(500)] * 3)
    with pytest.raises(DownloadError, match="after 3 attempts.*HTTP 500") as info:
        download_file(server.url(PATH), tmp_path / "f", retries=2)
    assert not isinstance(info.value, IntegrityError)
    assert server.requests[PATH] == 3
    assert not (tmp_path / "f").exists()


@pytest.mark.parametrize("status", [404, 403, 401, 410])
def test_client_error_fails_at_once_naming_url_and_status(
    server: FixtureServer, tmp_path: Path, delays: list[float], status: int
) -> None:
    server.add_faults(PATH, Fault.error(status))
    url = server.url(PATH)
    with pytest.raises(DownloadError, match=rf"{url} answered HTTP {status}"):
        download_file(url, tmp_path / "f")
    assert server.requests[PATH] == 1
    assert delays == []
    assert list(tmp_path.iterdir()) == []


def test_failure_never_touches_existing_final_file(server: FixtureServer, tmp_path: Path) -> None:
    dest = tmp_path / "f"
    dest.write_bytes(b"previous good copy")
    server.add_faults(PATH, Fault.corrupted(), Fault.corrupted())
    with pytest.raises(IntegrityError):
        download_file(server.url(PATH), dest, sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert dest.read_bytes() == b"previous good copy"
    assert not (tmp_path / "f.part").exists()


def test_truncated_transfer_resumes_with_range(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(PATH, Fault.truncated(300_000))
    download_file(server.url(PATH), tmp_path / "f", expected_size=len(PAYLOAD))
    assert (tmp_path / "f").read_bytes() == PAYLOAD
    assert server.range_headers == [(PATH, None), (PATH, "bytes=300000-")]


def test_resumes_part_file_left_by_an_earlier_run(server: FixtureServer, tmp_path: Path) -> None:
    (tmp_path / "f.part").write_bytes(PAYLOAD[:123_456])
    download_file(server.url(PATH), tmp_path / "f", sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert (tmp_path / "f").read_bytes() == PAYLOAD
    assert server.range_headers == [(PATH, "bytes=123456-")]


def test_server_without_range_support_gets_a_clean_refetch(tmp_path: Path) -> None:
    (tmp_path / "f.part").write_bytes(b"stale bytes from another version")
    with FixtureServer({PATH: PAYLOAD}, ranges=False) as server:
        download_file(server.url(PATH), tmp_path / "f")
    assert (tmp_path / "f").read_bytes() == PAYLOAD


def test_part_longer_than_remote_file_restarts(server: FixtureServer, tmp_path: Path) -> None:
    (tmp_path / "f.part").write_bytes(PAYLOAD + b"extra")
    download_file(server.url(PATH), tmp_path / "f")
    assert (tmp_path / "f").read_bytes() == PAYLOAD
    assert server.range_headers == [(PATH, f"bytes={len(PAYLOAD) + 5}-"), (PATH, None)]


def test_flaky_connection_that_keeps_progressing_finishes(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(PATH, *[Fault.truncated(100_000)] * 8)
    download_file(server.url(PATH), tmp_path / "f", retries=2, expected_size=len(PAYLOAD))
    assert (tmp_path / "f").read_bytes() == PAYLOAD
    assert server.requests[PATH] == 9


def test_truncation_without_progress_gives_up_and_keeps_part(tmp_path: Path) -> None:
    with FixtureServer({PATH: PAYLOAD}, ranges=False) as plain:
        plain.add_faults(PATH, *[Fault.truncated(10)] * 3)
        with pytest.raises(DownloadError, match="after 3 attempts.*connection closed after 10 of") as info:
            download_file(plain.url(PATH), tmp_path / "f", retries=2)
    assert not isinstance(info.value, IntegrityError)
    assert "next call resumes it" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.part"]


def test_corrupt_body_is_refetched_from_scratch(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(PATH, Fault.corrupted())
    download_file(server.url(PATH), tmp_path / "f", sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert (tmp_path / "f").read_bytes() == PAYLOAD
    assert server.range_headers == [(PATH, None), (PATH, None)]


def test_corrupt_twice_raises_integrity_error(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(PATH, Fault.corrupted(), Fault.corrupted())
    with pytest.raises(IntegrityError, match="SHA-256"):
        download_file(server.url(PATH), tmp_path / "f", sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert server.requests[PATH] == 2
    assert list(tmp_path.iterdir()) == []


def test_size_mismatch_is_integrity_error(server: FixtureServer, tmp_path: Path) -> None:
    with pytest.raises(IntegrityError, match=f"got {len(PAYLOAD)} bytes, expected 5"):
        download_file(server.url(PATH), tmp_path / "f", expected_size=5)
    assert server.requests[PATH] == 2


def test_validate_rejection_is_refetched_once(server: FixtureServer, tmp_path: Path) -> None:
    with pytest.raises(IntegrityError, match="rejected by validate"):
        download_file(server.url(PATH), tmp_path / "f", validate=fail_always)
    assert server.requests[PATH] == 2
    assert list(tmp_path.iterdir()) == []


def test_unreachable_host_is_download_error_after_retries(tmp_path: Path, delays: list[float]) -> None:
    url = closed_port_url()
    with pytest.raises(DownloadError, match="connection failed") as info:
        download_file(url, tmp_path / "f", retries=3)
    assert url in str(info.value)
    assert len(delays) == 3


def test_progress_bar_does_not_change_the_result(server: FixtureServer, tmp_path: Path) -> None:
    download_file(server.url(PATH), tmp_path / "f", progress=True)
    assert (tmp_path / "f").read_bytes() == PAYLOAD


def test_progress_is_quiet_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert download._show_progress(None) is False
    assert download._show_progress(True) is True


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"url": "file:///etc/passwd"}, "url"),
        ({"url": "ftp://example.org/x"}, "url"),
        ({"retries": -1}, "retries"),
        ({"backoff": -0.5}, "backoff"),
        ({"timeout": 0}, "timeout"),
        ({"sha256": "abc"}, "sha256"),
        ({"expected_size": -3}, "expected_size"),
    ],
)
def test_bad_arguments_are_config_errors(tmp_path: Path, kwargs: dict[str, object], parameter: str) -> None:
    args: dict[str, object] = {"url": "http://127.0.0.1:9/x", **kwargs}
    url = args.pop("url")
    with pytest.raises(ConfigError) as info:
        download_file(url, tmp_path / "f", **args)  # type: ignore[arg-type]
    assert info.value.parameter == parameter
    assert list(tmp_path.iterdir()) == []


def test_disk_errors_are_not_retried(server: FixtureServer, tmp_path: Path, delays: list[float]) -> None:
    blocker = tmp_path / "f.part"
    blocker.mkdir()  # opening the .part for writing fails locally, not on the network
    with pytest.raises(OSError) as info:
        download_file(server.url(PATH), tmp_path / "f")
    assert not isinstance(info.value, DownloadError)
    assert delays == []
    assert os.path.isdir(blocker)
