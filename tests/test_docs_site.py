"""The documentation site builds with ``mkdocs build --strict`` and holds every page and public name (issue 33).

Strict mode fails the build on any warning: a broken link or heading anchor, a
page left out of the nav (mkdocs.yml's ``validation``), a docstring griffe
cannot parse. The build runs once, offline (nothing in mkdocs.yml fetches), in
about 10 to 25 s on two cores; the tests below read what it wrote.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: subpackages with an ``__all__`` that have no API page, and why
NOT_IN_API = {"testing": "local servers, fakes and random models for folkscope's own tests"}
#: the pages scripts/mkdocs_hooks.py makes of files at the repository root
GENERATED = {"README.md": "quickstart.md", "CHANGELOG.md": "changelog.md"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs-site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's notice about its successor, not ours
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    problems = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("INFO"))
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{problems[-4000:]}"
    return out


def _nav_pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(v) for v in nav.values()))
    if isinstance(nav, list):
        return set().union(*(_nav_pages(v) for v in nav))
    return set()


def _directives(page: Path) -> list[str]:
    return re.findall(r"^::: (\S+)", page.read_text(encoding="utf-8"), flags=re.M)


def _all(package: str) -> list[str]:
    """A package's ``__all__``, read from its source (as the site is: nothing imported)."""
    base = ROOT / "src" / Path(*package.split("."))
    source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{package} has no __all__")


def test_the_nav_lists_every_page():
    yaml = pytest.importorskip("yaml", reason="the yaml extra is not installed: pip install -e '.[yaml]'")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = _nav_pages(config["nav"])
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages - listed == set(), f"docs pages missing from mkdocs.yml's nav: {sorted(pages - listed)}"
    generated = set(GENERATED.values())
    assert listed - pages == generated, f"nav entries with no page: {sorted(listed - pages - generated)}"


def test_every_public_package_has_an_api_page():
    documented = {d for page in (DOCS / "api").glob("*.md") for d in _directives(page)}
    packages = {
        f"folkscope.{init.parent.name}"
        for init in (ROOT / "src" / "folkscope").glob("*/__init__.py")
        if "__all__" in init.read_text(encoding="utf-8") and init.parent.name not in NOT_IN_API
    }
    assert packages - documented == set(), f"packages with no page under docs/api/: {sorted(packages - documented)}"


def test_every_page_is_built(site):
    for page in DOCS.rglob("*.md"):
        rel = page.relative_to(DOCS).with_suffix("")
        built = site / rel.parent / "index.html" if rel.name == "README" else site / rel / "index.html"
        assert built.is_file(), f"{page.relative_to(ROOT)} was not built ({built.relative_to(site)})"
    quickstart = (site / "quickstart" / "index.html").read_text(encoding="utf-8")
    # the repository README, its docs/ links made site-relative (scripts/mkdocs_hooks.py)
    assert "One small run per part" in quickstart and 'href="../risk/"' in quickstart
    assert 'href="quickstart/"' in (site / "index.html").read_text(encoding="utf-8")
    assert "Semantic Versioning" in (site / "changelog" / "index.html").read_text(encoding="utf-8")
    # a flag is one word on the site, never split at its hyphens (scripts/mkdocs_hooks.py, docs/stylesheets/extra.css)
    assert '<code class="flag">--inference-backend</code>' in (site / "results" / "index.html").read_text(
        encoding="utf-8"
    )


API_PAGES = sorted(p for p in (DOCS / "api").glob("*.md") if p.stem != "README")


@pytest.mark.parametrize("page", API_PAGES, ids=lambda p: p.stem)
def test_api_pages_show_every_public_name(site, page):
    html = (site / "api" / page.stem / "index.html").read_text(encoding="utf-8")
    package = _directives(page)[0]  # a page opens with its package; more directives may follow
    shown = {i.rsplit(".", 1)[-1] for i in re.findall(r'id="([^"]+)"', html) if i.startswith(f"{package}.")}
    missing = [name for name in _all(package) if name not in shown]
    assert not missing, (
        f"{package}: public names missing from {page.relative_to(ROOT)}: {missing} "
        "(undocumented names are left out: give each a docstring, a constant a '#:' comment above it)"
    )
    # folkscope's Sphinx roles are read (scripts/griffe_sphinx.py), never shown as text
    roles = re.findall(r":(?:class|func|mod|meth|attr|data|math):", re.sub(r"<[^>]+>", "", html))
    assert not roles, f"{page.relative_to(ROOT)} shows Sphinx roles as text: {roles[:5]}"
