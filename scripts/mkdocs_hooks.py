"""mkdocs hooks (mkdocs.yml's ``hooks:``): the repository's README and changelog become pages of the site.

The README is the project's front page on a code host and in the package's metadata, and CHANGELOG.md sits
beside it, so both live at the repository root, outside ``docs_dir``. The site needs them too (installing, the
two first commands, one small run per part; what changed), so each is added as a generated page, with the
README's ``docs/`` links made site-relative, and the pages' links back to them (``../README.md``) are pointed
at those pages. One text each, no copy to keep in step; ``mkdocs build --strict`` still checks every link.

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

ROOT = Path(__file__).resolve().parents[1]
#: a file at the repository root -> its page on the site
ROOT_PAGES = {"README.md": "quickstart.md", "CHANGELOG.md": "changelog.md"}
#: a docs page's link to one of them: `](../README.md)`, `](../README.md#install)`, from any depth
_ROOT_LINK = re.compile(r"\]\((?:\.\./)+(?P<file>" + "|".join(map(re.escape, ROOT_PAGES)) + r")(?P<anchor>#[^)\s]*)?\)")
#: a code span holding one command-line flag and nothing else
_FLAG = re.compile(r"<code>(--?[A-Za-z][\w-]*)</code>")


def on_files(files: Files, config: Any) -> Files:
    for name, page in ROOT_PAGES.items():
        text = re.sub(r"\]\(docs/", "](", (ROOT / name).read_text(encoding="utf-8"))
        files.append(File.generated(config, page, content=text))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    here = posixpath.dirname(page.file.src_uri) or "."
    return _ROOT_LINK.sub(lambda m: f"]({posixpath.relpath(ROOT_PAGES[m['file']], here)}{m['anchor'] or ''})", markdown)


def on_page_content(html: str, page: Page, config: Any, files: Files) -> str:
    return _FLAG.sub(r'<code class="flag">\1</code>', html)
