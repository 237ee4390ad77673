"""Flags that cannot work are refused before any data or model loads (issue 28, item 18).

Found by the third fault campaign: ``numeric --compare-to /nonexistent``
scored every problem (hours on the default model) and then failed with a
traceback; ``--dtype float7`` and ``--device cuda:5`` were reported only
after the data load and the GGUF conversion (160-270 s). Loading is a
tripwire here, so a check that comes after it fails the test.
"""

from __future__ import annotations

import pytest

from folkscope.cli.main import main, run_acs_benchmark_main

#: every command that talks to a model, with what it needs besides the engine flags
MODEL_COMMANDS = {
    "run": ["run", "--task", "NISTIncome"],
    "evidence": ["evidence", "--task", "NISTIncome"],
    "numeric": ["numeric", "run", "--limit", "2"],
    "epidemiology run": ["epidemiology", "run", "--dataset", "anes96"],
    "allocation run": ["allocation", "run"],
}


@pytest.fixture
def tripwire(monkeypatch):
    """Loading a model, survey rows or resumes fails the test."""

    def boom(*_args, **_kwargs):
        raise AssertionError("data or model loaded before the flags were checked")

    monkeypatch.setattr("folkscope.engine.Engine.from_config", boom)
    monkeypatch.setattr("folkscope.engine.models.resolve_model", boom, raising=False)
    monkeypatch.setattr("folkscope.risk.run.Benchmark.make_benchmark", boom)
    monkeypatch.setattr("folkscope.epidemiology.run.load_dataset", boom)
    monkeypatch.setattr("folkscope.cli.numeric_cmd.run_numeric", boom)  # the name the command calls
    monkeypatch.setattr("folkscope.allocation.run_allocation", boom)


def _one_line(capsys, argv, call=main) -> str:
    code = call([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("command", MODEL_COMMANDS.values(), ids=MODEL_COMMANDS.keys())
def test_an_unknown_dtype_is_refused_before_anything_loads(capsys, tmp_path, tripwire, command):
    err = _one_line(capsys, [*command, "--dtype", "float7", "--results-dir", tmp_path / "r"])
    assert "dtype must be one of float32, bfloat16, float16 (or auto), got 'float7'" in err


@pytest.mark.parametrize("command", MODEL_COMMANDS.values(), ids=MODEL_COMMANDS.keys())
def test_a_malformed_device_is_refused_before_anything_loads(capsys, tmp_path, tripwire, command):
    err = _one_line(
        capsys, [*command, "--device", "gpu0", "--inference-backend", "fake", "--results-dir", tmp_path / "r"]
    )
    assert "device must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto', got 'gpu0'" in err


def _gpus(monkeypatch, n: int) -> None:
    """Pretend this machine has ``n`` CUDA GPUs (torch's own answers, nothing else)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: n)


@pytest.mark.parametrize("command", MODEL_COMMANDS.values(), ids=MODEL_COMMANDS.keys())
def test_a_gpu_this_machine_lacks_is_refused_before_anything_loads(capsys, tmp_path, tripwire, monkeypatch, command):
    _gpus(monkeypatch, 2)
    err = _one_line(capsys, [*command, "--device", "cuda:5", "--results-dir", tmp_path / "r"])
    assert "device 'cuda:5' was asked for but torch sees 2 CUDA GPUs (cuda:0 to cuda:1)" in err


def test_no_gpu_at_all_is_said_so(capsys, tripwire, monkeypatch):
    _gpus(monkeypatch, 0)
    err = _one_line(capsys, ["--task", "NISTIncome", "--device", "cuda"], call=run_acs_benchmark_main)
    assert "device 'cuda' was asked for but torch sees no CUDA GPU; use device='cpu'" in err


def test_a_gpu_the_machine_has_passes(monkeypatch):
    from folkscope.cli.engine_args import engine_config_from_args
    from folkscope.cli.main import build_parser

    _gpus(monkeypatch, 2)
    args = build_parser().parse_args(["numeric", "run", "--device", "cuda:1", "--dtype", "bf16"])
    assert engine_config_from_args(args).device == "cuda:1"


def test_the_fake_backend_takes_any_well_formed_device():
    """A dry run on a laptop may name the GPU the real run will use: the fake backend only records it."""
    from folkscope.cli.engine_args import engine_config_from_args
    from folkscope.cli.main import build_parser

    args = build_parser().parse_args(["numeric", "run", "--inference-backend", "fake", "--device", "cuda:7"])
    assert engine_config_from_args(args).device == "cuda:7"


# ----------------------------------------------------------------------------- numeric --compare-to
FAKE = ["numeric", "run", "--inference-backend", "fake", "--model", "fk", "--limit", "3"]


def test_compare_to_a_missing_folder_is_refused_before_scoring(capsys, tmp_path, tripwire):
    err = _one_line(capsys, [*FAKE, "--compare-to", tmp_path / "nonexistent", "--results-dir", tmp_path / "r"])
    assert "--compare-to" in err and "does not exist" in err


def test_compare_to_a_folder_that_is_no_run_is_refused_before_scoring(capsys, tmp_path, tripwire):
    (tmp_path / "empty").mkdir()
    err = _one_line(capsys, [*FAKE, "--compare-to", tmp_path / "empty", "--results-dir", tmp_path / "r"])
    assert "is not a finished numeric run" in err


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A finished numeric run of three problems (fake backend)."""
    from folkscope.engine import EngineConfig
    from folkscope.numeric import NumericConfig, run_numeric

    folder = tmp_path_factory.mktemp("reference")
    return run_numeric(
        NumericConfig(engine=EngineConfig(model="fk", backend="fake", use_cache=False), limit=3),
        folder,
        heatmap=False,
    ).folder


def test_compare_to_a_run_of_other_problems_is_refused_before_scoring(capsys, tmp_path, tripwire, reference):
    err = _one_line(capsys, [*FAKE[:-1], "4", "--compare-to", reference, "--results-dir", tmp_path / "r"])
    assert "holds other problems (1 of its 3 are this run's 4)" in err


def test_compare_to_a_run_of_the_same_problems_is_compared(capsys, tmp_path, reference):
    assert (
        main(
            [
                *FAKE,
                "--chat",
                "--no-cache",
                "--no-heatmap",
                "--compare-to",
                str(reference),
                "--results-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert f"this run minus {reference.name}: " in capsys.readouterr().out
