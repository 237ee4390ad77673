"""Generators: deterministic, balanced, and strict about template files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import folkscope.numeric as numeric
from folkscope.errors import ConfigError
from folkscope.numeric import (
    DATASETS,
    engine_prompt,
    generate_problems,
    load_templates,
    scale_numbers,
)


def test_exports_are_complete():
    assert sorted(numeric.__all__) == sorted(set(numeric.__all__))
    for name in numeric.__all__:
        assert hasattr(numeric, name), name
    public = {n for n in dir(numeric) if not n.startswith("_")}
    # every submodule, whichever of them other tests happened to import first
    modules = {p.stem for p in Path(numeric.__file__).parent.glob("*.py")} - {"__init__"}
    assert public - modules - set(numeric.__all__) == set()


@pytest.mark.parametrize("dataset", DATASETS)
def test_same_seed_same_problems(dataset):
    kw = {"n_numbers": 3, "n_intervals": 20}
    assert generate_problems(dataset, seed=4, **kw) == generate_problems(dataset, seed=4, **kw)
    ids = [p.id for p in generate_problems(dataset, seed=4, **kw)]
    assert len(ids) == len(set(ids))


def test_seed_changes_drawn_numbers_not_small_scale():
    assert scale_numbers("small") == tuple(range(1, 11))
    assert scale_numbers("medium", seed=0) != scale_numbers("medium", seed=1)
    for scale, (low, high) in numeric.SCALES.items():
        nums = scale_numbers(scale, seed=3)
        assert len(set(nums)) == 10 and low <= min(nums) and max(nums) <= high


def test_colors_every_ordered_pair_equally_often_and_cells_balanced():
    problems = generate_problems("colors", n_numbers=4)
    tf = load_templates("colors")
    pairs = Counter(p.options for p in problems)
    assert len(tf.words) == 11 and len(pairs) == 110
    assert set(pairs.values()) == {5 * 3 * 16}
    by_cell: dict[str, list[int]] = {}
    for p in problems:
        by_cell.setdefault(p.cell, []).append(int(np.sign(p.counts[0] - p.counts[1])))
    assert len(by_cell) == 5 * 3 * 110
    for signs in by_cell.values():
        c = Counter(signs)
        assert len(signs) == 16 and c[1] == c[-1] == 6 and c[0] == 4


def test_full_colors_grid_size_matches_the_paper():
    # one template x one scale of the full grid: 110 ordered pairs x 100 configurations
    assert len(generate_problems("colors", templates=["paint"], scales=["large"])) == 11_000


def test_wordproblems_use_both_orders_of_every_pair():
    problems = generate_problems("wordproblems", n_numbers=2, scales=["small"])
    assert len({p.template_id for p in problems}) == 10
    orders = Counter(p.options for p in problems)
    for a, b in orders:
        assert orders[(a, b)] == orders[(b, a)] == 4


def test_ideal_distribution_and_text():
    p = generate_problems("colors", n_numbers=2, scales=["medium"], templates=["marbles"])[1]
    assert np.isclose(sum(p.ideal), 1) and np.isclose(p.ideal[0] / p.ideal[1], p.counts[0] / p.counts[1])
    assert f"{int(p.counts[0])} {p.options[0]}" in p.text and not p.text.endswith(" ")


def test_distribution_intervals_match_inclusivity():
    tf = {t["id"]: t for t in load_templates("distributions").templates}
    problems = generate_problems("distributions", n_intervals=40)
    for p in problems:
        k = len(p.options)
        assert 2 <= k < 10 and np.allclose(p.ideal, 1 / k)
        t = tf[p.template_id]
        low, high = (int(x) for x in p.id.split(":")[-2:])
        valid = [
            v
            for v in range(low - 1, high + 2)
            if (v >= low if t["low_inclusive"] else v > low) and (v <= high if t["high_inclusive"] else v < high)
        ]
        assert [str(v) for v in valid] == list(p.options)
        assert str(low) in p.text and str(high) in p.text


def test_limit_is_a_seeded_subset():
    full = generate_problems("wordproblems", n_numbers=2)
    some = generate_problems("wordproblems", n_numbers=2, limit=25, seed=0)
    assert len(some) == 25 and set(some) <= set(full)
    assert some == generate_problems("wordproblems", n_numbers=2, limit=25, seed=0)


def test_chat_form_uses_several_instruction_variants():
    problems = generate_problems("colors", n_numbers=2, scales=["small"], words=["red", "blue"])
    assert len({p.instruction for p in problems}) == 3
    prompt = engine_prompt(problems[0], chat=True)
    assert prompt.messages[0].role == "user" and prompt.messages[0].content == problems[0].instruction
    assert prompt.prefill == problems[0].text
    assert engine_prompt(problems[0], chat=False) == problems[0].text


def _write(tmp_path, data):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def _good():
    return {
        "dataset": "colors",
        "words": ["teal", "navy", "rose"],
        "instructions": ["Be calibrated."],
        "templates": [{"id": "cups", "text": "There are {n1} {w1} cups and {n2} {w2} cups. I took a cup; it is"}],
    }


def test_own_template_file_is_used(tmp_path):
    problems = generate_problems("colors", template_file=_write(tmp_path, _good()), n_numbers=2, scales=["small"])
    assert len(problems) == 6 * 4
    assert problems[0].text.startswith("There are 1 teal cups")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(dataset="wordproblems"), "requested"),
        (lambda d: d.update(extra=1), "unknown keys"),
        (lambda d: d.update(words=["teal"]), "at least two"),
        (lambda d: d.update(words=["teal", "Teal"]), "differ in case"),
        (lambda d: d.update(words=["teal", " navy"]), "surrounding spaces"),
        (lambda d: d.update(instructions=[]), "instructions"),
        (lambda d: d["templates"][0].update(text="{n1} {w1} and {w2}. It is"), "placeholder"),
        (lambda d: d["templates"][0].update(text="{n1} {w1} {n2} {w2} {n3}"), "placeholder"),
        (lambda d: d["templates"][0].update(text="{n1} {w1} {n2} {w2} is "), "whitespace"),
        (lambda d: d["templates"][0].update(pairs=[["a", "b"]]), "unknown keys"),
        (lambda d: d["templates"].append(dict(d["templates"][0])), "unique id"),
        (lambda d: d.update(templates=[]), "non-empty"),
        # a stray brace was a ValueError traceback when problems were generated; attribute access reached Python objects
        (lambda d: d["templates"][0].update(text="{n1} {w1} and {n2} {w2}} It is"), "Single '}'.*literal brace"),
        (lambda d: d["templates"][0].update(text="{n1} {w1} and {n2} {w2} {"), "literal brace"),
        (
            lambda d: d["templates"][0].update(text="{n1.__class__} {w1} and {n2} {w2}"),
            r"slot \{n1.__class__\} is not allowed; write plain slots such as \{n1\}",
        ),
        (lambda d: d["templates"][0].update(text="{n1:>5} {w1} and {n2} {w2}"), "is not allowed"),
        (lambda d: d["templates"][0].update(text="{n1!r} {w1} and {n2} {w2}"), "is not allowed"),
    ],
)
def test_bad_template_files_are_rejected(tmp_path, change, message):
    data = _good()
    change(data)
    with pytest.raises(ConfigError, match=message) as info:
        load_templates("colors", _write(tmp_path, data))
    assert info.value.parameter == "template_file"


def test_unreadable_and_invalid_json(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        load_templates("colors", tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_templates("colors", _write(tmp_path, "{oops"))


def test_wordproblem_pairs_checked(tmp_path):
    data = {
        "dataset": "wordproblems",
        "instructions": ["x"],
        "templates": [{"id": "a", "text": "{n1} {w1} {n2} {w2} is", "pairs": [["oak"]]}],
    }
    with pytest.raises(ConfigError, match="two words"):
        load_templates("wordproblems", _write(tmp_path, data))


@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        ({"scales": ["huge"]}, "scales"),
        ({"templates": ["nope"]}, "templates"),
        ({"words": ["red", "mauve"]}, "words"),
        ({"limit": 0}, "limit"),
        ({"n_numbers": 11}, "n_numbers"),
    ],
)
def test_bad_generator_arguments(kwargs, parameter):
    with pytest.raises(ConfigError) as info:
        generate_problems("colors", **kwargs)
    assert info.value.parameter == parameter
