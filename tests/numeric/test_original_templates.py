"""Templates and prompts in the layout of the paper's released files (appendix J).

The fixture sentences are our own; only the placeholder names and the
container shapes follow the original layout.
"""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.errors import ConfigError
from folkscope.numeric import (
    detect_template_format,
    engine_prompt,
    generate_problems,
    load_original_templates,
    load_templates,
)

TWO = (
    "A basket holds {number_1} {option_1} buttons and {number_2} {option_2} buttons. "
    "I grab one button without looking; its colour is"
)
DIST = (
    "{prefix}Drawing a whole number uniformly from {number_1} inclusive to {number_2} exclusive, the draw came out as"
)

LISTING = """\
# template 0
"A basket holds {number_1} {option_1} buttons and {number_2} {option_2} buttons. "
"I grab one button without looking; its colour is"

# template 1
("On the shelf sit {number_1} {option_1} mugs and {number_2} {option_2} mugs. "
    "A guest takes one at random. The mug is")
"""

PROMPTS = [
    [
        {"role": "user", "content": "Answer with one word whose odds follow the numbers."},
        {"role": "assistant", "content": "Understood."},
        {"role": "user", "content": "{text}"},
    ],
    [
        {"role": "user", "content": "Be calibrated to the counts in the story."},
        {"role": "assistant", "content": "Ready."},
        {"role": "user", "content": "{text}"},
    ],
]


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_json_list_of_template_strings(tmp_path):
    path = _write(tmp_path, "colors.json", [TWO])
    tf = load_original_templates(path, "colors")
    assert tf.source == f"original:{path}" and tf.templates[0]["id"] == "original_0"
    assert tf.templates[0]["text"].startswith("A basket holds {n1} {w1} buttons")
    assert tf.words == load_templates("colors").words  # no colours in the file: bundled ones
    assert tf.instructions == load_templates("colors").instructions
    problems = generate_problems("colors", template_file=path, numbers=[3, 8], words=["red", "blue"])
    assert problems[1].text == TWO.format(number_1=3, option_1="red", number_2=8, option_2="blue")


def test_python_listing_with_template_headers(tmp_path):
    path = _write(tmp_path, "templates.py", LISTING)
    assert detect_template_format(path) == "original"
    tf = load_templates("colors", path)  # auto-detected
    assert [t["id"] for t in tf.templates] == ["template_0", "template_1"]
    assert tf.templates[1]["text"] == (
        "On the shelf sit {n1} {w1} mugs and {n2} {w2} mugs. A guest takes one at random. The mug is"
    )


def test_listing_is_parsed_never_executed(tmp_path):
    path = _write(tmp_path, "evil.py", 'import os\n"{number_1} {option_1} {number_2} {option_2} is"\n')
    with pytest.raises(ConfigError, match="never executed"):
        load_original_templates(path, "colors")
    path = _write(tmp_path, "call.py", 'print("{number_1} {option_1} {number_2} {option_2} is")\n')
    with pytest.raises(ConfigError, match="not a plain literal"):
        load_original_templates(path, "colors")


def test_object_with_colours_prompts_and_wordproblem_pairs(tmp_path):
    path = _write(
        tmp_path, "colors.json", {"templates": {"basket": TWO}, "colors": ["teal", "navy"], "prompts": PROMPTS}
    )
    tf = load_original_templates(path, "colors")
    assert tf.words == ("teal", "navy") and tf.templates[0]["id"] == "basket"
    assert tf.instructions == (
        "Answer with one word whose odds follow the numbers.",
        "Be calibrated to the counts in the story.",
    )
    problems = generate_problems("colors", template_file=path, numbers=[2, 5])
    prompt = engine_prompt(problems[0], chat=True)
    assert prompt.messages[0].content == problems[0].instruction and prompt.prefill == problems[0].text
    words = _write(
        tmp_path,
        "wp.json",
        [
            {
                "name": "orchard",
                "template": "An orchard has {number_1} {option_1} trees and "
                "{number_2} {option_2} trees. A storm fells one; it is a",
                "options": [["apple", "cherry"]],
            }
        ],
    )
    wp = generate_problems("wordproblems", template_file=words, numbers=[1, 4])
    assert {p.options for p in wp} == {("apple", "cherry"), ("cherry", "apple")}
    assert wp[0].template_id == "orchard"


def test_separate_prompt_file_in_listing_layout(tmp_path):
    templates = _write(tmp_path, "t.json", [TWO])
    listing = "\n".join(f"# prompt {i}\n{json.dumps(p)}\n" for i, p in enumerate(PROMPTS))
    prompts = _write(tmp_path, "prompts.py", listing)
    tf = load_templates("colors", templates, prompts=prompts)
    assert tf.instructions[1] == "Be calibrated to the counts in the story."
    assert "instructions from" in tf.description


def test_distributions_inclusivity_and_prefix(tmp_path):
    path = _write(
        tmp_path,
        "d.json",
        [
            DIST,
            {
                "template": "Uniformly between {number_1} and {number_2}, {prefix} I got",
                "low_inclusive": False,
                "high_inclusive": True,
            },
        ],
    )
    tf = load_original_templates(path, "distributions")
    first, second = tf.templates
    assert (first["low_inclusive"], first["high_inclusive"]) == (True, False)
    assert first["text"].startswith("Drawing a whole number uniformly from {low} inclusive")
    assert second["text"] == "Uniformly between {low} and {high}, I got"
    problems = generate_problems("distributions", template_file=path, n_intervals=3)
    for p in problems:
        low, high = p.numbers
        valid = range(low, high) if p.template_id == "original_0" else range(low + 1, high + 1)
        assert p.options == tuple(str(v) for v in valid)


@pytest.mark.parametrize(
    "dataset, content, message",
    [
        ("colors", ["{number_1} {option_1} and {number_3} {option_2} is"], "placeholders"),
        ("colors", ["{number_1} {option_1} and {option_2} is"], "lacks"),
        ("colors", [DIST], "another dataset"),
        ("colors", [], "non-empty"),
        ("colors", [42], "string or an object"),
        ("colors", {"templates": [TWO], "extra": 1}, "unknown keys"),
        ("colors", {"templates": [TWO], "dataset": "distributions"}, "requested"),
        ("colors", {"templates": [TWO], "prompts": [[{"role": "user", "content": "hi"}]]}, "{text}"),
        ("colors", {"templates": [TWO], "prompts": [[{"role": "user", "content": "{text}"}]]}, "first user message"),
        ("colors", {"templates": [TWO], "prompts": [["not a message"]]}, "role"),
        ("colors", {"templates": [TWO], "colors": ["teal"]}, "at least two"),
        ("wordproblems", [TWO], "option pairs"),
        ("distributions", ["From {number_1} to {number_2} I drew"], "cannot tell"),
    ],
)
def test_bad_original_files(tmp_path, dataset, content, message):
    path = _write(tmp_path, "bad.json", content)
    with pytest.raises(ConfigError, match=message) as info:
        load_original_templates(path, dataset)
    assert info.value.parameter == "template_file"


def test_unreadable_and_unparsable(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        load_original_templates(tmp_path / "missing.txt", "colors")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_original_templates(_write(tmp_path, "x.json", "[oops"), "colors")
    with pytest.raises(ConfigError, match="neither JSON nor"):
        load_original_templates(_write(tmp_path, "x.txt", "template: {number_1"), "colors")


def test_format_detection_and_flags(tmp_path):
    ours = _write(
        tmp_path,
        "ours.json",
        {
            "dataset": "colors",
            "words": ["teal", "navy"],
            "instructions": ["x"],
            "templates": [{"id": "a", "text": "{n1} {w1} {n2} {w2} is"}],
        },
    )
    theirs = _write(tmp_path, "theirs.json", [TWO])
    assert detect_template_format(ours) == "folkscope"
    assert detect_template_format(theirs) == "original"
    assert load_templates("colors", ours, format="folkscope").words == ("teal", "navy")
    with pytest.raises(ConfigError, match="folkscope's own format"):
        load_templates("colors", ours, format="original")
    with pytest.raises(ConfigError, match="template format"):
        load_templates("colors", theirs, format="pdf")
    with pytest.raises(ConfigError, match="prompt file"):
        load_templates("colors", ours, prompts=theirs)
    with pytest.raises(ConfigError, match="prompt file"):
        load_templates("colors", None, prompts=theirs)


_FRAGMENT = st.text(alphabet=string.ascii_letters + " ,.;'-", min_size=0, max_size=12)


@settings(max_examples=40, deadline=None, database=None)
@given(st.lists(_FRAGMENT, min_size=5, max_size=5), st.integers(1, 999), st.integers(1, 999))
def test_converted_text_equals_original_formatting(tmp_path_factory, parts, n1, n2):
    """Whatever the prose around the placeholders, a generated problem's text is
    exactly the original template formatted with the same numbers and options."""
    a, b, c, d, e = parts
    template = f"{a}{{number_1}} {{option_1}}{b} {{number_2}} {{option_2}}{c}{d}{e}is"
    path = tmp_path_factory.mktemp("orig") / "t.json"
    path.write_text(json.dumps([template]))
    problems = generate_problems("colors", template_file=path, numbers=[n1, n1 + n2], words=["red", "blue"])
    for p in problems:
        expected = template.format(
            number_1=p.numbers[0], option_1=p.options[0], number_2=p.numbers[1], option_2=p.options[1]
        )
        assert p.text == expected.rstrip()
