"""Scoring and analysis end to end on fake models that play each reference behaviour."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from folkscope.engine import Engine, EngineConfig
from folkscope.metrics import calibration_distance, reference_behaviour
from folkscope.numeric import (
    PROMPT_VERSION,
    NumericConfig,
    compare_runs,
    generate_problems,
    paired_differences,
    problem_metrics,
    rescore,
    run_numeric,
    score_problems,
    word_variants,
)

from .behaviours import behaviour_engine

BEHAVIOURS = ("calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second")


def _problem_51_98(words=("red", "blue")):
    base = generate_problems("colors", n_numbers=2, scales=["medium"], templates=["marbles"], words=list(words))[0]
    text = f"A cloth pouch contains 51 {words[0]} marbles and 98 {words[1]} marbles. It is"
    return dataclasses.replace(base, id="ref-51-98", counts=(51.0, 98.0), ideal=(51 / 149, 98 / 149), text=text)


# spec/numeric-calibration.md, counts 51 and 98
@pytest.mark.parametrize(
    "behaviour, wd, re",
    [
        ("pick_first", 0.93, -0.93),
        ("pick_second", 0.48, None),
        ("null", 0.74, None),
        ("pick_higher_q=0.7", 0.06, -0.05),
        ("pick_higher_q=0.6", 0.08, None),
        ("pick_higher_q=0.8", 0.20, None),
        ("pick_higher_q=0.9", 0.34, None),
        ("calibrated", 0.0, 0.0),
    ],
)
@pytest.mark.parametrize("words", [("red", "blue"), ("blue", "black")])  # shared first token
def test_reference_values_through_scoring(behaviour, wd, re, words):
    problem = _problem_51_98(words)
    probs = score_problems(behaviour_engine([problem], behaviour), [problem])
    metrics = problem_metrics(probs).iloc[0]
    assert round(metrics["calibration_distance"], 2) == wd
    if re is not None:
        assert round(metrics["relative_entropy"], 2) == re
    if behaviour == "null":
        assert metrics["probability_mass"] == 0 and np.isnan(metrics["relative_entropy"])
        assert metrics["undefined_reason"]


def test_probability_table_columns_and_multi_token_words():
    problem = _problem_51_98()
    probs = score_problems(behaviour_engine([problem], "calibrated"), [problem])
    assert list(probs.columns) == [
        "problem_id",
        "position",
        "option",
        "count",
        "ideal_prob",
        "model_prob",
        "n_variants",
        "min_tokens",
    ]
    assert probs["option"].tolist() == ["red", "blue"] and probs["count"].tolist() == [51, 98]
    assert (probs["n_variants"] == 4).all() and (probs["min_tokens"] > 1).all()
    np.testing.assert_allclose(probs["model_prob"], [51 / 149, 98 / 149], atol=1e-9)


def test_variants_are_summed():
    assert word_variants("Toyota") == ("Toyota", " Toyota", "toyota", " toyota")
    problem = _problem_51_98()
    # a model putting 0.2 on " red" and 0.1 on "Red": π_red = 0.3 (first tokens " r" and "R")
    steps = {
        "It is": {" r": 0.2, "R": 0.1, "r": 0.0, " R": 0.0},
        "is r": {"e": 1.0},
        "is re": {"d": 1.0},
        "isR": {"e": 1.0},
        "isRe": {"d": 1.0},
    }

    def rule(text):
        return next((v for k, v in steps.items() if text.endswith(k)), None)

    engine = Engine.from_model("sum", backend="fake", use_cache=False, progress=False, next_token_probs=rule)
    probs = score_problems(engine, [problem])
    assert probs["model_prob"].iloc[0] == pytest.approx(0.3)


def _grid():
    return generate_problems(
        "colors", n_numbers=4, scales=["small"], templates=["marbles"], words=["red", "blue", "black", "white"]
    )


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_whole_pipeline_recovers_each_behaviour(tmp_path, behaviour):
    problems = _grid()
    config = NumericConfig(
        dataset="colors",
        engine=EngineConfig(model=f"plays-{behaviour}", backend="fake"),
        n_numbers=4,
        scales=("small",),
        templates=("marbles",),
        words=("red", "blue", "black", "white"),
    )
    run = run_numeric(config, tmp_path, engine=behaviour_engine(problems, behaviour))
    m = run.metrics
    assert m["n_problems"] == 12 * 16 and m["n_cells"] == 12
    assert m["behaviour_shares"][behaviour] == 1.0
    assert m["behaviour_shares_renormalised"][behaviour] == 1.0
    ideal = np.array([p.ideal for p in problems])
    expected_wd = calibration_distance(reference_behaviour(behaviour, ideal), ideal).mean()
    assert m["summary"]["calibration_distance"]["mean"] == pytest.approx(expected_wd, abs=1e-9)
    assert m["summary"]["probability_mass"]["mean"] == pytest.approx(1.0)
    expected_first = {"pick_first": 1.0, "pick_second": 0.0}.get(behaviour)
    if expected_first is not None:
        assert m["order_bias"]["first_win_rate"] == expected_first
    for name in (
        "config.json",
        "problems.parquet",
        "probabilities.parquet",
        "metrics.json",
        "cells.parquet",
        "heatmap.png",
        "report.html",
    ):
        assert (run.folder / name).stat().st_size > 0
    heat = pd.read_parquet(run.folder / "heatmap.parquet")
    assert len(heat) == 12 and set(heat["behaviour"]) == {behaviour}
    assert json.loads((run.folder / "metrics.json").read_text())["n_cells"] == 12


def test_chat_form_and_paired_differences(tmp_path):
    problems = _grid()
    cfg = dict(
        dataset="colors",
        engine=EngineConfig(model="p", backend="fake"),
        n_numbers=4,
        scales=("small",),
        templates=("marbles",),
        words=("red", "blue", "black", "white"),
    )
    base = run_numeric(NumericConfig(**cfg), tmp_path, engine=behaviour_engine(problems, "calibrated"))
    chat = run_numeric(
        NumericConfig(**cfg, chat=True), tmp_path, engine=behaviour_engine(problems, "pick_first", chat=True)
    )
    assert chat.folder != base.folder and chat.metrics["behaviour_shares"]["pick_first"] == 1.0
    b = pd.read_parquet(base.folder / "problem_metrics.parquet")
    c = pd.read_parquet(chat.folder / "problem_metrics.parquet")
    diff = paired_differences(b, c, b.set_index("problem_id")["pair"])
    expected = c["calibration_distance"].mean() - b["calibration_distance"].mean()
    assert diff["calibration_distance"]["mean"] == pytest.approx(expected)
    assert diff["calibration_distance"]["low"] > 0
    compared = compare_runs(base.folder, chat.folder)
    assert compared["differences"] == diff
    # calibrated puts the mode on the larger count, pick_first on the first option:
    # they agree where the first count is larger (6 of 16 per cell) or tied (argmax 0)
    assert compared["mode_stability"] == pytest.approx(10 / 16)


def test_run_folder_reanalyses_without_model(tmp_path):
    problems = _grid()
    cfg = NumericConfig(
        dataset="colors",
        engine=EngineConfig(model="p", backend="fake"),
        n_numbers=4,
        scales=("small",),
        templates=("marbles",),
        words=("red", "blue", "black", "white"),
    )
    run = run_numeric(cfg, tmp_path, engine=behaviour_engine(problems, "pick_lower"))
    again = rescore(run.folder)
    assert again["summary"] == run.metrics["summary"]
    assert again["behaviour_shares"] == run.metrics["behaviour_shares"]


def test_resumes_through_the_engine_cache(tmp_path):
    cfg = NumericConfig(
        dataset="distributions",
        engine=EngineConfig(model="fk", backend="fake"),
        n_intervals=6,
        templates=("closed", "spinner"),
    )

    def engine():
        return Engine.from_model(
            "fk", backend="fake", cache_dir=tmp_path / "cache", prompt_version=PROMPT_VERSION, progress=False
        )

    first_engine, second_engine = engine(), engine()
    first = run_numeric(cfg, tmp_path / "r", engine=first_engine)
    second = run_numeric(cfg, tmp_path / "r", engine=second_engine)
    assert first_engine.stats.computed > 0 and second_engine.stats.computed == 0
    assert first.metrics["summary"] == second.metrics["summary"]
    d = second.metrics["distributions"]
    assert 0 < d["mode_probability"] < 1 and 0 < d["mode_frequency"] <= 1
    assert not (second.folder / "heatmap.png").exists()


def test_config_is_strict():
    from folkscope.errors import ConfigError

    with pytest.raises(ConfigError):
        NumericConfig(dataset="coins")
    with pytest.raises(ConfigError):
        NumericConfig.from_dict({"dataset": "colors", "colour": 1})
    assert (
        NumericConfig.from_dict(NumericConfig(words=("red", "blue")).to_dict()).fingerprint()
        == NumericConfig(words=("red", "blue")).fingerprint()
    )


def test_frequency_effect_with_a_user_table():
    from folkscope.numeric import count_number_frequencies, frequency_effect, problems_frame

    problems = generate_problems("colors", n_numbers=4, scales=["small"], templates=["marbles"], words=["red", "blue"])
    frame = problems_frame(problems)
    # WD grows with the gap by construction: a perfect rank correlation
    table = {1: 1, 4: 10, 7: 100, 10: 1000}
    gap = np.abs([table[int(a)] - table[int(b)] for a, b in zip(frame["count_first"], frame["count_second"])])
    metrics = pd.DataFrame({"problem_id": frame["problem_id"], "calibration_distance": gap / 1000})
    res = frequency_effect(metrics, frame, table)
    assert res["spearman_rho"] == pytest.approx(1.0) and res["n_excluded"] == 8
    assert frequency_effect(metrics, frame, lambda n: 0.0)["n"] == 0
    assert count_number_frequencies(["3 and 3.5 and 30", "3"]) == {3: 2, 30: 1}


def test_fingerprint_follows_template_content(tmp_path):
    import json as _json

    from folkscope.numeric import load_templates

    tf = load_templates("colors")
    data = {
        "dataset": "colors",
        "words": list(tf.words),
        "instructions": list(tf.instructions),
        "templates": [dict(t) for t in tf.templates],
    }
    path = tmp_path / "t.json"
    path.write_text(_json.dumps(data))
    first = NumericConfig(template_file=str(path)).fingerprint()
    data["templates"][0]["text"] = data["templates"][0]["text"].replace("pouch", "sack")
    path.write_text(_json.dumps(data))
    assert NumericConfig(template_file=str(path)).fingerprint() != first
