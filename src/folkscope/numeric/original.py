"""The paper's original released template and prompt files, converted to folkscope's template schema.

Lovering et al. describe (appendix J) templates with ``{number_1} {option_1}
{number_2} {option_2}`` placeholders (distributions: ``{number_1}
{number_2} {prefix}``) and chat prompts as message lists whose last user turn
holds ``{text}``. Users who have those files load them here (or through
:func:`~folkscope.numeric.problems.load_templates`, which detects the
layout); the result is an ordinary :class:`~folkscope.numeric.templates.TemplateFile`,
validated by the same rules as folkscope's own files.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from folkscope._json import parse_data, read_text_file
from folkscope._names import slug
from folkscope.errors import ConfigError
from folkscope.numeric.templates import (
    DATASETS,
    PLACEHOLDER,
    TemplateFile,
    bundled_templates,
    file_error,
    is_folkscope_format,
    validate_templates,
)

__all__ = ["load_original_templates"]


#: original placeholder -> folkscope placeholder (two-option datasets)
_ORIGINAL_TWO = {"number_1": "n1", "option_1": "w1", "number_2": "n2", "option_2": "w2"}
#: original placeholder -> folkscope placeholder (distributions); {prefix} is dropped
_ORIGINAL_DIST = {"number_1": "low", "number_2": "high"}
_INCLUSIVITY = re.compile(r"^\s*[(\[,]?\s*(?P<word>inclusive|exclusive|included|excluded|not included)\b", re.I)
_TEXT_SLOTS = ("{text}", "@text")


def _original_bad(msg: str, source: str, value: Any = None) -> ConfigError:
    return ConfigError(f"original-format file {source}: {msg}", parameter="template_file", value=value)


def _literal_blocks(text: str, source: str, kind: str) -> list[tuple[str | None, Any]]:
    """Top-level literals of a Python-style listing, each with the name of the
    ``# <kind> NAME`` comment right above it (the layout of the paper's appendix J).

    The file is parsed, never executed: only string, list, tuple and dict
    literals are accepted (implicitly concatenated strings join as in Python).
    """

    try:
        tree = ast.parse(text, filename=source)
    except SyntaxError as exc:
        raise _original_bad(
            f"is neither JSON nor a Python-style listing of literals ({exc.msg} at line {exc.lineno})", source, source
        ) from None
    except (RecursionError, MemoryError, ValueError):  # nesting the parser gives up on; a NUL byte
        raise _original_bad(
            "is neither JSON nor a Python-style listing folkscope can read (nested too deeply, or not text)",
            source,
            source,
        ) from None
    lines = text.splitlines()
    header = re.compile(rf"^\s*#\s*{kind}\s+(\S+)\s*$", re.I)
    out: list[tuple[str | None, Any]] = []
    for node in tree.body:
        value_node = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
        if value_node is None:
            raise _original_bad(
                f"line {node.lineno}: only literals (strings, lists, dicts) are "
                "read from a listing; the file is never executed",
                source,
                type(node).__name__,
            )
        try:
            value = ast.literal_eval(value_node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, (RecursionError, MemoryError)) else str(exc).splitlines()[0]
            raise _original_bad(f"line {node.lineno}: not a plain literal ({reason})", source, node.lineno) from None
        name = None
        for back in range(node.lineno - 2, -1, -1):
            if not lines[back].strip():
                continue
            m = header.match(lines[back])
            name = m.group(1) if m else None
            break
        out.append((name, value))
    if any(name is not None for name, _ in out):
        # with headers, a template wrapped over several lines (as printed in the paper)
        # is one string per line: join the unheaded strings to the one above
        joined: list[tuple[str | None, Any]] = []
        for name, value in out:
            if name is None and joined and isinstance(value, str) and isinstance(joined[-1][1], str):
                joined[-1] = (joined[-1][0], joined[-1][1] + value)
            else:
                joined.append((name, value))
        out = joined
    return out


def _read_original(path: str | Path, kind: str) -> Any:
    """JSON, or a Python-style listing turned into the same shapes (a list of the
    literals, or a ``{name: literal}`` dict when every literal has a ``# kind NAME`` header)."""
    source = str(path)
    fail = file_error(source)
    text = read_text_file(path, f"original-format {kind} file", error=fail)
    try:
        return parse_data(text, f"original-format file {source}", error=fail)
    except ConfigError:
        if Path(path).suffix.lower() in (".json", ".jsonl"):
            raise
    blocks = _literal_blocks(text, source, kind)
    if not blocks:
        raise _original_bad(f"holds no {kind}s", source, source)
    if len(blocks) == 1 and blocks[0][0] is None:
        return blocks[0][1]
    if all(name is not None for name, _ in blocks):
        names = [str(name) for name, _ in blocks]
        if len(set(names)) == len(names):
            return {f"{kind} {name}": value for name, value in zip(names, (v for _, v in blocks))}
    return [value for _, value in blocks]


def _id(name: Any, index: int) -> str:
    """A template id from the file's name for it (``original_<index>`` where it has none)."""
    return (
        slug(name, keep="A-Za-z0-9_", sep="_", fallback=f"original_{index}")
        if name is not None
        else f"original_{index}"
    )


def _entries(raw: Any, source: str) -> list[tuple[str, Mapping[str, Any]]]:
    """Normalise the template part of an original file to ``(id, entry)`` pairs."""
    if isinstance(raw, Mapping):
        if "template" in raw or "text" in raw:  # a single template object
            raw = [raw]
        else:
            items = list(raw.items())
            return [(_id(k, i), v if isinstance(v, Mapping) else {"template": v}) for i, (k, v) in enumerate(items)]
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise _original_bad(
            f"expected a non-empty list of templates (strings or objects with 'template'), got {type(raw).__name__}",
            source,
            raw,
        )
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            out.append((f"original_{i}", {"template": item}))
        elif isinstance(item, Mapping):
            out.append(
                (
                    _id(item.get("id", item.get("name")), i)
                    if item.get("id", item.get("name")) is not None
                    else f"original_{i}",
                    item,
                )
            )
        else:
            raise _original_bad(f"template {i} must be a string or an object, got {type(item).__name__}", source, item)
    return out


def _convert_text(text: Any, tid: str, dataset: str, source: str) -> str:
    """Rename the original placeholders to folkscope's, drop ``{prefix}``, trim trailing space."""
    if not isinstance(text, str) or not text.strip():
        raise _original_bad(f"template {tid!r} needs a non-blank template string", source, text)
    mapping = _ORIGINAL_DIST if dataset == "distributions" else _ORIGINAL_TWO
    found = PLACEHOLDER.findall(text)
    allowed = set(mapping) | ({"prefix"} if dataset == "distributions" else set())
    unknown = [f for f in found if f not in allowed]
    if unknown:
        raise _original_bad(
            f"template {tid!r} has placeholders {unknown}; a {dataset} template "
            f"of the original layout uses {sorted(allowed)} (is it a template of "
            "another dataset?)",
            source,
            text,
        )
    missing = [f for f in mapping if f not in found]
    if missing:
        raise _original_bad(
            f"template {tid!r} lacks {['{' + m + '}' for m in missing]}; is it "
            f"a template of another dataset than {dataset!r}?",
            source,
            text,
        )
    # {prefix} is always empty in the paper (appendix J): drop it with the space it leaves
    out = re.sub(r"^\s*\{prefix\}\s*", "", text)
    out = re.sub(r"\s*\{prefix\}\s*", " ", out)
    for old, new in mapping.items():
        out = out.replace("{" + old + "}", "{" + new + "}")
    return out.rstrip()


def _inclusivity(entry: Mapping[str, Any], text: str, tid: str, source: str) -> tuple[bool, bool]:
    """Which interval ends a distributions template includes: from the entry's
    ``low_inclusive``/``high_inclusive``, else from the word right after each
    number ("... from {number_1} inclusive to {number_2} exclusive ...")."""
    given = [entry.get("low_inclusive"), entry.get("high_inclusive")]
    for i, key in enumerate(("number_1", "number_2")):
        if given[i] is not None:
            continue
        after = text.split("{" + key + "}", 1)[1] if "{" + key + "}" in text else ""
        m = _INCLUSIVITY.match(after)
        if m:
            given[i] = m.group("word").lower() in ("inclusive", "included")
    if not all(isinstance(g, bool) for g in given):
        raise _original_bad(
            f"template {tid!r}: cannot tell whether the interval ends are included (no "
            "'inclusive'/'exclusive' right after {number_1} and {number_2}); give the template "
            'as an object with "template", "low_inclusive" and "high_inclusive"',
            source,
            text,
        )
    return bool(given[0]), bool(given[1])


def _original_pairs(entry: Mapping[str, Any], tid: str, source: str) -> list[list[str]]:
    pairs = entry.get("options", entry.get("pairs"))
    if not isinstance(pairs, list) or not pairs:
        raise _original_bad(
            f"wordproblems template {tid!r} needs its option pairs as "
            '"options": [["spruce", "cedar"], ...] (both orders are '
            "generated)",
            source,
            pairs,
        )
    return [list(p) if isinstance(p, (list, tuple)) else p for p in pairs]


def _original_instructions(prompts: Any, source: str) -> list[str]:
    """Calibration instructions from original chat prompts (lists of messages).

    Each prompt is the message list of the paper's figures 6-7: a user turn
    with the instruction, an assistant acknowledgement, then a user turn with
    the problem (``{text}``). folkscope's chat form keeps the instruction as
    the user turn and lets the assistant continue the scenario (prefill), so
    the first user turn is taken and the other turns are checked, not used.
    """
    if isinstance(prompts, Mapping):
        prompts = list(prompts.values())
    if not isinstance(prompts, list) or not prompts:
        raise _original_bad("prompts must be a non-empty list of message lists", source, prompts)
    if all(isinstance(m, Mapping) for m in prompts):  # a single prompt
        prompts = [prompts]
    out = []
    for i, messages in enumerate(prompts):
        if (
            not isinstance(messages, list)
            or not messages
            or not all(
                isinstance(m, Mapping)
                and isinstance(m.get("content"), str)
                and m.get("role") in ("system", "user", "assistant")
                for m in messages
            )
        ):
            raise _original_bad(
                f'prompt {i} must be a list of {{"role", "content"}} messages (roles system/user/assistant)',
                source,
                messages,
            )
        users = [m["content"] for m in messages if m["role"] == "user"]
        if not users or not any(slot in users[-1] for slot in _TEXT_SLOTS):
            raise _original_bad(
                f"prompt {i}: the last user message must hold the problem slot {{text}}", source, messages
            )
        if len(users) < 2 or not users[0].strip():
            raise _original_bad(
                f"prompt {i}: expected a first user message with the calibration "
                "instruction before the one with {text}",
                source,
                messages,
            )
        out.append(users[0].strip())
    return out


def load_original_templates(
    path: str | Path, dataset: str, *, prompts: str | Path | None = None, words: Sequence[str] | None = None
) -> TemplateFile:
    """Read templates in the layout of the paper's released files and convert them.

    Lovering et al. released their templates and prompts with the paper
    (appendix B); appendix J prints their shape: Python format strings with
    the placeholders ``{number_1} {option_1} {number_2} {option_2}`` (two
    options) or ``{number_1} {number_2} {prefix}`` (distributions; the prefix
    is always empty), and chat prompts as message lists whose last user turn
    holds ``{text}``. The released archive itself could not be inspected
    here, so this loader accepts every plain container of those strings:

    * JSON: a list of template strings; a list of objects with ``template``
      (or ``text``) and optional ``id``/``name``, ``options`` (word pairs of a
      wordproblems template), ``low_inclusive``/``high_inclusive``
      (distributions); an object mapping names to template strings; or an
      object with ``templates`` (any of these) and optional ``colors`` /
      ``words`` (the colour list) and ``prompts``.
    * A Python-style listing (``.py``/``.txt``), as printed in appendix J:
      ``# template 0`` comment lines each followed by a string literal (or
      several, one per line, which are joined). It is parsed with
      :mod:`ast`, never executed.

    Parameters
    ----------
    path : path
        The original template file.
    dataset : {"colors", "wordproblems", "distributions"}
    prompts : path, optional
        Original chat prompts (JSON or listing with ``# prompt N`` headers);
        their first user turns become the calibration instructions. Default:
        the file's own ``prompts``, else the bundled instructions.
    words : sequence of str, optional
        colors: the option colours. Default: the file's ``colors``/``words``,
        else the 11 bundled colours.

    Returns
    -------
    TemplateFile
        Validated like a folkscope file; ``source`` is ``original:<path>``.
        Distributions inclusivity comes from the entry's booleans or from the
        word after each number (``inclusive``/``exclusive``).

    Raises
    ------
    ConfigError
        Unreadable or malformed file, unknown or missing placeholders, a
        wordproblems template without option pairs, a distributions
        template whose inclusivity cannot be told, malformed prompts.

    Examples
    --------
    >>> import json, tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    >>> _ = f.write(json.dumps(["A jar has {number_1} {option_1} beads and "
    ...                         "{number_2} {option_2} beads. I took a bead; it is"]))
    >>> f.close()
    >>> tf = load_original_templates(f.name, "colors", words=["red", "blue"])
    >>> tf.templates[0]["text"][:30], tf.words
    ('A jar has {n1} {w1} beads and ', ('red', 'blue'))
    >>> os.unlink(f.name)
    """
    if dataset not in DATASETS:
        raise ConfigError(
            f"dataset must be one of {', '.join(DATASETS)}, got {dataset!r}", parameter="dataset", value=dataset
        )
    source = str(path)
    data = _read_original(path, "template")
    if is_folkscope_format(data):
        raise _original_bad(
            "is in folkscope's own format (a 'dataset' and templates with 'id'); "
            "load it with format 'folkscope' or 'auto'",
            source,
            source,
        )
    colours: Any = None
    file_prompts: Any = None
    if isinstance(data, Mapping) and "templates" in data:
        unknown = set(data) - {"templates", "colors", "colours", "words", "prompts", "description", "dataset"}
        if unknown:
            raise _original_bad(
                f"unknown keys {sorted(unknown)}; allowed: templates, colors, words, prompts, description, dataset",
                source,
                sorted(unknown),
            )
        if data.get("dataset", dataset) != dataset:
            raise _original_bad(
                f"it holds dataset {data['dataset']!r} but {dataset!r} was requested", source, data["dataset"]
            )
        colours = data.get("colors", data.get("colours", data.get("words")))
        file_prompts = data.get("prompts")
        raw = data["templates"]
    else:
        raw = data
    templates = []
    for tid, entry in _entries(raw, source):
        text = entry.get("template", entry.get("text"))
        converted = _convert_text(text, tid, dataset, source)
        item: dict[str, Any] = {"id": tid, "text": converted}
        if dataset == "wordproblems":
            item["pairs"] = _original_pairs(entry, tid, source)
        elif dataset == "distributions":
            item["low_inclusive"], item["high_inclusive"] = _inclusivity(entry, text, tid, source)
        templates.append(item)
    bundled = bundled_templates(dataset)
    if prompts is not None:
        instructions = _original_instructions(_read_original(prompts, "prompt"), str(prompts))
        note = f"instructions from {prompts}"
    elif file_prompts is not None:
        instructions = _original_instructions(file_prompts, source)
        note = "instructions from the file's prompts"
    else:
        instructions = list(bundled.instructions)
        note = "bundled folkscope instructions"
    folk: dict[str, Any] = {
        "dataset": dataset,
        "instructions": instructions,
        "templates": templates,
        "description": f"converted from the original layout of {source}; {note}",
    }
    if dataset == "colors":
        chosen = words if words is not None else colours
        folk["words"] = list(chosen) if chosen is not None else list(bundled.words)
    return validate_templates(folk, f"original:{source}", dataset)
