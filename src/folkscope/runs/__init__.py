"""The run folder every part writes (see ``spec/architecture.md``, layer *runs*).

- :func:`run_path`: one layout, ``<results>/<subject>/<model>/<variant>-<hash8>/``;
- :class:`RunFolder`: the folder appears whole or not at all (staged beside
  it, renamed into place), one writer at a time, and a folder of another
  configuration is refused;
- :class:`Manifest`: ``manifest.json`` names the part, config and
  fingerprint, engine, data, versions and declared tables;
  :func:`read_manifest` and :func:`read_table` let any part or tool read any
  part's run without importing that part;
- :func:`open_run`: the one run lifecycle every part goes through (folder,
  log, config, manifest, then its caveats as warnings);
- :class:`Caveat`: why a run's numbers may mislead, recorded in its manifest
  (:func:`record_caveats`) and carried to every place they are shown.
"""

from folkscope.runs.caveats import Caveat, caveat_lines, read_caveats, record_caveats, warn_caveats
from folkscope.runs.folder import RunFolder, RunFolderBusyError
from folkscope.runs.layout import run_path, safe_name
from folkscope.runs.lifecycle import open_run, published_runs
from folkscope.runs.manifest import (
    MANIFEST_FILE,
    Manifest,
    check_same_run,
    engine_model_name,
    package_versions,
    read_manifest,
    read_table,
)

__all__ = [
    "MANIFEST_FILE",
    "Caveat",
    "Manifest",
    "RunFolder",
    "RunFolderBusyError",
    "caveat_lines",
    "check_same_run",
    "engine_model_name",
    "open_run",
    "package_versions",
    "published_runs",
    "read_caveats",
    "read_manifest",
    "read_table",
    "record_caveats",
    "run_path",
    "safe_name",
    "warn_caveats",
]
