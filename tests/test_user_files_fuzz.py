"""The file half of the fault campaign (issue 28, item 16): every reader of a file a person writes, fed malformed input.

Task files and phrase tables (epidemiology), template files in both layouts,
original prompt files and number-frequency tables (numeric), the users' copies
of survey extracts, and the JSON reader under all of them
(:mod:`folkscope._json`): encodings (UTF-8 with and without a byte-order
mark, UTF-16/32, Latin-1, NUL bytes, random bytes), shapes (any JSON value
put anywhere in a valid file, keys dropped), nesting (``[[[[...``), format
strings (``{condition.foo}``, ``{n1[0]}``, a stray brace). Each answers with
a result or one line (a :class:`~folkscope.errors.FolkscopeError`), never a
traceback. Where the right answer is known by construction it is checked:
a JSON value written in any encoding with a byte-order mark reads back
equal, the byte a non-UTF-8 file is refused at is the first one that is not
UTF-8, the slots of a template are exactly those it was built from.

Before this campaign the same inputs gave 37 distinct tracebacks in 6,000
(``UnicodeDecodeError``, ``RecursionError``, ``AttributeError`` of
``{condition.foo}``, ``TypeError``/``ValueError`` of a level, a subset or a
list of the wrong shape, ...).
"""

from __future__ import annotations

import codecs
import copy
import json
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import folkscope
from folkscope._json import MAX_DEPTH, read_data_file
from folkscope.errors import ConfigError, FolkscopeError

CAMPAIGN = settings(
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
#: the readers that also build tasks or problems from what they read are slower: fewer examples, same inputs
DEEP = settings(CAMPAIGN, max_examples=500)
SRC = Path(folkscope.__file__).parent


def _one_line(exc: BaseException) -> None:
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, message


# ----------------------------------------------------------------------------- what a person might put in a file
#: values that break format strings, comparisons and type assumptions
ATOMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False),
    st.integers(10**30, 10**31),
    st.sampled_from(
        [
            "",
            "x",
            "1",
            "nan",
            "é",
            "a\nb",
            "{condition}",
            "{condition.foo}",
            "{condition[x]}",
            "{condition[0]}",
            "{outcome!r}",
            "{condition:>9}",
            "{",
            "}",
            "{}",
            "{0}",
            "{level}",
            "{SEX}",
            "{SEX.real}",
            "{n1}",
            "{n1.__class__}",
            "{n1[0]}",
            "{low}",
            "{number_1}",
            "{text}",
            "red",
        ]
    ),
    st.text(max_size=8),
)
JSON = st.recursive(
    ATOMS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["text", "value", "values", "min", "max", "column", "levels", "name", "id", "phrase", "pairs", "x"]
            ),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


@st.composite
def mutated(draw, base):
    """``base`` with one to three of its values replaced by any JSON value, or dropped."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and draw(st.integers(0, 4)) == 0:
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON)
    return doc


#: how the bytes of a file may come out of an editor or a tool
ENCODINGS = st.sampled_from(
    ["utf-8", "utf-8-sig", "utf-16", "utf-32", "latin-1", "nested", "truncated", "nul", "bytes"]
)


def _encode(text: str, how: str, data) -> bytes:
    if how == "latin-1":
        return text.encode("latin-1", "replace") + "é".encode("latin-1")
    if how == "nested":
        return b"[" * data.draw(st.sampled_from([MAX_DEPTH + 1, 5_000, 200_000])) + text.encode()
    if how == "truncated":
        raw = text.encode()
        return raw[: data.draw(st.integers(0, len(raw)))]
    if how == "nul":
        return text.encode("utf-16-le")
    if how == "bytes":
        return data.draw(st.binary(max_size=64))
    return text.encode(how)


def _write(folder: Path, raw: bytes, suffix: str = ".json") -> Path:
    path = folder / f"user-file{suffix}"
    path.write_bytes(raw)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzzed")


# ----------------------------------------------------------------------------- the JSON reader, against an oracle
@settings(CAMPAIGN, max_examples=1000)
@given(JSON, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32"]))
def test_a_json_value_reads_back_equal_in_every_encoding_with_a_byte_order_mark(folder, value, encoding):
    text = json.dumps(value, ensure_ascii=False)
    raw = text.encode(encoding) if encoding != "utf-16-be" else codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    assert read_data_file(_write(folder, raw), "task file") == value


LATIN1 = st.characters(min_codepoint=0x80, max_codepoint=0xFF)


@settings(CAMPAIGN, max_examples=1000)
@given(
    st.text(max_size=20), st.characters(min_codepoint=0x80, max_codepoint=0xBF), st.text(alphabet=LATIN1, max_size=3)
)
def test_a_file_that_is_not_utf8_is_refused_at_its_first_foreign_byte(folder, ascii_part, first, rest):
    """Latin-1 text: its first byte past ASCII (0x80-0xBF can never begin a UTF-8 character) is where the reader stops."""
    prefix = json.dumps(ascii_part, ensure_ascii=True)[:-1]  # an open string: the foreign bytes sit inside it
    raw = prefix.encode() + (first + rest).encode("latin-1") + b'"'
    with pytest.raises(FolkscopeError) as info:
        read_data_file(_write(folder, raw), "task file")
    _one_line(info.value)
    assert f"is not UTF-8 text (byte {len(prefix)} is 0x{raw[len(prefix)]:02x}); save the file as UTF-8" in str(
        info.value
    )


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 2_000, 100_000])
def test_deep_nesting_is_one_line_and_the_limit_is_exact(folder, depth):
    with pytest.raises(FolkscopeError, match="nested too deeply") as info:
        read_data_file(_write(folder, b"[" * depth + b"]" * depth), "task file")
    _one_line(info.value)
    assert read_data_file(_write(folder, b"[" * MAX_DEPTH + b"]" * MAX_DEPTH), "task file") is not None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            b"7" * 5000,
            "not valid JSON folkscope can read (Exceeds the limit (4300 digits) for integer string conversion)",
        ),
        ("[1]".encode("utf-16-le"), "holds a NUL byte (byte 1): UTF-16 without a byte-order mark"),
        (codecs.BOM_UTF16_LE + b"\x00\xd8[\x00", "is not UTF-16 text, as its byte-order mark says (byte 2 is 0x00)"),
        (b'{"a": 1,}', "is not valid JSON (Expecting property name enclosed in double quotes at line 1, column 9)"),
    ],
)
def test_what_json_cannot_take_is_said_in_one_line(folder, raw, message):
    with pytest.raises(FolkscopeError) as info:
        read_data_file(_write(folder, raw), "template file")
    assert message in str(info.value)
    _one_line(info.value)


def test_a_folder_or_a_missing_file_is_one_line(folder):
    for path, message in ((folder, "it is a folder; name the file"), (folder / "nope.json", "there is no such file")):
        with pytest.raises(FolkscopeError, match=message):
            read_data_file(path, "phrase table")


# ----------------------------------------------------------------------------- the one template-slot reader, against an oracle
SLOT = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=6)
PIECES = st.lists(
    st.one_of(
        st.tuples(st.just("text"), st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=6)),
        st.tuples(st.just("slot"), SLOT),
        st.tuples(st.just("brace"), st.sampled_from(["{{", "}}"])),
        st.tuples(
            st.just("bad"),
            st.sampled_from(["{}", "{0}", "{a.b}", "{a[0]}", "{a[x]}", "{a!r}", "{a:>3}", "{", "}", "{a", "{1a}"]),
        ),
    ),
    max_size=8,
)


@CAMPAIGN
@given(PIECES)
def test_format_slots_returns_the_slots_a_template_was_built_from_or_refuses_it(pieces):
    from folkscope.prompting import format_slots

    # a bad piece is closed off by a plain character, so two halves never make a good slot or an escaped brace
    text = "".join("{" + p + "}" if kind == "slot" else p + "|" if kind == "bad" else p for kind, p in pieces)
    if any(kind == "bad" for kind, _ in pieces):
        with pytest.raises(ConfigError) as info:
            format_slots(text, "t")
        _one_line(info.value)
        return
    assert format_slots(text, "t") == [p for kind, p in pieces if kind == "slot"]
    text.format(**{p: "v" for kind, p in pieces if kind == "slot"})  # what it accepts, str.format fills


# ----------------------------------------------------------------------------- epidemiology task files and phrase tables
def _bundled(relative: str):
    return json.loads((SRC / relative).read_text(encoding="utf-8"))


TASK_FILE = _bundled("epidemiology/resources/tasks/nist-acs.json")
TASK_FILE["tasks"] = TASK_FILE["tasks"][:2] + [t for t in TASK_FILE["tasks"] if t.get("conditions")][:1]
PHRASES = _bundled("epidemiology/resources/phrases/nist-acs.json")


@pytest.fixture(scope="module")
def people():
    from folkscope.epidemiology import load_dataset

    return load_dataset("nist-acs").sample(2000, random_state=0)


def _epidemiology_task_file(folder: Path, raw: bytes, people) -> None:
    from folkscope.epidemiology import task_truth
    from folkscope.epidemiology.tasks import load_task_file

    for task in load_task_file(_write(folder, raw)).tasks:
        task.question("a person")
        task.likelihood_question("a person", "an answer")
        if task.conditions:
            task.check_levels(people)
            task.cells(task.rows(people))
        else:
            task_truth(task, people)


@DEEP
@given(mutated(TASK_FILE), ENCODINGS, st.data())
def test_task_files_load_and_give_a_truth_or_say_why_in_one_line(folder, people, doc, how, data):
    try:
        _epidemiology_task_file(folder, _encode(json.dumps(doc, ensure_ascii=False), how, data), people)
    except FolkscopeError as exc:
        _one_line(exc)


@pytest.mark.parametrize(
    "question",
    ["Who is {condition.foo}?", "Who is {condition[x]}?", "Who is {condition[0]}?", "Who {is", "Who is {condition!r}?"],
)
def test_attribute_or_index_access_in_a_task_file_is_refused_when_it_is_read(folder, question):
    from folkscope.epidemiology.tasks import load_task_file

    doc = copy.deepcopy(TASK_FILE)
    doc["tasks"][0]["qa"] = question
    with pytest.raises(FolkscopeError) as info:
        load_task_file(_write(folder, json.dumps(doc).encode()))
    _one_line(info.value)
    assert "nist-acs" not in str(info.value) or "acs_income_by_sex qa" in str(info.value)


@DEEP
@given(mutated(PHRASES), ENCODINGS, st.booleans(), st.data())
def test_phrase_tables_load_and_generate_or_say_why_in_one_line(folder, people, doc, how, with_data, data):
    from folkscope.epidemiology.phrases import generate_tasks, load_phrases

    try:
        table = load_phrases(_write(folder, _encode(json.dumps(doc, ensure_ascii=False), how, data)))
        generate_tasks(table, 2, seed=0, data=people if with_data else None)
    except FolkscopeError as exc:
        _one_line(exc)


# ----------------------------------------------------------------------------- numeric templates, original files, frequency tables
NUMERIC = {name: _bundled(f"numeric/resources/{name}.json") for name in ("colors", "wordproblems", "distributions")}
ORIGINAL = {
    "colors": "A jar has {number_1} {option_1} beads and {number_2} {option_2} beads. I took a bead; it is",
    "wordproblems": "I saw {number_1} {option_1} and {number_2} {option_2}. The first was a",
    "distributions": "{prefix} A number from {number_1} inclusive to {number_2} exclusive:",
}
PROMPTS = [
    [
        {"role": "user", "content": "Be calibrated."},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "{text}"},
    ]
]


def _problems(dataset: str, path: Path, template_format: str, prompts: Path | None = None) -> None:
    from folkscope.numeric.problems import generate_problems

    problems = generate_problems(
        dataset,
        template_file=str(path),
        n_numbers=2,
        n_intervals=3,
        template_format=template_format,
        prompt_file=None if prompts is None else str(prompts),
    )
    assert problems and all(str(n) in p.text for p in problems for n in p.numbers)  # each text says its own numbers


@DEEP
@given(st.sampled_from(sorted(NUMERIC)), st.data(), ENCODINGS, st.sampled_from(["auto", "folkscope", "original"]))
def test_numeric_template_files_give_problems_or_say_why_in_one_line(folder, dataset, data, how, template_format):
    doc = data.draw(mutated(NUMERIC[dataset]))
    try:
        _problems(dataset, _write(folder, _encode(json.dumps(doc, ensure_ascii=False), how, data)), template_format)
    except FolkscopeError as exc:
        _one_line(exc)


LISTING_TAILS = st.sampled_from(
    [
        "",
        "[" * 300 + "]" * 300,
        "(" * 1000,
        "{'a': " * 300,
        "x = 1",
        "'\\N{nope}'",
        "b'\\xff'",
        "1 +",
        "import os",
        "[" * 30 + "]" * 30,
        "\x00",
    ]
)


@DEEP
@given(
    st.sampled_from(sorted(ORIGINAL)),
    st.data(),
    ENCODINGS,
    st.sampled_from([".json", ".py", ".txt"]),
    LISTING_TAILS,
    st.booleans(),
)
def test_original_layout_files_give_problems_or_say_why_in_one_line(
    folder, dataset, data, how, suffix, tail, own_prompts
):
    doc = data.draw(
        mutated({"templates": [{"template": ORIGINAL[dataset], "options": [["spruce", "cedar"]]}], "prompts": PROMPTS})
    )
    text = json.dumps(doc, ensure_ascii=False) if suffix == ".json" else f"# template a\n{ORIGINAL[dataset]!r}\n{tail}"
    prompts = (
        _write(folder, _encode(json.dumps(data.draw(mutated(PROMPTS))), how, data), ".prompts.json")
        if own_prompts
        else None
    )
    try:
        _problems(dataset, _write(folder, _encode(text, how, data), suffix), "original", prompts)
    except FolkscopeError as exc:
        _one_line(exc)


FREQUENCIES = (SRC / "numeric/resources/number_frequencies.csv").read_text(encoding="utf-8").splitlines()[:12]


@settings(CAMPAIGN, max_examples=1000)
@given(st.lists(st.tuples(st.integers(0, 11), st.lists(ATOMS.map(str), max_size=4)), max_size=3), ENCODINGS, st.data())
def test_frequency_tables_load_or_say_why_in_one_line(folder, edits, how, data):
    from folkscope.numeric.frequencies import load_number_frequencies

    lines = list(FREQUENCIES)
    for row, cells in edits:
        lines[row] = ",".join(cells)
    try:
        table = load_number_frequencies(_write(folder, _encode("\n".join(lines), how, data), ".csv"))
    except FolkscopeError as exc:
        _one_line(exc)
        return
    assert all(np.isfinite(table.get(n)) for n in table.values)


# ----------------------------------------------------------------------------- the users' copies of survey extracts
@settings(CAMPAIGN, max_examples=200)
@given(st.sampled_from(["nhanes", "gss", "yrbss", "nhis", "meps96", "brfss"]), st.data(), ENCODINGS)
def test_a_users_copy_that_is_not_the_table_is_one_line(tmp_path_factory, name, data, how):
    from folkscope.data.user_data import USER_DATASETS

    dataset = USER_DATASETS[name]
    root = tmp_path_factory.mktemp("copy")
    header = data.draw(
        st.sampled_from(["rownames,Age,Gender", "a,b", "", "SurveyYr,Age,Gender,WTINT2YR,WTMEC2YR,Smoke100,SmokeNow"])
    )
    rows = data.draw(
        st.lists(
            st.lists(ATOMS.map(str).filter(lambda c: "," not in c and "\n" not in c), min_size=1, max_size=7),
            max_size=4,
        )
    )
    text = "\n".join([header, *(",".join(r) for r in rows)])
    file = root / dataset.path
    file.parent.mkdir(parents=True, exist_ok=True)
    raw = _encode(text, how, data)
    assume(not (dataset.path.endswith(".gz") and how == "bytes" and raw[:2] == b"\x1f\x8b"))
    file.write_bytes(raw)
    try:
        dataset.load(root)
    except FolkscopeError as exc:
        _one_line(exc)


def test_the_campaign_reaches_past_the_readers(folder, people):
    """Guard against a campaign that only ever meets the first refusal: the unmutated files go all the way."""
    _epidemiology_task_file(folder, json.dumps(TASK_FILE).encode("utf-16"), people)
    _problems("colors", _write(folder, json.dumps(NUMERIC["colors"]).encode("utf-8-sig")), "auto")
    assert MAX_DEPTH == 100
