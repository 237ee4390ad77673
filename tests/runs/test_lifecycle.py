"""The one run lifecycle every part goes through (``runs.open_run``) and who owns the engine (``engine.engine_for_run``)."""

from __future__ import annotations

import dataclasses
import json
import warnings

import pytest

from folkscope.engine import Engine, EngineConfig, engine_for_run
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


PART_CONFIGS = ("allocation:AllocationConfig", "epidemiology:EpidemiologyConfig", "numeric:NumericConfig")


def _config_class(spec: str):
    import importlib

    module, name = spec.split(":")
    return getattr(importlib.import_module(f"folkscope.{module}"), name)


@pytest.mark.parametrize("spec", PART_CONFIGS)
def test_a_part_config_contains_one_engine_config_and_records_only_what_answers(spec):
    """The model and backend are not copied next to an engine config: they are the contained engine's."""
    cls = _config_class(spec)
    engine = EngineConfig(model="gpt2", backend="fake", batch_tokens=512, use_cache=False)
    config = cls(engine=engine)
    assert config.engine is engine and not {"model", "backend"} & {f.name for f in dataclasses.fields(cls)}
    record = config.to_dict()
    assert (record["model"], record["backend"]) == ("gpt2", "fake")
    assert "batch_tokens" not in record and "engine" not in record  # how answers are computed is the manifest's engine
    again = cls.from_dict(record)
    assert again.engine.answering() == engine.answering() and again.to_dict() == record
    with pytest.raises(ConfigError, match="engine must be an EngineConfig, got dict"):
        cls(engine={"model": "gpt2"})
    with pytest.raises(ConfigError, match="unknown .* key"):
        cls.from_dict({**record, "colour": 1})


def test_a_run_builds_its_engine_from_the_config_it_was_given(tmp_path, monkeypatch):
    from folkscope.numeric import NumericConfig, run_numeric

    seen = []
    real = Engine.from_config
    monkeypatch.setattr(
        Engine, "from_config", classmethod(lambda cls, config, **kw: seen.append(config) or real(config, **kw))
    )
    engine = EngineConfig(model="fk", backend="fake", use_cache=False, batch_tokens=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CaveatWarning)
        run = run_numeric(NumericConfig(engine=engine, limit=2), tmp_path, heatmap=False)
    assert seen == [engine] and run.folder.parent.name == "fk"


def test_a_numeric_folder_is_named_after_the_model_the_engine_resolved(tmp_path):
    """``--model default`` is SmolLM2-135M-Instruct in every part's folder names, not ``default`` in one of them."""
    from folkscope.engine.backends.fake import FakeBackend
    from folkscope.numeric import NumericConfig, run_numeric

    engine = Engine(FakeBackend(model="SmolLM2-135M-Instruct"), cache=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CaveatWarning)
        run = run_numeric(NumericConfig(limit=2), tmp_path, engine=engine, heatmap=False)
    assert run.folder.parent == tmp_path / "numeric-colors" / "SmolLM2-135M-Instruct"
