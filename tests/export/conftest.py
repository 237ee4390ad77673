"""Real run folders to export, made once for the export tests: a risk run and a numeric run on the fake backend.

The fake backend answers instantly and deterministically, so these are
folders every part's own tests also make: manifest, tables, metrics,
figures, page, caveats. Tests copy a folder before changing it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from folkscope.cli.main import main


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("export-results")


def risk_argv(results: Path, *extra: str) -> list[str]:
    return [
        "risk",
        "run",
        "--model",
        "export-fake",
        "--inference-backend",
        "fake",
        "--task",
        "NISTIncome",
        "--subsampling",
        "0.03",
        "--n-bootstrap",
        "20",
        "--no-baselines",
        "--no-cache",
        "--results-dir",
        str(results),
        *extra,
    ]


def numeric_argv(results: Path, *extra: str) -> list[str]:
    return [
        "numeric",
        "run",
        "--model",
        "export-fake",
        "--inference-backend",
        "fake",
        "--dataset",
        "colors",
        "--numbers",
        "1,2",
        "--limit",
        "20",
        "--no-cache",
        "--no-heatmap",
        "--results-dir",
        str(results),
        *extra,
    ]


@pytest.fixture(scope="session")
def risk_run(results: Path) -> Path:
    """The run folder, found by its manifest (a session fixture cannot read what the command printed)."""
    assert main(risk_argv(results)) == 0
    (folder,) = [p.parent for p in (results / "NISTIncome").rglob("manifest.json")]
    return folder


@pytest.fixture(scope="session")
def numeric_run(results: Path) -> Path:
    assert main(numeric_argv(results)) == 0
    (folder,) = [p.parent for p in (results / "numeric-colors").rglob("manifest.json")]
    return folder
