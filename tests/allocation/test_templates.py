"""Allocation template files and logged-response files: refused in one line before any model loads, never a traceback.

A template that cannot tell candidates apart (no ``{candidate}`` in pointwise, no ``{second}`` in
pairwise) used to run to completion, giving every candidate one identical prompt and a perfect parity;
a misspelt slot failed only when the first prompt was filled, after the model loaded. The slot grammar
is checked against an oracle: texts built from known pieces, whose slots (and verdict) are known.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folkscope.allocation import AllocationConfig, ResponsesConfig, audit_responses, load_template, read_responses
from folkscope.cli.main import main
from folkscope.errors import ConfigError, DataError, FolkscopeError
from folkscope.prompting import SCREENING_SLOTS, check_screening_template, pairwise_prompt, pointwise_prompt

CAMPAIGN = settings(max_examples=2000, deadline=2000, database=None, suppress_health_check=[HealthCheck.too_slow])
BUNDLED = load_template("resumes").to_dict()


def _one_line(exc: BaseException) -> str:
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


def _write(path: Path, family: object, **changes: object) -> Path:
    path.write_text(json.dumps({"resumes": {**BUNDLED, **changes}} if family is None else family), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"pointwise": "Is this candidate a good fit? Answer Yes or No."},
            r"pointwise has no \{candidate\} slot, so every candidate would get the same prompt",
        ),
        ({"pairwise": "Candidate A:\n{first}\n\nWhich is better, A or B?"}, r"pairwise has no \{second\} slot"),
        ({"listwise": "Rank the candidates."}, r"listwise has no \{candidates\} slot"),
        ({"entry": "{candidate}"}, r"entry has no \{name\} slot"),
        (
            {"pointwise": "Resume:\n{candiate}\nA good fit?"},
            r"pointwise has the slot \{candiate\}, which is not one of its slots: \{candidate\} \(misspelt\?\)",
        ),
        ({"system": "Job: {job}"}, r"system has the slot \{job\}"),
        ({"pointwise": "{candidate.name} fits?"}, r"slot \{candidate.name\} is not allowed"),
        ({"pointwise": "{candidate[x]} fits?"}, r"slot \{candidate\[x\]\} is not allowed"),
        ({"pointwise": "{candidate!r} fits?"}, r"slot \{candidate!r\} is not allowed"),
        ({"pointwise": "{candidate:>10} fits?"}, r"slot \{candidate:>10\} is not allowed"),
        ({"pointwise": "{} fits?"}, r"slot \{\} is not allowed"),
        ({"pointwise": "{candidate} fits? {"}, r"write \{\{ or \}\} for a literal brace"),
        ({"pointwise": 3}, r"pointwise must be a string, got int"),
        ({"labels": "NoYes"}, r"labels must be a list of non-blank answer words"),
        ({"labels": ["No", 1]}, r"labels must be a list of non-blank answer words"),
        ({"labels": ["No", "No"]}, r"two or more distinct labels"),
        ({"relevance": ["low", "high"]}, r"relevance must be a list of finite numbers"),
        ({"relevance": [0, True]}, r"relevance must be a list of finite numbers"),
        ({"relevance": [0, 1, 2]}, r"one relevance value each"),
        ({"relevance": [1, 1]}, r"every label the same value 1, so every candidate would score the same"),
    ],
)
def test_a_template_that_cannot_score_is_refused_in_one_line_naming_it(tmp_path, changes, message):
    path = _write(tmp_path / "mine.json", None, **changes)
    with pytest.raises(ConfigError, match=message) as info:
        load_template("resumes", path)
    assert "mine.json['resumes']" in _one_line(info.value)
    with pytest.raises(ConfigError, match=message):  # at config time: before any candidate, engine or folder
        AllocationConfig(template_file=str(path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ([1, 2], "must be a JSON object of task templates"),
        ("resumes", "must be a JSON object of task templates"),
        ({"resumes": ["system"]}, r"\['resumes'\] must be a JSON object with the keys"),
        ({"resumes": "pointwise"}, r"\['resumes'\] must be a JSON object with the keys"),
        ({"resumes": {"system": "{context}"}}, "lacks pointwise, labels"),
        ({"essays": BUNDLED, "1": {}}, "has no task 'resumes'; it has essays, 1"),
    ],
)
def test_a_template_file_of_the_wrong_shape_is_one_line(tmp_path, content, message):
    path = _write(tmp_path / "shape.json", content)
    with pytest.raises(FolkscopeError, match=message) as info:
        load_template("resumes", path)
    _one_line(info.value)


@pytest.mark.parametrize("mode", ["pointwise", "pairwise"])
def test_the_cli_refuses_a_blind_template_before_the_model_loads_and_leaves_no_folder(tmp_path, capsys, mode):
    blind = {
        "pointwise": "Is this candidate a good fit? Answer Yes or No.",
        "pairwise": "A:\n{first}\nWhich is better?",
    }[mode]
    path = _write(tmp_path / "blind.json", None, **{mode: blind})
    results = tmp_path / "results"
    code = main(
        [
            "allocation",
            "run",
            "--mode",
            mode,
            "--template-file",
            str(path),
            "--model",
            str(tmp_path / "never-loaded"),
            "--results-dir",
            str(results),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "blind.json" in err and ("{candidate}" in err or "{second}" in err), (
        err
    )
    assert not results.exists() or not any(results.rglob("*"))


def test_the_bundled_templates_pass_and_fill():
    for family in ("resumes", "essays"):
        t = load_template(family)
        pointwise_prompt("ctx", "cand", system=t.system, question=t.pointwise)
        pairwise_prompt("ctx", "one", "two", system=t.system, question=t.pairwise)


# ------------------------------------------------------------------ the slot grammar against an oracle
SLOT_NAMES = st.sampled_from(
    ["context", "candidate", "first", "second", "candidates", "name", "candiate", "Candidate", "x_1"]
)
LITERAL = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
#: pieces whose meaning is known: ("lit", text) is literal text (its braces doubled), ("slot", n) the slot {n}
PIECE = st.one_of(st.tuples(st.just("lit"), LITERAL), st.tuples(st.just("slot"), SLOT_NAMES))
#: a piece that breaks the grammar, inserted at a random place: the verdict is then a refusal
BROKEN = st.sampled_from(
    [
        "{",
        "}",
        "{}",
        "{0}",
        "{candidate.name}",
        "{candidate[0]}",
        "{candidate!r}",
        "{candidate:>3}",
        "{first!s:5}",
        "{candidate{x}}",
        "{ candidate}",
        "{candidate }",
        "{cand-idate}",
    ]
)


def _text(pieces: list[tuple[str, str]]) -> str:
    return "".join(p.replace("{", "{{").replace("}", "}}") if kind == "lit" else "{" + p + "}" for kind, p in pieces)


@CAMPAIGN
@given(
    part=st.sampled_from(sorted(SCREENING_SLOTS)),
    pieces=st.lists(PIECE, max_size=8),
    broken=st.one_of(st.none(), st.tuples(BROKEN, st.integers(0, 8))),
)
def test_the_template_check_agrees_with_the_oracle(part, pieces, broken):
    text = _text(pieces)
    allowed, required = SCREENING_SLOTS[part]
    slots = [p for kind, p in pieces if kind == "slot"]
    if broken is not None:
        piece, at = broken
        cut = len(_text(pieces[:at]))
        text = text[:cut] + piece + text[cut:]
    accepted = broken is None and all(s in allowed for s in slots) and all(r in slots for r in required)
    try:
        check_screening_template(part, text, f"t.{part}")
    except ConfigError as exc:
        assert not accepted, (text, str(exc))
        _one_line(exc)
        return
    assert accepted, text
    filled = text.format(**{s: f"<{s}>" for s in allowed})  # what passes the check fills without error
    assert all(f"<{r}>" in filled for r in required)


# ------------------------------------------------------------------ malformed files: encodings, nesting, shapes
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
FAMILY = st.fixed_dictionaries({}, optional={k: JSONISH | st.just(BUNDLED[k]) for k in BUNDLED})


@CAMPAIGN
@given(content=st.one_of(JSONISH, st.fixed_dictionaries({"resumes": FAMILY | JSONISH})))
def test_fuzzed_template_files_load_or_say_why_in_one_line(tmp_path_factory, content):
    path = tmp_path_factory.getbasetemp() / "fuzzed-template.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    try:
        load_template("resumes", path)
    except FolkscopeError as exc:
        _one_line(exc)


TEXT = json.dumps({"resumes": {**BUNDLED, "system": "Stellenbeschreibung für {context}"}}, ensure_ascii=False)
#: what the shared reader (folkscope._json.read_data_file) makes of a template file's bytes
MALFORMED = {
    "utf16 with its mark": (TEXT.encode("utf-16"), None),  # read: the byte-order mark says how
    "utf8 with a mark": (b"\xef\xbb\xbf" + TEXT.encode(), None),
    "utf16 without a mark": (TEXT.encode("utf-16-le"), "save the file as UTF-8"),
    "latin-1": (TEXT.encode("latin-1"), r"is not UTF-8 text \(byte \d+ is 0xfc\); save the file as UTF-8"),
    "nested": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_template_file_in_another_encoding_or_nested_deep_reads_or_is_one_line(tmp_path, kind):
    data, message = MALFORMED[kind]
    path = tmp_path / "t.json"
    path.write_bytes(data)
    if message is None:
        assert load_template("resumes", path).system.startswith("Stellenbeschreibung für")
        return
    with pytest.raises(FolkscopeError, match=message) as info:
        load_template("resumes", path)
    _one_line(info.value)


# ------------------------------------------------------------------ logged responses
LINE = {"candidates": ["Ann Wu", "Bo Lee"], "groups": ["A", "B"], "response": "1. Bo Lee\n2. Ann Wu"}


def test_a_logged_line_with_its_own_line_number_and_bad_records_are_one_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(json.dumps({**LINE, "_line": v}) for v in ("x", 2.5, None, [1])) + "\n", encoding="utf-8")
    records = read_responses(path)
    assert [r["_line"] for r in records] == [1, 2, 3, 4]  # the file's own line numbers, not what the lines say
    assert audit_responses(records, config=ResponsesConfig(k=1)).n_responses == 4
    for bad in ("x", 2.5, True, 0, None):
        with pytest.raises(DataError, match=r"response 1: '_line' must be the record's line number") as info:
            audit_responses([{**LINE, "_line": bad}])
        _one_line(info.value)
    with pytest.raises(DataError, match="response 1 is a list"):
        audit_responses([[1, 2]])


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("utf16 with its mark", None),
        ("latin1", r"responses file log.jsonl is not UTF-8 text \(byte \d+ is 0xe9\)"),
        ("nested", "log.jsonl line 2 is nested too deeply"),
        ("syntax", "log.jsonl line 2 is not valid JSON"),
    ],
)
def test_a_responses_file_in_another_encoding_or_nested_deep_reads_or_is_one_line(tmp_path, kind, message):
    good = json.dumps(
        {**LINE, "response": "1. Bo Lée\n2. Ann Wu", "candidates": ["Ann Wu", "Bo Lée"]}, ensure_ascii=False
    )
    body = {
        "utf16 with its mark": (good + "\n").encode("utf-16"),
        "latin1": good.encode("latin-1"),
        "nested": good.encode() + b"\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "syntax": good.encode() + b"\n{not json\n",
    }[kind]
    path = tmp_path / "log.jsonl"
    path.write_bytes(body)
    if message is None:
        assert read_responses(path)[0]["candidates"] == ["Ann Wu", "Bo Lée"]
        return
    with pytest.raises(DataError, match=message) as info:
        read_responses(path)
    _one_line(info.value)


def test_a_utf8_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(LINE).encode())
    assert read_responses(path)[0]["candidates"] == LINE["candidates"]


@CAMPAIGN
@given(
    lines=st.lists(
        st.one_of(
            JSONISH.map(json.dumps),
            st.fixed_dictionaries(
                {},
                optional={
                    "candidates": JSONISH | st.just(LINE["candidates"]),
                    "groups": JSONISH | st.just(LINE["groups"]),
                    "response": JSONISH | st.just(LINE["response"]),
                    "_line": JSONISH,
                },
            ).map(json.dumps),
            st.text(max_size=20),
        ),
        max_size=5,
    ),
    k=st.integers(1, 3),
)
def test_fuzzed_responses_files_audit_or_say_why_in_one_line(tmp_path_factory, lines, k):
    path = tmp_path_factory.getbasetemp() / "fuzzed-log.jsonl"
    path.write_text("\n".join(line.replace("\n", " ") for line in lines), encoding="utf-8")
    try:
        audit_responses(read_responses(path), config=ResponsesConfig(k=k, reference="B"))
    except FolkscopeError as exc:
        _one_line(exc)
