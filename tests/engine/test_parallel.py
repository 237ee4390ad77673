"""``--data-parallel``: requests sharded over Ray workers, answers persisted by the driver into one cache.

The Ray tests share one local cluster (2 CPUs, started once for the module)
and run the fake backend and a random-initialised tiny Llama; a worker that
exits hard is restarted and its unsaved requests redone. Without Ray the flag
is one clear line before anything loads.
"""

from __future__ import annotations

import gc
import json
import logging
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from folkscope.cli.main import main
from folkscope.engine import (
    Engine,
    EngineConfig,
    GenerateRequest,
    GenerationSettings,
    NextTokenRequest,
    PrefixGroupRequest,
    ScoreRequest,
)
from folkscope.engine.batching import lcp
from folkscope.engine.parallel import FAULT_ENV, ParallelBackend, order_keys, shard
from folkscope.errors import ConfigError, MissingDependencyError


def rows(n: int) -> list[PrefixGroupRequest]:
    """Survey-like prefix groups: one row text, both answer orders, shared task description."""
    head = "The following describes a survey respondent.\n"
    return [
        PrefixGroupRequest(
            f"{head}Age: {20 + i % 50}. Job: {['cook', 'nurse', 'clerk'][i % 3]}. Id {i}.\n",
            ("Income? A. low B. high\nAnswer:", "Income? A. high B. low\nAnswer:"),
            (" A", " B"),
        )
        for i in range(n)
    ]


# ---------------------------------------------------------------------- sharding (no Ray needed)
@given(st.lists(st.text(alphabet="ab\n", max_size=6), max_size=60), st.integers(1, 5))
def test_shards_are_contiguous_runs_of_the_sorted_order_covering_everything_once(keys, workers):
    parts = shard(keys, workers)
    assert len(parts) == workers
    assert [i for part in parts for i in part] == sorted(range(len(keys)), key=lambda i: (keys[i], i))
    if len(keys) > workers:
        slack = len(keys) // (8 * workers)
        even = len(keys) / workers
        assert all(abs(len(part) - even) <= 2 * slack + 1 for part in parts)
    assert shard(keys, workers) == parts  # deterministic


@given(st.lists(st.text(alphabet="ab\n", max_size=6), max_size=60), st.integers(1, 5), st.integers(1, 9))
def test_window_shards_are_whole_windows_of_the_sorted_order(keys, workers, window):
    parts = shard(keys, workers, window=window)
    order = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    assert len(parts) == workers and [i for part in parts for i in part] == order
    start = 0
    for part in parts:  # every shard starts on a window boundary: a worker plans the windows one process would
        assert start % window == 0 or not part
        start += len(part)
    windows = -(-len(keys) // window)
    busy = [p for p in parts if p]
    assert len(busy) == min(workers, windows)
    assert max((len(p) for p in busy), default=0) <= -(-windows // workers) * window


def test_a_cut_falls_where_neighbours_share_the_least():
    # 16 keys in 2 families; the even split (8) is inside family "x", the family border at 7 is within the slack (1)
    keys = [f"x-long-shared-prefix-{i}" for i in range(7)] + [f"y-{i}" for i in range(9)]
    left, right = shard(keys, 2)
    assert left == list(range(7)) and right == list(range(7, 16))
    assert lcp(keys[left[-1]], keys[right[0]]) == 0


def test_order_keys_are_rendered_prompts_and_a_groups_prefix_with_its_first_suffix():
    reqs = [ScoreRequest("b?", ("x",)), PrefixGroupRequest("a:", ("1", "2"), ("x",)), GenerateRequest("c")]
    assert order_keys(reqs, str) == ["b?", "a:1", "c"]


# ---------------------------------------------------------------------- checks and the missing extra
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"data_parallel": 0}, "--data-parallel must be >= 1, got 0"),
        ({"backend": "litellm", "model": "openai/x", "ray_address": "auto"}, "--ray-address applies to local backends"),
        ({"backend": "litellm", "model": "openai/x", "data_parallel": 2}, "--data-parallel applies to local backends"),
        ({"window": 0}, "--plan-window must be >= 1, got 0"),
        ({"backend": "vllm", "window": 8}, "--plan-window applies to the transformers and fake backends"),
        ({"backend": "litellm", "model": "openai/x", "window": 8}, "--plan-window applies to local backends"),
    ],
)
def test_wrong_data_parallel_settings_are_one_line(kwargs, message):
    with pytest.raises(ConfigError, match=message) as info:
        EngineConfig(**kwargs)
    assert "\n" not in str(info.value)


def test_without_ray_data_parallel_is_one_line_naming_the_extra_before_anything_loads(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets when it is not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'folkscope\[ray\]'") as info:
        EngineConfig(model="fake", backend="fake", data_parallel=2)
    assert "--data-parallel 2" in str(info.value) and "\n" not in str(info.value)
    argv = [
        "run",
        "--model",
        str(tmp_path / "never-loaded"),
        "--task",
        "NISTIncome",
        "--data-parallel",
        "2",
        "--results-dir",
        str(tmp_path),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'folkscope[ray]'" in err and "Traceback" not in err


# ---------------------------------------------------------------------- on a local Ray cluster
@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()


def parallel_engine(tmp_path: Path, workers: int = 2, **options) -> Engine:
    config = EngineConfig(
        model="fake", backend="fake", data_parallel=workers, cache_dir=str(tmp_path / "cache"), **options
    )
    return Engine.from_config(config, progress=False)


def cache_rows(folder: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(folder / "results.sqlite") as conn:
        return sorted(conn.execute("SELECT key, result FROM results").fetchall())


def test_fake_backend_two_workers_answer_as_one_process_into_one_cache(ray_cluster, tmp_path):
    groups = rows(60)
    scores = [ScoreRequest(f"Q{i}: 2+{i}=", (" 4", " 5 or more")) for i in range(30)]
    generations = [GenerateRequest(f"Say {i}:", GenerationSettings(max_new_tokens=4)) for i in range(10)]
    single = Engine.from_config(
        EngineConfig(model="fake", backend="fake", batch_tokens=512, window=16, cache_dir=str(tmp_path / "one")),
        progress=False,
    )
    expected = (single.score_groups(groups), single.score(scores), single.generate(generations))
    single.close()

    with parallel_engine(tmp_path, batch_tokens=512, window=16) as engine:
        assert isinstance(engine.backend, ParallelBackend) and engine.identity() == single.identity()
        got = (engine.score_groups(groups + groups[:5]), engine.score(scores), engine.generate(generations))
        assert got[0][:60] == expected[0] and got[0][60:] == expected[0][:5]  # duplicates answered once, in input order
        assert got[1:] == expected[1:]
        assert engine.stats.computed == 100 and engine.backend.stats.requests == 100
        assert all(latest.get("requests", 0) > 0 for latest in engine.backend._latest)  # both workers did work
    # the one cache holds each answer once, exactly as the single process's cache does
    merged = cache_rows(tmp_path / "cache")
    assert len(merged) == 100 and merged == cache_rows(tmp_path / "one")

    with parallel_engine(tmp_path, batch_tokens=512, window=16) as again:  # a rerun computes nothing
        assert again.score_groups(groups) == expected[0] and again.stats.computed == 0 and again.stats.cached == 60


def test_progress_counts_the_whole_run_across_workers(ray_cluster, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("FOLKSCOPE_PROGRESS_INTERVAL", raising=False)
    config = EngineConfig(
        model="fake", backend="fake", data_parallel=2, cache_dir=str(tmp_path), batch_tokens=256, window=10
    )
    with Engine.from_config(config, progress=True) as engine:
        engine.score_groups(rows(40), unit="rows")
    err = capsys.readouterr().err
    assert "scoring: 0/40 rows (0%), starting" in err
    assert "scoring: 40/40 rows (100%)" in err and "rows/s, done in" in err


@pytest.mark.parametrize("after", [0, 2])  # before its first batch, and after two
def test_a_worker_that_dies_is_restarted_counted_once_and_only_its_unsaved_requests_are_redone(
    ray_cluster, tmp_path, monkeypatch, caplog, after
):
    """Issue 28 (14): calls sent while Ray restarted the worker failed at once and each counted as a death ("died 4 times")."""
    marker = tmp_path / "exited"
    monkeypatch.setenv(
        FAULT_ENV, f"{after}:{marker}"
    )  # the first worker to have returned that many batches exits hard, once
    groups = rows(80)
    expected = Engine.from_config(
        EngineConfig(model="fake", backend="fake", batch_tokens=256, window=20, use_cache=False), progress=False
    ).score_groups(groups)
    with (
        caplog.at_level(logging.WARNING, logger="folkscope.engine.parallel"),
        parallel_engine(tmp_path, batch_tokens=256, window=20) as engine,
    ):
        assert engine.score_groups(groups) == expected
        assert marker.exists() and sum(engine.backend._deaths) == 1  # one death, counted once
        # nothing answered twice: the restarted worker skipped what its first life had returned
        assert engine.stats.computed == 80 and engine.backend.stats.requests == 80
    assert caplog.text.count("was restarted by Ray (restart 1 of at most 3)") == 1
    assert "restart 2" not in caplog.text and "waiting for Ray to restart it" in caplog.text
    assert len(cache_rows(tmp_path / "cache")) == 80


def test_a_workers_config_error_reaches_the_caller_as_itself(ray_cluster, tmp_path):
    with (
        parallel_engine(tmp_path) as engine,
        pytest.raises(ConfigError, match="next-token requests need single tokens") as info,
    ):
        engine.next_token([NextTokenRequest("Pick:", ("yes please", "no"))])
    assert "\n" not in str(info.value)


def test_too_many_workers_for_the_cluster_is_one_line(ray_cluster, tmp_path):
    with pytest.raises(ConfigError, match=r"--data-parallel 3 needs 3 CPUs \(1 per worker\) but the Ray cluster has 2"):
        parallel_engine(tmp_path, workers=3)


def test_random_init_llama_two_workers_score_as_one_process_to_the_last_bit(
    ray_cluster, tmp_path, random_init_llama_dir, monkeypatch
):
    """Shards are whole planning windows, so each worker runs exactly one process's batches: equal floats, not close ones.

    Also when a worker dies after its first batch: a restart loads the model again (seconds, during which every call
    to it fails at once), is counted once, and the new life redoes only the batches not received, as planned."""
    pytest.importorskip("torch")
    groups = rows(24)
    base = {"model": str(random_init_llama_dir), "device": "cpu", "batch_tokens": 1024, "window": 6}
    with Engine.from_config(EngineConfig(**base, use_cache=False), progress=False) as single:
        expected = single.score_groups(groups)
    config = EngineConfig(**base, data_parallel=2, cache_dir=str(tmp_path / "cache"))
    monkeypatch.setenv(FAULT_ENV, f"1:{tmp_path / 'exited'}")
    with Engine.from_config(config, progress=False) as engine:
        got = engine.score_groups(groups)
        assert engine.identity() == single.identity() and single.identity()["backend"]["window"] == 6
        assert all(latest.get("requests", 0) > 0 for latest in engine.backend._latest)  # both workers did work
        assert (tmp_path / "exited").exists() and sum(engine.backend._deaths) == 1
        assert engine.backend.stats.requests == 24  # nothing computed twice
    assert len(got) == len(expected) == 24 and got == expected


def test_cli_run_with_two_workers_writes_byte_identical_scores_and_a_rerun_computes_nothing(
    ray_cluster, tmp_path, capsys, monkeypatch
):
    """Also when a worker dies once on the way (issue 28, 14: the run exited 2 after "died 4 times")."""

    def run(folder: str, *extra: str) -> Path:
        argv = [
            "run",
            "--task",
            "NISTIncome",
            "--subsampling",
            "0.01",
            "--model",
            "fake",
            "--inference-backend",
            "fake",
            "--results-dir",
            str(tmp_path / folder),
            "--cache-dir",
            str(tmp_path / f"cache-{folder}"),
            "--n-bootstrap",
            "10",
            "--no-baselines",
            *extra,
        ]
        assert main(argv) == 0
        gc.collect()  # the run's engine and its Ray workers go with it
        return Path(capsys.readouterr().out.split("run folder: ")[1].splitlines()[0])

    one = run("one", "--plan-window", "4")
    monkeypatch.setenv(FAULT_ENV, f"1:{tmp_path / 'exited'}")  # a worker exits hard after its first batch, once
    two = run("two", "--data-parallel", "2", "--plan-window", "4")
    monkeypatch.delenv(FAULT_ENV)
    assert (tmp_path / "exited").exists()
    assert one.name == two.name  # the worker count is not part of the run's identity
    assert (one / "scores.parquet").read_bytes() == (two / "scores.parquet").read_bytes()
    (two / "metrics.json").unlink()
    rerun = run("two", "--data-parallel", "2", "--plan-window", "4")
    stats = json.loads((rerun / "metrics.json").read_text())["scoring"]["engine_stats"]
    assert stats["computed"] == 0 and stats["cached"] > 0


def test_module_examples():
    import doctest

    from folkscope.engine import parallel

    assert doctest.testmod(parallel).failed == 0


def test_a_cpu_transformers_worker_gets_this_process_thread_count():
    """Ray gives a worker one thread; a CPU matrix product sums differently with another count, so workers copy ours."""
    torch = pytest.importorskip("torch")
    from folkscope.engine.parallel import _torch_threads

    assert _torch_threads(EngineConfig(model="default"), gpus_each=0) == torch.get_num_threads()
    assert (
        _torch_threads(EngineConfig(model="default"), gpus_each=1) is None
    )  # a GPU worker: threads do not set its sums
    assert _torch_threads(EngineConfig(model="fake", backend="fake"), gpus_each=0) is None
