"""``manifest.json``: what a run folder holds, readable without the part that wrote it.

Every part writes one into each run folder. It names the part, the run's
configuration and fingerprint, the engine that answered, the data, the
package versions and the folder's declared tables (from
:data:`folkscope.registry.PARTS`). With it, ``folkscope rescore`` knows which
part to call, the leaderboard can list runs of every part, and a part can read
another part's results through :func:`read_table` without importing it.

Run folders written before manifests existed are recognised by their
``config.json`` (each part declares the keys that identify its own) and read
as *legacy* manifests; re-scoring such a folder writes its manifest.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope._json import fingerprint, read_json, write_json
from folkscope.errors import ConfigError, DataError
from folkscope.registry import PARTS, part

__all__ = [
    "MANIFEST_FILE",
    "Manifest",
    "check_same_run",
    "engine_model_name",
    "package_versions",
    "read_manifest",
    "read_table",
]

#: the manifest's file name in every run folder
MANIFEST_FILE = "manifest.json"
CONFIG_FILE = "config.json"
#: bumped when the manifest's layout changes incompatibly
SCHEMA = 1

_PACKAGES = (
    "folkscope",
    "numpy",
    "pandas",
    "pyarrow",
    "scipy",
    "scikit-learn",
    "torch",
    "transformers",
    "vllm",
    "litellm",
)


def package_versions() -> dict[str, str]:
    """Python and the installed versions of the packages that can change a run's numbers."""
    out = {"python": platform.python_version()}
    for pkg in _PACKAGES:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


def engine_model_name(engine: Mapping[str, Any] | None) -> str:
    """The model name an engine identity records (``""`` when it records none).

    >>> engine_model_name({"backend": {"model": {"name": "SmolLM2-135M-Instruct"}}}), engine_model_name(None)
    ('SmolLM2-135M-Instruct', '')
    """
    backend = engine.get("backend") if isinstance(engine, Mapping) else None
    model = backend.get("model") if isinstance(backend, Mapping) else None
    return str((model.get("name") if isinstance(model, Mapping) else model) or "")


@dataclass(frozen=True)
class Manifest:
    """What one run folder is: its part, configuration, engine, data, versions and tables.

    Parameters
    ----------
    part : str
        A name in :data:`folkscope.registry.PARTS`.
    fingerprint : str
        Hash of everything that defines the run's numbers (the folder is
        named after it; a folder of another fingerprint is another run).
    config : mapping
        The part's configuration, as JSON.
    engine : mapping, optional
        The engine's identity (model, backend, settings that change answers).
    data : mapping, optional
        Where the rows came from (files, hashes, filters, counts).
    versions : mapping
        :func:`package_versions` when the run was written.
    created : str
        UTC time the run was first written (ISO 8601).
    caveats : sequence of mapping
        Why some of the run's numbers may mislead, ``{"code", "message"}``
        each (:mod:`folkscope.runs.caveats`); written when the run is
        analysed, rewritten by every rescore.
    legacy : bool
        True for a manifest reconstructed from a folder written before manifests.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> Manifest(part="risk", fingerprint="ab" * 32, config={"seed": 1}).write(folder)
    >>> read_manifest(folder).part, sorted(read_manifest(folder).tables)
    ('risk', ['feature_importance', 'metrics', 'scores'])
    """

    part: str
    fingerprint: str
    config: Mapping[str, Any]
    engine: Mapping[str, Any] | None = None
    data: Mapping[str, Any] | None = None
    versions: Mapping[str, str] = field(default_factory=package_versions)
    created: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    caveats: Sequence[Mapping[str, str]] = ()
    legacy: bool = False

    def __post_init__(self) -> None:
        part(self.part)  # an unknown part is refused with the known ones listed
        object.__setattr__(self, "caveats", tuple(self.caveats))  # read back from a JSON list: equal to the written one
        if not isinstance(self.fingerprint, str) or not self.fingerprint:
            raise ConfigError("a manifest needs the run's fingerprint", parameter="fingerprint", value=self.fingerprint)

    @property
    def model_name(self) -> str:
        """The model's name as its engine resolved it, the same in every part's runs of one model.

        A handle such as ``default`` names the model only through the engine
        identity (``SmolLM2-135M-Instruct``); folders, boards and comparisons
        that showed the handle would list one model twice.

        >>> Manifest(part="numeric", fingerprint="ab", config={"model": "default"},
        ...          engine={"backend": {"model": {"name": "SmolLM2-135M-Instruct"}}}).model_name
        'SmolLM2-135M-Instruct'
        """
        return engine_model_name(self.engine) or str(
            self.config.get("model_name") or self.config.get("model") or "model"
        )

    @property
    def tables(self) -> dict[str, Any]:
        """The folder's declared tables (name -> file, what it holds, whether optional)."""
        return {name: spec.to_dict() for name, spec in part(self.part).tables.items()}

    def to_dict(self) -> dict[str, Any]:
        """The manifest as written to ``manifest.json`` (with ``schema`` and ``tables``)."""
        out = {"schema": SCHEMA, **{f.name: getattr(self, f.name) for f in fields(self)}, "tables": self.tables}
        out.pop("legacy")
        out["caveats"] = list(self.caveats)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Manifest:
        """Inverse of :meth:`to_dict`; a newer schema or unknown part is refused in one line."""
        schema = data.get("schema")
        if schema != SCHEMA:
            raise DataError(
                f"manifest schema {schema!r} is not the one this folkscope reads ({SCHEMA}); upgrade folkscope"
            )
        known = {f.name for f in fields(cls)} - {"legacy"}
        return cls(**{k: v for k, v in data.items() if k in known})

    def write(self, folder: str | Path) -> None:
        """Write ``folder/manifest.json`` atomically."""
        write_json(Path(folder) / MANIFEST_FILE, self.to_dict())


def _read_record(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in a run folder's ``path``; anything else is a damaged folder, said in one line."""
    try:
        data = read_json(path)
    except ValueError as exc:
        raise DataError(f"{path} is not valid JSON ({exc}); the run folder is damaged, run it again") from None
    if not isinstance(data, dict):
        raise DataError(f"{path} does not hold {what}; the run folder is damaged, run it again")
    return data


def _legacy(folder: Path) -> Manifest:
    """The manifest of a run folder written before manifests, from its ``config.json``."""
    config_file = folder / CONFIG_FILE
    if not config_file.is_file():
        raise DataError(
            f"{folder} is not a finished run folder: no {MANIFEST_FILE} or {CONFIG_FILE}; pass a folder a run wrote"
        )
    config = _read_record(config_file, "a run configuration")
    for entry in PARTS.values():
        if entry.legacy_keys and all(key in config for key in entry.legacy_keys):  # parts born with manifests have none
            return Manifest(
                part=entry.name,
                fingerprint=str(config.get("fingerprint") or fingerprint(config)),
                config=config,
                engine=config.get("engine"),
                data=config.get("data"),
                versions=config.get("versions") or {},
                created="",
                legacy=True,
            )
    raise DataError(
        f"{folder}: {CONFIG_FILE} matches no known part ({', '.join(PARTS)}); pass a folder a folkscope run wrote"
    )


def read_manifest(folder: str | Path) -> Manifest:
    """The manifest of a run folder (reconstructed for a folder from before manifests).

    Raises
    ------
    DataError
        Not a run folder, a damaged manifest, or one from a newer folkscope.
    """
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    if not path.is_file():
        return _legacy(folder)
    return Manifest.from_dict(_read_record(path, "a manifest"))


def recorded_fingerprint(folder: Path) -> str | None:
    """The fingerprint a run folder records (its manifest's, else its config.json's), or None when none can be read."""
    for name in (MANIFEST_FILE, CONFIG_FILE):
        try:
            data = read_json(folder / name)
        except (OSError, ValueError):  # absent, or cut short by a killed writer: overwritten by this run
            continue
        if isinstance(data, dict) and isinstance(data.get("fingerprint"), str):
            return str(data["fingerprint"])
    return None


def check_same_run(folder: str | Path, expected: str) -> None:
    """Refuse to write a run into a folder that holds a run of another configuration.

    A folder is named after a prefix of its fingerprint, so another
    configuration there means a hash prefix collision or a folder copied by
    hand; mixing the two would corrupt both.

    Raises
    ------
    ConfigError
        The folder records another fingerprint.
    """
    recorded = recorded_fingerprint(Path(folder))
    if recorded is not None and recorded != expected:
        raise ConfigError(
            f"results folder {folder} holds a run of another configuration; pass another --results-dir",
            parameter="results_dir",
            value=str(folder),
        )


def read_table(folder: str | Path, name: str) -> pd.DataFrame:
    """A declared table of any part's run folder, as a DataFrame (parquet or CSV).

    This is how one part reads another's results: through the manifest's
    declared tables, never by importing the part that wrote them.

    Raises
    ------
    DataError
        The part declares no such table, or the file is missing.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    tables = manifest.tables
    if name not in tables:
        raise DataError(f"a {manifest.part} run declares no table {name!r}; its tables: {', '.join(sorted(tables))}")
    path = folder / tables[name]["file"]
    if not path.is_file():
        raise DataError(f"{folder} has no {tables[name]['file']} ({name}: {tables[name]['about']})")
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix == ".csv":
        return pd.read_csv(path)
    raise DataError(f"table {name!r} of a {manifest.part} run is {path.name}, not a table file; read it as JSON")
