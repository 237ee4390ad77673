"""The installable package, checked without building it: what the wheel will carry and which version it says.

Building and installing the wheel takes minutes, so scripts/check_wheel.sh does that in CI (.ci/run);
these checks catch the usual ways a release goes wrong in milliseconds: a data file or template the
package-data globs miss (the code finds it in a source checkout, a user's install lacks it), a licence
file of bundled data left out, and a version stated in two places that disagree.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import folkscope

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli is a core dependency there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "folkscope"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _package_data_files() -> set[Path]:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["folkscope"]
    return {p for pattern in patterns for p in PACKAGE.glob(pattern) if p.is_file()}


def test_package_data_globs_cover_every_file_the_code_reads():
    # resources/ (bundled data) and templates/ (pages), at any depth: in a checkout the code finds a file the
    # globs miss, in a user's install it is not there
    data = {
        p
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".py", ".pyc"}
    }
    assert any("resources" in p.parts for p in data), "no resources/ files found: the test lost its subject"
    assert PACKAGE / "py.typed" in data
    missing = sorted(p.relative_to(PACKAGE).as_posix() for p in data - _package_data_files())
    assert not missing, f"pyproject's package-data misses files under src/folkscope: {missing}"


def test_bundled_data_licences_travel_in_the_wheel():
    licence_globs = PYPROJECT["project"]["license-files"]
    licences = {p.relative_to(ROOT).as_posix() for g in licence_globs for p in ROOT.glob(g) if p.is_file()}
    assert "LICENSE" in licences
    # every licence, notice or provenance (terms) file of bundled data is a licence file of the distribution
    notices = {
        p.relative_to(ROOT).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and re.search(r"(^LICENSE|^NOTICE|PROVENANCE\.md$)", p.name)
    }
    assert notices, "no bundled LICENSE/NOTICE/PROVENANCE files found: the test lost its subject"
    assert notices <= licences, f"license-files misses {sorted(notices - licences)}"
    # the bundled Apache-2.0 and CC-BY-SA-4.0 data are named in the licence expression beside folkscope's MIT
    assert set(re.split(r"\s+AND\s+", PYPROJECT["project"]["license"])) == {"MIT", "Apache-2.0", "CC-BY-SA-4.0"}


def test_version_is_the_installed_metadata_and_pyproject_s():
    installed = version("folkscope")
    assert PYPROJECT["project"]["version"] == installed, (
        "pyproject.toml's version differs from the installed metadata's: reinstall (bash scripts/setup.sh)"
    )
    assert folkscope.__version__ == installed


def test_cli_version_is_the_installed_metadata_version():
    script = Path(sys.executable).parent / "folkscope"
    if not script.exists():
        pytest.skip(f"no folkscope console script beside {sys.executable}")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"folkscope {version('folkscope')}"


def test_changelog_has_an_entry_for_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(version('folkscope'))}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M)
    assert re.search(r"^## \[Unreleased\]$", changelog, re.M)
