"""A griffe extension for the API reference (mkdocs.yml): folkscope's Sphinx conventions, read as Sphinx would.

griffe reads the source statically and knows numpydoc, but three Sphinx habits of folkscope's docstrings
would render badly or not at all:

- Cross-reference roles (``:func:`rescore```, ``:class:`~folkscope.runs.Manifest```, ``:meth:`title
  <target>```, about a thousand): Markdown would show a literal ``:func:`` before a code span. Each becomes an
  optional mkdocs-autorefs reference to the object's full path, resolved in the docstring's own scope (its
  module's names and imports): a link where the object is on the site, a plain code span where it is not (a
  private helper, another library), never a warning. ``:math:`...``` becomes a code span (the site loads no
  maths renderer: nothing from the network).
- ``#:`` comments above a module constant (``#: the modules every part's package has``): its docstring.
- ``name.__doc__ = ...`` after ``name = factory(...)`` (the thresholded metrics): the statement is code, so
  only the module knows the function. Those modules alone are imported and inspected (they need numpy, not the
  optional libraries); every other module is still read without importing it.
"""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path
from typing import Any

import griffe

#: a cross-reference role; the body is ``target``, ``~target`` (shown by its last name), ``.target`` or
#: ``title <target>``
_ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|attr|data|exc|obj):`(?P<body>[^`]+)`")
_MATH = re.compile(r":math:`(?P<body>[^`]+)`")
_TITLED = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")


class SphinxConventions(griffe.Extension):
    """Complete and rewrite the package's docstrings once it is loaded (names resolve only then)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self._complete(pkg, loader)
        self._rewrite(pkg)

    def _complete(self, module: griffe.Module, loader: griffe.GriffeLoader) -> None:
        if module.filepath is not None and not isinstance(module.filepath, list):
            source = Path(module.filepath).read_text(encoding="utf-8")
            _set_runtime_docstrings(module, source, loader)
            _set_comment_docstrings(module, source.splitlines(), loader)
        for member in module.modules.values():
            if not member.is_alias:
                self._complete(member, loader)

    def _rewrite(self, obj: griffe.Object) -> None:
        if obj.docstring is not None:
            text = _ROLE.sub(lambda m: _reference(obj, m["body"]), obj.docstring.value)
            obj.docstring.value = _MATH.sub(r"`\g<body>`", text)
        for member in obj.members.values():
            if not member.is_alias:  # an alias's docstring is its target's, rewritten where the target lives
                self._rewrite(member)


def _set_runtime_docstrings(module: griffe.Module, source: str, loader: griffe.GriffeLoader) -> None:
    """Members documented by ``name.__doc__ = ...``: replaced by what inspecting the imported module finds."""
    names = [
        target.value.id
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute) and target.attr == "__doc__" and isinstance(target.value, ast.Name)
    ]
    if not names:
        return
    # parsed as the loader parses every other docstring (numpydoc, mkdocs.yml's options)
    inspected = griffe.inspect(
        module.path, docstring_parser=loader.docstring_parser, docstring_options=loader.docstring_options
    )
    for name in names:
        found = inspected[name]
        found.lineno, found.endlineno = module.members[name].lineno, module.members[name].endlineno
        module.set_member(name, found)


def _set_comment_docstrings(module: griffe.Module, lines: list[str], loader: griffe.GriffeLoader) -> None:
    """A module attribute without a docstring takes the ``#:`` comment lines right above it."""
    for attribute in module.attributes.values():
        if attribute.is_alias or attribute.docstring is not None or not attribute.lineno:
            continue
        comment: list[str] = []
        row = attribute.lineno - 2
        while row >= 0 and lines[row].startswith("#:"):
            comment.insert(0, lines[row][2:].strip())
            row -= 1
        if comment:
            attribute.docstring = griffe.Docstring(
                "\n".join(comment),
                lineno=row + 2,
                parent=attribute,
                parser=loader.docstring_parser,
                parser_options=loader.docstring_options,
            )


def _reference(scope: griffe.Object, body: str) -> str:
    titled = _TITLED.match(body)
    if titled:
        title, target = titled["title"], titled["target"]
    else:
        target = body.lstrip("~.")
        title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
    head, _, rest = target.lstrip("~.").partition(".")
    try:
        identifier = scope.resolve(head) + (f".{rest}" if rest else "")
    except griffe.NameResolutionError:
        identifier = target.lstrip("~.")
    return f'<autoref identifier="{html.escape(identifier)}" optional><code>{html.escape(title)}</code></autoref>'
