"""The engine: deduplication, cache hits, namespaces (no cross-model reuse), order, progress."""

from __future__ import annotations

import pytest

from folkscope.engine import Engine, GenerateRequest, NextTokenRequest, ResultCache, ScoreRequest
from folkscope.engine.backends.fake import FakeBackend
from folkscope.engine.progress import Progress, progress_mode
from folkscope.errors import BackendError, ConfigError

REQS = [ScoreRequest(f"Row {i}: answer A or B? ", ("A", "B")) for i in range(10)]


def engine_for(tmp_path, **fake_options) -> Engine:
    version = fake_options.pop("prompt_version", "v1")
    return Engine(FakeBackend(**fake_options), cache=ResultCache(tmp_path), prompt_version=version, progress=False)


def test_duplicates_are_computed_once(fake_engine):
    out = fake_engine.score(REQS[:3] + REQS[:3])
    assert out[:3] == out[3:]
    assert fake_engine.stats.requested == 6 and fake_engine.stats.unique == 3 and fake_engine.stats.computed == 3
    assert fake_engine.backend.stats.requests == 3


def test_second_run_is_served_from_the_cache(tmp_path):
    first = engine_for(tmp_path).score(REQS)
    again = engine_for(tmp_path)
    assert again.score(REQS) == first
    assert again.stats.cached == 10 and again.stats.computed == 0 and again.backend.stats.batches == 0


def test_partial_cache_computes_only_the_rest(tmp_path):
    engine_for(tmp_path).score(REQS[:4])
    second = engine_for(tmp_path)
    out = second.score(REQS)
    assert second.stats.cached == 4 and second.stats.computed == 6
    assert out == Engine(FakeBackend(), cache=None).score(REQS)


@pytest.mark.parametrize(
    "change",
    [
        {"revision": "1"},
        {"model": "other-model"},
        {"dtype": "bfloat16"},
        {"prompt_version": "v2"},
        {"seed": 3},
        {"device": "cuda"},
    ],
    ids=["revision", "model", "dtype", "prompt_version", "weights", "device"],
)
def test_cache_key_changes_with_model_settings_and_prompt_version(tmp_path, change):
    base = engine_for(tmp_path)
    base.score(REQS)
    other = engine_for(tmp_path, **change)
    assert other.namespace != base.namespace
    other.score(REQS)
    assert other.stats.cached == 0 and other.stats.computed == 10  # no cross-model reuse
    assert other.cache.count(base.namespace) == 10 and other.cache.count(other.namespace) == 10


def test_cache_key_is_stable_for_identical_settings(tmp_path):
    assert engine_for(tmp_path).namespace == engine_for(tmp_path).namespace


def test_wrong_request_type_is_rejected(fake_engine):
    with pytest.raises(ConfigError, match="expected ScoreRequest"):
        fake_engine.score([NextTokenRequest("x", ("A",))])
    with pytest.raises(ConfigError, match="expected GenerateRequest"):
        fake_engine.generate([REQS[0]])


def test_constructor_checks():
    with pytest.raises(ConfigError, match="prompt_version"):
        Engine(FakeBackend(), prompt_version=None)
    with pytest.raises(ConfigError, match="cache"):
        Engine(FakeBackend(), cache="/tmp/somewhere")


def test_empty_request_list(fake_engine):
    assert fake_engine.score([]) == [] and fake_engine.generate([]) == []


def test_results_written_before_a_failure_are_kept(tmp_path):
    boom = ConnectionError("lost")
    engine = engine_for(tmp_path, batch_tokens=30, failures=lambda n: boom if n == 3 else None)
    with pytest.raises(ConnectionError):
        engine.score(REQS)
    saved = engine.cache.count()
    assert 0 < saved < 10
    resumed = engine_for(tmp_path, batch_tokens=30)
    assert resumed.score(REQS) == Engine(FakeBackend(), cache=None).score(REQS)
    assert resumed.stats.cached == saved and resumed.stats.computed == 10 - saved


def test_backend_that_drops_results_is_an_error():
    class Lossy(FakeBackend):
        def score(self, requests, *, done=None):
            for batch in super().score(requests, done=done):
                yield batch[:-1]

    with pytest.raises(BackendError, match="returned no result"):
        Engine(Lossy(), cache=None).score(REQS)


def test_from_model_with_fake_backend(tmp_path):
    engine = Engine.from_model("toy", backend="fake", cache_dir=tmp_path, prompt_version="p1", progress=False)
    engine.generate([GenerateRequest("hi")])
    assert engine.cache.count() == 1 and (tmp_path / "results.sqlite").exists()
    assert engine.identity()["backend"]["model"]["name"] == "toy"
    assert "fake" in repr(engine)
    engine.close()
    assert Engine.from_model("toy", backend="fake", use_cache=False).cache is None


def test_from_model_unknown_backend():
    with pytest.raises(ConfigError, match="unknown backend 'vllm-nope'; available"):
        Engine.from_model("x", backend="vllm-nope")


def test_count_tokens_and_single_token_helpers(fake_engine):
    assert fake_engine.count_tokens(["ab c", "x"]) == [3, 1]
    assert fake_engine.is_single_token(" A") and not fake_engine.is_single_token("AB")
    assert fake_engine.tokenizer.decode(fake_engine.tokenizer.encode("héllo")) == "héllo"


def test_progress_mode_follows_where_stderr_goes(monkeypatch):
    assert progress_mode(False) == "off"
    monkeypatch.delenv("CI", raising=False)
    assert progress_mode() == "lines"  # pytest captures stderr: a pipe, not a terminal
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert progress_mode() == progress_mode(True) == "bar"
    monkeypatch.setenv("CI", "1")
    assert progress_mode() == "lines"  # CI logs get plain lines, never a live bar


def test_forced_progress_bar_counts_requests_and_tokens(monkeypatch):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    monkeypatch.delenv("CI", raising=False)
    engine = Engine(FakeBackend(batch_tokens=40), cache=None, progress=True)
    engine.score(REQS)
    with Progress(5, description="x", enabled=True) as bar:
        assert bar.mode == "bar"
        bar.advance(2, tokens=50)
        bar.advance(3, tokens=50)
    assert bar.done == 5 and bar.tokens == 100


def test_without_a_terminal_progress_is_plain_lines_in_the_callers_unit(tmp_path, monkeypatch, capsys, caplog):
    """Under nohup or a pipe: a line at the start, one per interval (0 here: every update) and one at the end."""
    monkeypatch.setenv("FOLKSCOPE_PROGRESS_INTERVAL", "0")
    caplog.set_level("INFO", logger="folkscope.progress")
    engine = Engine(FakeBackend(batch_tokens=40), cache=ResultCache(tmp_path), progress=None)
    engine.score(REQS, unit="rows", description="scoring")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "scoring: 0/10 rows (0%), starting"
    assert any(line.startswith("scoring: ") and " rows/s, ETA " in line for line in lines[1:-1])
    assert lines[-1].startswith("scoring: 10/10 rows (100%), ") and " rows/s, done in " in lines[-1]
    assert [r.getMessage() for r in caplog.records] == lines  # the run's log file gets the same lines


def test_interval_spaces_the_lines_out(monkeypatch, capsys):
    monkeypatch.setenv("FOLKSCOPE_PROGRESS_INTERVAL", "3600")
    with Progress(100, description="scoring", unit="rows") as bar:
        for _ in range(100):
            bar.advance(1)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "0/100 rows" in lines[0] and "100/100 rows" in lines[1]


def test_the_cache_reuse_is_said_before_work_starts(tmp_path, capsys):
    engine_for(tmp_path).score(REQS[:4])
    Engine(FakeBackend(), cache=ResultCache(tmp_path), prompt_version="v1").score(REQS, unit="rows")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "scoring: 4 of 10 rows already answered (result cache); computing 6"
    assert err[1] == "scoring: 0/6 rows (0%), starting"
    Engine(FakeBackend(), cache=ResultCache(tmp_path), prompt_version="v1").score(REQS, unit="rows")
    assert capsys.readouterr().err.splitlines() == [
        "scoring: all 10 rows already answered (result cache); nothing to compute"
    ]
    engine_for(tmp_path).score(REQS)  # progress=False: nothing on the terminal
    assert capsys.readouterr().err == ""


def test_progress_moves_within_a_batch(monkeypatch):
    """One batch of 10 requests: the backend's partial reports move the count before the batch completes."""
    seen: list[float] = []
    original = Progress.partial

    def record(self, units):
        seen.append(units)
        original(self, units)

    monkeypatch.setattr(Progress, "partial", record)
    engine = Engine(FakeBackend(batch_tokens=100_000), cache=None, progress=None)
    engine.score(REQS, unit="rows")
    assert engine.backend.stats.batches == 1
    assert len(seen) >= 5 and seen == sorted(seen) and 0 < seen[0] < seen[-1] == 10
    assert engine.backend.on_partial is None  # unhooked after the call


def test_format_of_a_line_and_durations():
    from folkscope.engine.progress import format_duration

    bar = Progress(463, description="scoring", unit="rows", enabled=False)
    assert bar.line() == "scoring: 0/463 rows (0%), starting"
    bar.advance(46)
    assert bar.line().startswith("scoring: 46/463 rows (10%), ") and " rows/s, ETA " in bar.line()
    assert [format_duration(s) for s in (0, 59.6, 60, 3599, 3600, -1)] == [
        "0s",
        "1m00s",
        "1m00s",
        "59m59s",
        "1h00m",
        "?",
    ]
