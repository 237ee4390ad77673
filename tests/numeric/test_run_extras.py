"""Run-folder extras: reference values through run_numeric, unscored options,
matching pennies, frequency effects, comparisons and the distributions extras."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.cli import numeric_cmd
from folkscope.engine import Engine, EngineConfig, ScoreResult
from folkscope.errors import ConfigError, DataError
from folkscope.metrics import matching_pennies_win_rate
from folkscope.numeric import (
    NumericConfig,
    attach_comparison,
    compare_runs,
    play_matching_pennies,
    rescore,
    run_numeric,
)

from .behaviours import behaviour_engine

_GRID = dict(
    dataset="colors",
    engine=EngineConfig(model="fk", backend="fake"),
    numbers=(51, 98),
    words=("red", "blue"),
    templates=("marbles",),
    frequency_table=None,
)


# spec/numeric-calibration.md: counts 51 and 98 (red 51, blue 98)
@pytest.mark.parametrize(
    "behaviour, wd, re",
    [
        ("pick_first", 0.93, -0.93),
        ("pick_second", 0.48, -0.93),
        ("null", 0.74, None),
        ("pick_higher", 0.48, -0.93),
        ("pick_lower", 0.93, -0.93),
        ("pick_higher_q=0.7", 0.06, -0.05),
        ("pick_higher_q=0.6", 0.08, 0.04),
        ("pick_higher_q=0.8", 0.20, -0.21),
        ("pick_higher_q=0.9", 0.34, -0.46),
        ("calibrated", 0.0, 0.0),
    ],
)
def test_reference_values_through_the_whole_pipeline(tmp_path, behaviour, wd, re):
    config = NumericConfig(**_GRID)
    run = run_numeric(config, tmp_path, engine=behaviour_engine(config.problems(), behaviour), heatmap=False)
    assert run.metrics["n_problems"] == 8  # 2 ordered pairs x 4 number configurations
    per = pd.read_parquet(run.folder / "problem_metrics.parquet").set_index("problem_id")
    row = per.loc["colors:marbles:custom:red:blue:51:98"]
    assert round(row["calibration_distance"], 2) == wd
    if re is None:
        assert row["probability_mass"] == 0 and np.isnan(row["relative_entropy"])
    else:
        assert round(row["relative_entropy"], 2) == re


class _Unscorable:
    """An engine standing in for a web backend that could not score some candidates:
    NaN log-probabilities with a bound too high to ignore them."""

    def __init__(self, inner: Engine | None = None, when=lambda prompt: True):
        self.inner, self.when = inner, when

    def identity(self):
        return {"unscorable": None if self.inner is None else self.inner.identity()}

    def score(self, requests, **progress_labels):
        inner = self.inner.score(requests) if self.inner is not None else [None] * len(requests)
        out = []
        for req, res in zip(requests, inner):
            if self.when(req.prompt):
                n = len(req.candidates)
                res = ScoreResult(tuple([float("nan")] * n), tuple([1] * n), 5, bound=math.log(0.4))
            out.append(res)
        return out


def test_unscored_problems_are_left_out_and_counted(tmp_path):
    config = NumericConfig(**{**_GRID, "numbers": (2, 7), "words": ("red", "blue", "white")})
    problems = config.problems()
    engine = _Unscorable(behaviour_engine(problems, "calibrated"), when=lambda prompt: "white" in str(prompt))
    run = run_numeric(config, tmp_path, engine=engine, heatmap=False)
    n_white = sum("white" in p.options for p in problems)
    assert run.metrics["n_unscored"] == n_white > 0
    assert run.metrics["summary"]["calibration_distance"]["n"] == len(problems) - n_white
    assert run.metrics["summary"]["calibration_distance"]["mean"] == pytest.approx(0.0, abs=1e-9)
    probs = pd.read_parquet(run.folder / "probabilities.parquet")
    assert probs["model_prob"].isna().sum() == 2 * n_white  # kept in the raw table
    assert "problems left out" in (run.folder / "report.html").read_text()
    nothing = NumericConfig(**{**_GRID, "numbers": (3, 4)})
    with pytest.raises(DataError, match="no problem has every option scored"):
        run_numeric(nothing, tmp_path, engine=_Unscorable(), heatmap=False)


def _pennies_engine(rule):
    return Engine.from_model("pennies", backend="fake", use_cache=False, progress=False, next_token_probs=rule)


def test_unscored_and_massless_rounds_fall_back_visibly():
    res = play_matching_pennies(_Unscorable(), n_games=3, n_rounds=10, seed=2)
    assert res.moves.shape == (3, 10) and res.fallback.all()
    assert res.fallback_rounds == res.fallback_nan_rounds == 30 and res.fallback_zero_rounds == 0
    d = res.to_dict()
    assert d["fallback_rounds"] == 30 and d["n_games_without_fallback"] == 0
    assert np.isnan(d["win_rate_without_fallback_games"]) and np.isnan(d["mean_probability_mass"])
    # all mass on a word that is neither face: zero mass on both, still played
    elsewhere = play_matching_pennies(
        _pennies_engine(lambda t: {" X": 1.0} if t.endswith(":") else None), n_games=2, n_rounds=6
    )
    assert elsewhere.fallback_zero_rounds == 12 and elsewhere.mean_probability_mass == 0.0
    frame = elsewhere.rounds_frame()
    assert len(frame) == 12 and frame["fallback"].all() and (frame["p_heads"] == 0.5).all()


def _alternating(text):
    """Heads first, then always the other face than the last call: a known sequence."""
    if text.endswith("Round 1:"):
        nxt = " H"
    elif text.endswith(":"):
        nxt = " T" if text.rsplit("\n", 2)[-2].endswith("Heads") else " H"
    else:
        for prefix, step in (
            (" H", "e"),
            (" He", "a"),
            (" Hea", "d"),
            (" Head", "s"),
            (" T", "a"),
            (" Ta", "i"),
            (" Tai", "l"),
            (" Tail", "s"),
        ):
            if text.endswith(prefix):
                return {step: 1.0}
        return None
    return {nxt: 1.0}


def test_alternating_player_is_caught_by_the_guesser_and_the_runs_test():
    res = play_matching_pennies(_pennies_engine(_alternating), n_games=2, n_rounds=30)
    expected = np.array([1, 0] * 15)
    np.testing.assert_array_equal(res.moves, [expected, expected])
    assert res.win_rate == pytest.approx(matching_pennies_win_rate(expected, n=4))
    assert res.win_rate < 0.2 and res.runs_test_pass_rate == 0.0 and res.fallback_rounds == 0
    frame = res.rounds_frame()
    assert frame["player_won"].mean() == pytest.approx(res.win_rate)


def test_pennies_and_frequency_effect_in_the_run_folder(tmp_path):
    table = tmp_path / "counts.csv"
    table.write_text("number,frequency\n" + "\n".join(f"{n},{n * n + 1}" for n in range(1, 11)))
    config = NumericConfig(
        **{**_GRID, "numbers": (1, 4, 7, 10), "pennies_games": 2, "pennies_rounds": 30, "frequency_table": str(table)}
    )
    problems = config.problems()
    engine = behaviour_engine(problems, "pick_higher", fallback=_alternating)
    run = run_numeric(config, tmp_path, engine=engine, heatmap=False)
    pen = run.metrics["pennies"]
    assert pen["n_games"] == 2 and pen["n_rounds"] == 30 and pen["runs_test_pass_rate"] == 0.0
    assert pen["fallback_rounds"] == 0
    rounds = pd.read_parquet(run.folder / "pennies.parquet")
    assert len(rounds) == 60 and rounds["player_won"].mean() == pytest.approx(pen["win_rate"])
    fe = run.metrics["frequency_effect"]
    assert fe["table"]["source"] == str(table) and fe["all_numbers"]["n"] > 0
    assert fe["measured_only"] == fe["all_numbers"]  # a user table counts as measured
    page = (run.folder / "report.html").read_text()
    assert "Matching pennies" in page and "Frequency effects" in page
    assert set(run.metrics["timing"]) == {"scoring_seconds", "pennies_seconds"}
    again = rescore(run.folder, heatmap=False)  # re-analysis keeps the game and timings
    assert again["pennies"] == pen and again["timing"] == run.metrics["timing"]


def test_distributions_extras_and_mode_stability(tmp_path):
    cfg = dict(
        dataset="distributions",
        engine=EngineConfig(model="fk", backend="fake"),
        n_intervals=4,
        templates=("closed", "spinner"),
        frequency_table=None,
    )
    first = NumericConfig(**cfg)
    problems = first.problems()
    a = run_numeric(first, tmp_path, engine=behaviour_engine(problems, "pick_first"))
    b = run_numeric(
        NumericConfig(**cfg, chat=True), tmp_path, engine=behaviour_engine(problems, "pick_second", chat=True)
    )
    d = a.metrics["distributions"]
    assert d["mode_probability"] == pytest.approx(1.0) and d["mode_frequency"] == pytest.approx(1.0)
    digits = d["mode_last_digit"]
    assert sum(v["mode_share"] for v in digits.values()) == pytest.approx(1.0)
    assert sum(v["uniform_share"] for v in digits.values()) == pytest.approx(1.0)
    firsts = [int(p.options[0][-1]) for p in problems]
    for digit, v in digits.items():
        assert v["mode_share"] == pytest.approx(firsts.count(int(digit)) / len(problems))
    assert compare_runs(a.folder, b.folder)["mode_stability"] == 0.0
    assert compare_runs(a.folder, a.folder)["mode_stability"] == 1.0
    metrics = attach_comparison(b.folder, a.folder)
    assert metrics["comparison"]["base"] == a.folder.name
    assert json.loads((b.folder / "comparison.json").read_text())["n_shared"] == len(problems)
    assert "Paired differences" in (b.folder / "report.html").read_text()


def _run_cli(argv):
    parser = argparse.ArgumentParser(prog="folkscope")
    numeric_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["numeric", "run", *argv])
    return args.func(args)


def test_cli_original_templates_games_table_and_comparison(tmp_path, capsys):
    templates = tmp_path / "original.py"
    templates.write_text(
        '# template 0\n"A box has {number_1} {option_1} pens and {number_2} {option_2} pens. I take one; it is"\n'
    )
    prompts = tmp_path / "prompts.json"
    prompts.write_text(
        json.dumps(
            [
                [
                    {"role": "user", "content": "Follow the counts."},
                    {"role": "assistant", "content": "OK."},
                    {"role": "user", "content": "{text}"},
                ]
            ]
        )
    )
    table = tmp_path / "t.csv"
    table.write_text("number,frequency\n2,5\n9,1\n")
    base = [
        "--model",
        "fk",
        "--inference-backend",
        "fake",
        "--results-dir",
        str(tmp_path / "r"),
        "--cache-dir",
        str(tmp_path / "c"),
        "--no-heatmap",
        "--template-file",
        str(templates),
        "--prompt-file",
        str(prompts),
        "--words",
        "red,blue",
        "--numbers",
        "2,9",
        "--frequency-table",
        str(table),
    ]
    assert _run_cli(base) == 0
    ref = Path(capsys.readouterr().out.split("run folder: ")[1].splitlines()[0])
    ref_metrics = json.loads((ref / "metrics.json").read_text())
    assert ref_metrics["n_problems"] == 8 and set(ref_metrics["summary"]) == {
        "probability_mass",
        "calibration_distance",
        "relative_entropy",
    }
    assert _run_cli([*base, "--chat", "--pennies-games", "1", "--pennies-rounds", "5", "--compare-to", str(ref)]) == 0
    out = capsys.readouterr().out
    folder = Path(out.split("run folder: ")[1].splitlines()[0])  # <results>/numeric-<dataset>/<model>/<variant>-<hash8>
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["pennies"]["n_rounds"] == 5 and metrics["comparison"]["base"].endswith(ref.name)
    # one frequency gap only: no correlation, said as n/a, never NaN
    assert math.isnan(metrics["frequency_effect"]["all_numbers"]["spearman_rho"] or math.nan)
    assert "nan" not in out.lower() and "all numbers n/a" in " ".join(out.split())
    assert "<td>nan</td>" not in (folder / "report.html").read_text()  # an undefined p-value reads n/a
    assert metrics["config"]["template_format"] == "auto"
    assert metrics["frequency_effect"]["table"]["n_numbers"] == 2
    problems = pd.read_parquet(folder / "problems.parquet")
    assert problems["text"].iloc[0].startswith("A box has 2 red pens")


def test_cli_bad_frequency_table_fails_before_scoring(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("number,frequency\n1,-3\n2,4\n")
    with pytest.raises(ConfigError, match="frequency"):
        _run_cli(
            [
                "--model",
                "fk",
                "--inference-backend",
                "fake",
                "--no-cache",
                "--results-dir",
                str(tmp_path / "r"),
                "--numbers",
                "1,2",
                "--frequency-table",
                str(bad),
            ]
        )
    assert not (tmp_path / "r").exists()
    with pytest.raises(SystemExit):
        _run_cli(["--numbers", "1,two"])


@pytest.mark.parametrize(
    "change, parameter",
    [
        ({"pennies_games": -1}, "pennies_games"),
        ({"pennies_rounds": 1}, "pennies_rounds"),
        ({"pennies_n": 0}, "pennies_n"),
        ({"template_format": "yaml"}, "template_format"),
        ({"numbers": "1,2"}, "numbers"),
    ],
)
def test_config_checks_the_new_fields(change, parameter):
    with pytest.raises(ConfigError) as info:
        NumericConfig(**change)
    assert info.value.parameter == parameter


def test_config_frequency_table_off_and_round_trip():
    assert NumericConfig(frequency_table="none").frequency_table is None
    cfg = NumericConfig(numbers=(3, 1), pennies_games=2)
    assert cfg.numbers == (3, 1)
    assert NumericConfig.from_dict(cfg.to_dict()).fingerprint() == cfg.fingerprint()
    assert NumericConfig(pennies_games=1).fingerprint() != NumericConfig().fingerprint()
