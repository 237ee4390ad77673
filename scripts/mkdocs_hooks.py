"""mkdocs hooks (mkdocs.yml's ``hooks:``): the repository's README becomes the site's Quick start page.

The README is the project's front page on a code host and in the package's metadata, so it lives at the
repository root, outside ``docs_dir``, and links into ``docs/``. The site needs it too (installing, the two
first commands, one small run per part), so it is added as a generated page with its ``docs/`` links made
site-relative, and the pages' links back to it (``../README.md``) are pointed at that page. One text, no copy
to keep in step; ``mkdocs build --strict`` still checks every link of both.

A flag in a code span (``--inference-backend``) is marked as one word (docs/stylesheets/extra.css): browsers
break lines after hyphens, which splits flags in the pages' narrow table cells into ``--`` / ``inference-``.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

README = Path(__file__).resolve().parents[1] / "README.md"
#: the README's place on the site
QUICKSTART = "quickstart.md"
#: a docs page's link to the repository's README: `](../README.md)`, `](../README.md#install)`, from any depth
_README_LINK = re.compile(r"\]\((?:\.\./)+README\.md(#[^)\s]*)?\)")
#: a code span holding one command-line flag and nothing else
_FLAG = re.compile(r"<code>(--?[A-Za-z][\w-]*)</code>")


def on_files(files: Files, config: Any) -> Files:
    text = re.sub(r"\]\(docs/", "](", README.read_text(encoding="utf-8"))
    files.append(File.generated(config, QUICKSTART, content=text))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    here = posixpath.dirname(page.file.src_uri)
    target = posixpath.relpath(QUICKSTART, here or ".")
    return _README_LINK.sub(lambda m: f"]({target}{m.group(1) or ''})", markdown)


def on_page_content(html: str, page: Page, config: Any, files: Files) -> str:
    return _FLAG.sub(r'<code class="flag">\1</code>', html)
