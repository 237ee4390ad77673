"""The one run lifecycle every part goes through (``runs.open_run``) and who owns the engine (``engine.engine_for_run``)."""

from __future__ import annotations

import json
import warnings

import pytest

from folkscope.engine import Engine, EngineConfig, agreeing_config, engine_for_run
from folkscope.errors import CaveatWarning, ConfigError
from folkscope.runs import Caveat, Manifest, open_run, read_manifest, record_caveats


def _manifest(key: str = "ab" * 32) -> Manifest:
    return Manifest(part="numeric", fingerprint=key, config={"dataset": "colors"})


def test_a_run_writes_config_manifest_and_log_first_and_warns_its_caveats_once_in_place(tmp_path):
    final = tmp_path / "numeric-colors" / "m" / "base-abababab"
    with pytest.warns(CaveatWarning, match="base-abababab: Half the options were unscored."):
        with open_run(final, _manifest(), config={"dataset": "colors"}) as folder:
            assert folder != final and not final.exists()  # staged beside it until the block ends
            assert json.loads((folder / "config.json").read_text()) == {"dataset": "colors"}
            assert read_manifest(folder).fingerprint == "ab" * 32
            import logging

            logging.getLogger("folkscope.test").warning("kept with the results")
            record_caveats(folder, [Caveat("unscored-options", "Half the options were unscored.")])
    assert (final / "run.log").read_text().count("kept with the results") == 1
    assert read_manifest(final).caveats == ({"code": "unscored-options", "message": "Half the options were unscored."},)


def test_a_failed_run_leaves_no_folder_and_warns_nothing_and_a_rerun_continues(tmp_path):
    final = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CaveatWarning)  # no caveat may be raised for a run that did not finish
        with pytest.raises(RuntimeError, match="killed"):
            with open_run(final, _manifest(), config={}) as folder:
                record_caveats(folder, [Caveat("x", "never shown")])
                (folder / "half.parquet").write_text("partial")
                raise RuntimeError("killed")
    assert not final.exists()
    with open_run(final, _manifest(), config={}) as folder:  # the same configuration picks up its staging folder
        assert (folder / "half.parquet").read_text() == "partial"
    assert final.is_dir()


def test_another_configuration_is_refused_before_anything_is_written(tmp_path):
    final = tmp_path / "run"
    with open_run(final, _manifest("ab" * 32), config={}):
        pass
    with pytest.raises(ConfigError):
        with open_run(final, _manifest("cd" * 32), config={}):
            pytest.fail("entered the folder of another configuration")


class _Closing:
    """An engine stand-in that records whether it was closed."""

    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_given_engine_is_borrowed_and_left_open(tmp_path):
    mine = _Closing()
    with engine_for_run(mine, EngineConfig(model="x", backend="fake"), prompt_version="v") as engine:  # type: ignore[arg-type]
        assert engine is mine
    assert not mine.closed


def test_a_built_engine_is_closed_even_when_the_run_fails(monkeypatch):
    built = _Closing()
    monkeypatch.setattr(Engine, "from_config", classmethod(lambda cls, config, **kw: built))
    with pytest.raises(RuntimeError):
        with engine_for_run(None, EngineConfig(model="x", backend="fake"), prompt_version="v"):
            raise RuntimeError("scoring failed")
    assert built.closed


@pytest.mark.parametrize("owner", ["AllocationConfig", "EpidemiologyConfig", "NumericConfig"])
def test_a_part_config_and_its_engine_config_must_name_one_model(owner):
    given = EngineConfig(model="gpt2", backend="fake")
    assert agreeing_config(given, model="gpt2", backend="fake", owner=owner) is given
    with pytest.raises(ConfigError, match=f"engine_config.model is 'gpt2' but the {owner} says 'default'"):
        agreeing_config(given, model="default", backend="fake", owner=owner)
    with pytest.raises(ConfigError, match="engine_config.backend"):
        agreeing_config(given, model="gpt2", backend="transformers", owner=owner)


def test_every_part_refuses_an_engine_config_of_another_model_before_any_model_loads(tmp_path):
    from folkscope.allocation import AllocationConfig, run_allocation
    from folkscope.epidemiology import EpidemiologyConfig, run_epidemiology
    from folkscope.numeric import NumericConfig, run_numeric

    other = EngineConfig(model="other", backend="fake", use_cache=False)
    runs = [
        lambda: run_allocation(AllocationConfig(model="fk", backend="fake", rounds=2), tmp_path, engine_config=other),
        lambda: run_epidemiology(
            EpidemiologyConfig(model="fk", backend="fake", limit=1), tmp_path, engine_config=other
        ),
        lambda: run_numeric(NumericConfig(model="fk", backend="fake", limit=2), tmp_path, engine_config=other),
    ]
    for run in runs:
        with pytest.raises(ConfigError, match="engine_config.model is 'other'"):
            run()
    assert not any(tmp_path.iterdir())


def test_a_numeric_folder_is_named_after_the_model_the_engine_resolved(tmp_path):
    """``--model default`` is SmolLM2-135M-Instruct in every part's folder names, not ``default`` in one of them."""
    from folkscope.engine.backends.fake import FakeBackend
    from folkscope.numeric import NumericConfig, run_numeric

    engine = Engine(FakeBackend(model="SmolLM2-135M-Instruct"), cache=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CaveatWarning)
        run = run_numeric(NumericConfig(limit=2), tmp_path, engine=engine, heatmap=False)
    assert run.folder.parent == tmp_path / "numeric-colors" / "SmolLM2-135M-Instruct"
