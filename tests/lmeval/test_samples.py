"""lm-eval's --log_samples files: every logged log-likelihood read as the number it is, anything else refused by line."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.errors import DataError
from folkscope.lmeval.samples import find_samples, parse_loglikelihood, read_run, read_samples

GOOD = {
    "doc_id": 0,
    "arguments": {
        "gen_args_0": {"arg_0": "Q\nAnswer:", "arg_1": " A"},
        "gen_args_1": {"arg_0": "Q\nAnswer:", "arg_1": " B"},
    },
    "filtered_resps": [["-0.5", "False"], ["-1.25", "True"]],
}


def _oracle(value):
    """What a logged log-likelihood means: a finite float <= 0 (a hair above 0 is float32 rounding, read as 0)."""
    if type(value) not in (str, int, float):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if math.isnan(number) or math.isinf(number) or number > 1e-4:
        return None
    return 0.0 if number > 0 else number


values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-50, max_value=0).map(repr),
    st.integers(min_value=-(10**6), max_value=10),
    st.text(max_size=12),
    st.sampled_from(["nan", "-inf", "inf", "1e-5", "2e-4", " -3.5 ", "-0", "0x10", "", "None", "False"]),
    st.none(),
    st.booleans(),
    st.lists(st.floats(), max_size=2),
)


@given(values)
@settings(max_examples=400, deadline=None)
def test_a_log_likelihood_is_read_as_the_oracle_reads_it(value):
    expected = _oracle(value)
    if expected is None:
        with pytest.raises(ValueError):
            parse_loglikelihood(value)
    else:
        assert parse_loglikelihood(value) == expected


def test_a_good_log_is_read_exactly(tmp_path):
    path = tmp_path / "samples_t_2026-11-27T10-00-00.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n", encoding="utf-8")
    assert read_samples(path) == {("Q\nAnswer:", " A"): -0.5, ("Q\nAnswer:", " B"): -1.25}


def _mutations():
    """Ways a line can be wrong, each a function of a copy of GOOD."""

    def drop(key):
        return lambda s: {k: v for k, v in s.items() if k != key}

    def setter(path, value):
        def change(s):
            target = s
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
            return s

        return change

    return st.one_of(
        st.sampled_from(["arguments", "filtered_resps"]).map(drop),
        st.tuples(
            st.sampled_from(
                [
                    ("filtered_resps",),
                    ("filtered_resps", 0),
                    ("filtered_resps", 1, 0),
                    ("arguments",),
                    ("arguments", "gen_args_1"),
                    ("arguments", "gen_args_0", "arg_1"),
                    ("arguments", "gen_args_0", "arg_0"),
                ]
            ),
            st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.text(max_size=3), max_size=2)),
        ).map(lambda pv: setter(*pv)),
    )


@given(_mutations())
@settings(max_examples=200, deadline=None)
def test_a_wrong_line_is_refused_with_its_file_and_line_or_read_exactly(tmp_path_factory, mutate):
    sample = mutate(json.loads(json.dumps(GOOD)))
    path = tmp_path_factory.mktemp("log") / "samples_t_x.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(sample) + "\n", encoding="utf-8")
    try:
        answers = read_samples(path)
    except DataError as exc:
        assert str(exc).startswith(f"{path}:2: ") and "\n" not in str(exc)
        return
    # read: then every pair is a string pair with the number its line says, as the oracle reads it
    for i, key in enumerate(sorted(sample["arguments"])):
        args = sample["arguments"][key]
        assert answers[(args["arg_0"], args["arg_1"])] == _oracle(sample["filtered_resps"][i][0])


def test_the_same_pair_with_two_values_is_refused(tmp_path):
    other = json.loads(json.dumps(GOOD))
    other["filtered_resps"][0][0] = "-0.75"
    path = tmp_path / "samples_t_x.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(other) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r":2: the same context and continuation were logged with two"):
        read_samples(path)
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="holds no samples"):
        read_samples(tmp_path / "empty.jsonl")
    (tmp_path / "text.jsonl").write_text("not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"text.jsonl:1: not an lm-eval log-likelihood sample"):
        read_samples(tmp_path / "text.jsonl")


def test_the_model_and_settings_come_from_the_results_file_beside_the_log(tmp_path):
    stamp = "2026-11-27T10-00-00.5"
    log = tmp_path / f"samples_t_{stamp}.jsonl"
    log.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    results = {"model_name": "/models/tiny/", "n-shot": {"t": 0}, "chat_template": None, "max_length": 600}
    (tmp_path / f"results_{stamp}.json").write_text(json.dumps(results), encoding="utf-8")
    run = read_run(log, "t")
    assert run.model == "tiny" and run.settings == {"num_fewshot": 0, "chat_template": None, "max_length": 600}
    (tmp_path / f"results_{stamp}.json").unlink()
    assert read_run(log, "t").model is None


def test_logs_are_found_by_task_not_by_a_longer_task_name(tmp_path):
    for name in ("samples_t_2026-11-27T10-00-00.1.jsonl", "samples_t_extra_2026-11-27T10-00-00.1.jsonl"):
        (tmp_path / "m").mkdir(exist_ok=True)
        (tmp_path / "m" / name).write_text("", encoding="utf-8")
    assert [p.name for p in find_samples([tmp_path], "t")] == ["samples_t_2026-11-27T10-00-00.1.jsonl"]
    with pytest.raises(DataError, match="does not exist"):
        find_samples([tmp_path / "nope"], "t")
