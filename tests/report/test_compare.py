"""``folkscope compare``: paired differences of two runs, checked by hand on tiny tables and on real fake-backend runs.

The real runs are made once per module through the CLI with the fake
backend: two risk runs that differ in their prompt setting (order-bias
correction on and off) and a rerun of the first in another folder (the fake
model is deterministic, so its scores are identical), and
a base and a chat run of each other part.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.cli.main import main
from folkscope.errors import ConfigError, DataError
from folkscope.metrics import bootstrap_ci
from folkscope.report.compare import check_output, compare_runs
from folkscope.report.matching import match_units
from folkscope.report.paired import PairedMetric, paired_differences
from folkscope.risk.compare import RISK_METRICS
from folkscope.runs import Manifest

FAKE = ["--inference-backend", "fake", "--no-cache"]
RISK = ["risk", "run", *FAKE, "--task", "NISTPoverty", "--subsampling", "0.02", "--n-bootstrap", "10", "--no-baselines"]


def _folder(root: Path) -> Path:
    (found,) = [p.parent for p in root.rglob("manifest.json") if ".staging" not in str(p)]
    return found


def _run(root: Path, argv: list[str]) -> Path:
    assert main([*argv, "--results-dir", str(root)]) == 0
    return _folder(root)


ALLOCATION = ["allocation", "run", *FAKE, "--model", "fake", "--rounds", "4", "--n-bootstrap", "10"]
EPIDEMIOLOGY = ["epidemiology", "run", *FAKE, "--model", "fake", "--tasks", "acs_income_by_sex,anes96_vote_by_party"]
HIGH = [
    "epidemiology",
    "run",
    *FAKE,
    "--model",
    "fake",
    "--tasks",
    "acs_walking_difficulty_by_sex_age",
    "--refits",
    "3",
]
NUMERIC = ["numeric", "run", *FAKE, "--model", "fake", "--limit", "20", "--no-heatmap"]
#: run name -> its command line
RUNS = {
    "risk": [*RISK, "--model", "fake"],
    "risk_twin": [*RISK, "--model", "fake"],
    "risk_no_correction": [*RISK, "--model", "fake", "--dont-correct-order-bias"],
    "risk_income": [*RISK, "--model", "fake", "--task", "NISTIncome"],
    "numeric": NUMERIC,
    "numeric_chat": [*NUMERIC, "--chat"],
    "allocation": ALLOCATION,
    "allocation_base": [*ALLOCATION, "--no-chat"],
    "allocation_pairwise": [*ALLOCATION, "--mode", "pairwise"],
    "epidemiology": EPIDEMIOLOGY,
    "epidemiology_chat": [*EPIDEMIOLOGY, "--chat"],
    "high": HIGH,
    "high_chat": [*HIGH, "--chat"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    return {name: _run(root / name, argv) for name, argv in RUNS.items()}


def _row(comparison, metric: str, scope: str = "overall") -> pd.Series:
    d = comparison.differences
    return d[(d["metric"] == metric) & (d["scope"] == scope)].iloc[0]


def _copy_with_scores(run: Path, dest: Path, edit) -> Path:
    """A copy of a risk run folder whose scores table is ``edit(scores)`` (rows dropped, labels changed, ...)."""
    shutil.copytree(run, dest)
    scores = pd.read_parquet(dest / "scores.parquet")
    edit(scores).to_parquet(dest / "scores.parquet", index=False)
    return dest


# ----------------------------------------------------------------------------- hand computations on tiny runs
Y = [0, 1, 1, 0]
P_A = [0.2, 0.6, 0.9, 0.4]
P_B = [0.1, 0.8, 0.35, 0.4]


def _tiny_run(folder: Path, scores: list[float], *, task: str = "T", weight: list[float] | None = None) -> Path:
    folder.mkdir(parents=True)
    Manifest(part="risk", fingerprint=folder.name * 8, config={"task": {"name": task}}).write(folder)
    table = pd.DataFrame(
        {
            "row_id": [10, 11, 12, 13],
            "split": "test",
            "label": Y,
            "weight": weight or [1.0] * 4,
            "SEX": [1, 2, 1, 2],
            "risk_score": scores,
        }
    )
    table.to_parquet(folder / "scores.parquet", index=False)
    settings_ = {"threshold": 0.5, "n_bins": 10, "group_cols": ["SEX"]}
    (folder / "metrics.json").write_text(json.dumps({"model": {"settings": settings_}}))
    return folder


def test_tiny_risk_differences_are_the_hand_computed_ones(tmp_path):
    a, b = _tiny_run(tmp_path / "a", P_A), _tiny_run(tmp_path / "b", P_B)
    res = compare_runs(a, b, replicates=0)
    # Brier: squared errors A .04 .16 .01 .16 (mean .0925), B .01 .04 .4225 .16 (mean .158125)
    assert _row(res, "brier")["a"] == pytest.approx(0.0925)
    assert _row(res, "brier")["difference"] == pytest.approx(0.158125 - 0.0925)
    # AUC: A ranks both positives above both negatives (1.0); B's 0.35 is below the negative 0.4 (3 of 4 pairs)
    assert _row(res, "roc_auc")["difference"] == pytest.approx(0.75 - 1.0)
    # accuracy at 0.5: A right on all four rows, B misses row 12 (0.35 for a positive)
    assert _row(res, "accuracy")["difference"] == pytest.approx(-0.25)
    # SCE is the mean score minus the prevalence: A .525 - .5, B .4125 - .5
    assert _row(res, "sce")["difference"] == pytest.approx((0.4125 - 0.5) - (0.525 - 0.5))
    assert res.lead().startswith("B's AUC is 0.250 lower on 4 shared rows; ECE ")
    assert np.isnan(_row(res, "brier")["low"]) and _row(res, "brier")["favours"] == "n/a"  # no replicates, no interval
    # B - A per row: 10 -.1, 11 +.2, 12 -.55, 13 0; largest move first
    assert list(res.moved["row_id"]) == [12, 11, 10, 13] and res.moved["difference"].iloc[0] == pytest.approx(-0.55)


def test_survey_weighted_brier_difference_is_the_weighted_mean_of_squared_error_differences(tmp_path):
    w = [1.0, 2.0, 3.0, 4.0]
    a, b = _tiny_run(tmp_path / "a", P_A, weight=w), _tiny_run(tmp_path / "b", P_B, weight=w)
    res = compare_runs(a, b, replicates=0, survey_weighted=True)
    # (.04*1 + .16*2 + .01*3 + .16*4) / 10 = .103; (.01*1 + .04*2 + .4225*3 + .16*4) / 10 = .19975
    assert _row(res, "brier")["difference"] == pytest.approx(0.19975 - 0.103)
    assert "survey-weighted metrics" in res.notes


def test_paired_interval_of_brier_is_the_bootstrap_of_per_row_squared_error_differences(runs):
    a, b = runs["risk"], runs["risk_no_correction"]
    res = compare_runs(a, b, replicates=300, seed=7)
    sa, sb = pd.read_parquet(a / "scores.parquet"), pd.read_parquet(b / "scores.parquet")
    both = sa.merge(sb, on="row_id", suffixes=("_a", "_b"))
    diff = (both["risk_score_b"] - both["label_b"]) ** 2 - (both["risk_score_a"] - both["label_a"]) ** 2
    # Brier is a mean, so B - A on a resample is the mean of the rows' squared-error differences on it
    expected = bootstrap_ci(np.mean, diff.to_numpy(), n_resamples=300, random_state=7)
    row = _row(res, "brier")
    assert row["difference"] == pytest.approx(diff.mean())
    assert (row["low"], row["high"]) == pytest.approx((expected.low, expected.high))
    for metric in ("brier", "log_loss", "accuracy", "roc_auc", "ece"):
        got = _row(res, metric)
        assert got["low"] <= got["difference"] <= got["high"], metric
    assert (res.n_a, res.n_b, res.n_shared) == (len(sa), len(sb), len(sa))
    assert res.moved["difference"].abs().is_monotonic_decreasing and len(res.moved) == 10
    assert {"row_id", "label", "RAC1P", "SEX", "score_a", "score_b", "difference"} <= set(res.moved.columns)


def test_identical_runs_differ_by_zero_with_zero_width_intervals(runs):
    res = compare_runs(runs["risk"], runs["risk_twin"], replicates=50)
    assert (res.differences["difference"] == 0).all()
    defined = res.differences.dropna(subset=["low"])
    assert len(defined) == len(RISK_METRICS) and (defined["low"] == 0).all() and (defined["high"] == 0).all()
    ranked = res.differences["better"] != "none"  # PPR is a rate with no better direction: "n/a"
    assert set(res.differences.loc[ranked, "favours"]) == {"neither"} and set(
        res.differences.loc[~ranked, "favours"]
    ) <= {"n/a"}
    assert (res.moved["difference"] == 0).all()
    assert "AUC is the same" in res.lead()


# ----------------------------------------------------------------------------- refusals
def test_runs_of_different_parts_are_refused_in_one_line(capsys, runs):
    assert main(["compare", str(runs["risk"]), str(runs["numeric"])]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "of part 'risk'" in err and "of part 'numeric'" in err and "same part" in err


def test_runs_of_different_tasks_are_refused(runs):
    with pytest.raises(ConfigError, match="task 'NISTPoverty' and run B of task 'NISTIncome'"):
        compare_runs(runs["risk"], runs["risk_income"])


def test_rows_with_other_labels_are_refused_with_the_counts(runs, tmp_path):
    flipped = _copy_with_scores(runs["risk"], tmp_path / "flipped", lambda s: s.assign(label=1 - s["label"]))
    n = len(pd.read_parquet(flipped / "scores.parquet"))
    with pytest.raises(
        DataError,
        match=rf"A holds {n} rows, B {n} rows, {n} shared by key, but {n} of those have another "
        "label",
    ):
        compare_runs(runs["risk"], flipped)


def test_a_subset_is_compared_on_its_rows_and_a_partial_overlap_needs_shared_rows(capsys, runs, tmp_path):
    a = runs["risk"]
    n = len(pd.read_parquet(a / "scores.parquet"))
    head = _copy_with_scores(a, tmp_path / "head", lambda s: s.iloc[: n - 10])
    res = compare_runs(a, head, replicates=20)
    assert (res.n_a, res.n_b, res.n_shared) == (n, n - 10, n - 10)
    assert any("compared on the" in note for note in res.notes)
    tail = _copy_with_scores(a, tmp_path / "tail", lambda s: s.iloc[10:])
    assert main(["compare", str(head), str(tail)]) == 2
    err = capsys.readouterr().err
    assert f"A holds {n - 10} rows, B {n - 10} rows, {n - 20} shared" in err and "--shared-rows" in err
    assert compare_runs(head, tail, replicates=0, shared_rows=True).n_shared == n - 20
    disjoint = _copy_with_scores(a, tmp_path / "none", lambda s: s.assign(row_id=s["row_id"] + 10**9))
    with pytest.raises(DataError, match="share no row"):
        compare_runs(a, disjoint)


def test_rows_without_a_score_are_left_out_of_both_runs(runs, tmp_path):
    a = runs["risk"]
    holes = _copy_with_scores(a, tmp_path / "holes", lambda s: s.assign(risk_score=s["risk_score"].where(s.index >= 3)))
    res = compare_runs(a, holes, replicates=0)
    assert res.n_shared == res.n_a - 3 and (res.differences["difference"] == 0).all()
    assert any("3 shared rows without a score" in note for note in res.notes)


def test_bad_options_are_refused_before_any_work(tmp_path):
    with pytest.raises(ConfigError, match="--output must end in .csv or .json"):
        check_output(tmp_path / "out.txt")
    with pytest.raises(ConfigError, match="replicates"):
        compare_runs(tmp_path / "nowhere", tmp_path / "nowhere", replicates=-1)
    with pytest.raises(DataError, match="not a finished run folder"):
        compare_runs(tmp_path, tmp_path)


# ----------------------------------------------------------------------------- the other parts
def test_numeric_differences_are_the_means_of_problem_differences(runs):
    a, b = runs["numeric"], runs["numeric_chat"]
    res = compare_runs(a, b, replicates=100)
    pa, pb = (pd.read_parquet(f / "problem_metrics.parquet").set_index("problem_id") for f in (a, b))
    for metric in ("probability_mass", "calibration_distance", "relative_entropy"):
        d = (pb[metric] - pa.loc[pb.index, metric]).dropna()
        assert _row(res, metric)["difference"] == pytest.approx(d.mean(), abs=1e-12)
        assert _row(res, metric)["low"] <= _row(res, metric)["high"]
    assert res.unit == "problem" and res.n_shared == 20 and res.lead().startswith("B's WD is ")
    assert {"problem_id", "pair", "wd_a", "wd_b", "difference"} <= set(res.moved.columns)


def test_allocation_rabbi_is_the_runs_own_and_paired_by_candidate(runs):
    a, b = runs["allocation"], runs["allocation_base"]
    res = compare_runs(a, b, replicates=100)
    assert res.unit == "candidate"  # pointwise scores belong to the candidate, as in the run's own bias table
    for folder, side in ((a, "a"), (b, "b")):
        bias = pd.read_parquet(folder / "bias.parquet")
        for _, g in bias.iterrows():
            assert _row(res, "rabbi", g["group"])[side] == pytest.approx(g["rabbi"])
    rabbi = res.differences[res.differences["metric"] == "rabbi"]
    assert _row(res, "mean_abs_rabbi")["a"] == pytest.approx(rabbi["a"].abs().mean())
    sa, sb = (
        pd.read_parquet(f / "scores.parquet").drop_duplicates("candidate_id").set_index("candidate_id") for f in (a, b)
    )
    assert res.n_shared == len(sa) and _row(res, "mean_score")["difference"] == pytest.approx(
        (sb["score"] - sa["score"]).mean()
    )


def test_allocation_across_scoring_modes_compares_ranks_only(runs):
    res = compare_runs(runs["allocation"], runs["allocation_pairwise"], replicates=50)
    assert res.unit == "appearance" and "mean_score" not in set(res.differences["metric"])
    assert any("different scales" in note for note in res.notes)
    assert res.moved["difference"].isna().all() and {"rank_a", "rank_b"} <= set(res.moved.columns)


def test_epidemiology_scores_are_the_runs_own_with_truth_redrawn_intervals(runs):
    a, b = runs["epidemiology"], runs["epidemiology_chat"]
    res = compare_runs(a, b, replicates=200)
    sa, sb = (pd.read_parquet(f / "scores.parquet").set_index("task") for f in (a, b))
    for task in sa.index:
        assert _row(res, "distance", task)["a"] == sa.loc[task, "distance"]
        assert _row(res, "score", task)["difference"] == pytest.approx(sb.loc[task, "score"] - sa.loc[task, "score"])
        assert np.isfinite(_row(res, "distance", task)["low"])  # the tables reproduce the run's distance
    assert _row(res, "mean_score")["difference"] == pytest.approx(sb["score"].mean() - sa["score"].mean())
    assert not any("no interval" in note for note in res.notes)
    assert res.moved_unit == "condition" and {"task", "condition", "distance_a", "distance_b"} <= set(res.moved.columns)
    same = compare_runs(a, a, replicates=50)
    assert (same.differences["difference"] == 0).all() and (same.differences[["low", "high"]] == 0).all().all()


def test_high_dimensional_tasks_resample_persons_for_the_interval(runs):
    res = compare_runs(runs["high"], runs["high_chat"], replicates=100)
    sa, sb = (pd.read_parquet(runs[k] / "scores.parquet").iloc[0] for k in ("high", "high_chat"))
    row = _row(res, "distance", sa["task"])
    assert (row["a"], row["b"]) == (sa["distance"], sb["distance"]) and row["low"] <= row["difference"] <= row["high"]
    assert row["high"] > row["low"] and not any("no interval" in note for note in res.notes)


# ----------------------------------------------------------------------------- CLI
def test_cli_ends_with_the_answer_and_writes_csv_and_json(capsys, runs, tmp_path):
    argv = ["compare", str(runs["risk"]), str(runs["risk_no_correction"]), "--replicates", "50", "--top", "3"]
    assert main([*argv, "--output", str(tmp_path / "diff.csv")]) == 0
    out = capsys.readouterr().out.splitlines()
    # the fake model's answers follow letter position: each run's order-bias caveat comes before the difference
    caveats = [line for line in out if line.startswith("caveat: ")]
    assert out[: len(caveats)] == caveats and caveats[0].startswith("caveat: A: Answer order drives the answer")
    out = out[len(caveats) :]
    assert out[0] == f"A: {runs['risk']}" and "rows that moved most (B minus A):" in out
    # it ends with the answer (folded to the terminal) and where the results went
    start = max(i for i, line in enumerate(out) if line.startswith("answer: "))
    answer = " ".join(" ".join(out[start:-1]).removeprefix("answer: ").split())
    assert answer.startswith("B's AUC is ") and "(95% CI " in answer and "shared rows; ECE " in answer
    assert out[-1] == f"report: {tmp_path / 'diff.csv'}"
    table = pd.read_csv(tmp_path / "diff.csv")
    assert len(table) == len(RISK_METRICS) and {"metric", "a", "b", "difference", "low", "high", "favours"} <= set(
        table.columns
    )
    assert len(pd.read_csv(tmp_path / "diff-moved.csv")) == 3
    assert main([*argv, "--output", str(tmp_path / "diff.json")]) == 0
    capsys.readouterr()
    data = json.loads((tmp_path / "diff.json").read_text())
    assert data["part"] == "risk" and data["lead"] == answer and len(data["moved"]) == 3
    # each caveat printed in one line, its start at least; the file has them whole
    starts = [line.removeprefix("caveat: ").split("…")[0] for line in caveats]
    assert all(any(c.startswith(start) for c in data["caveats"]) for start in starts)
    assert data["differences"][0]["metric"] == "ece"


# ----------------------------------------------------------------------------- the paired machinery
def test_match_units_keeps_keys_truth_and_both_sides():
    a = pd.DataFrame({"row_id": [3, 1, 2], "label": [1, 0, 1], "p": [0.3, 0.1, 0.2]})
    m = match_units(a, a.iloc[::-1], keys=["row_id"], same=["label"])
    assert list(m.shared["row_id"]) == [1, 2, 3] and m.note is None
    assert (m.shared["p_a"] == m.shared["p_b"]).all()
    with pytest.raises(DataError, match="holds 1 row twice"):
        match_units(pd.concat([a, a.iloc[:1]]), a, keys=["row_id"])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=30), st.integers(0, 2**16))
def test_swapping_runs_negates_the_difference_and_mirrors_its_interval(pairs, seed):
    values = np.array(pairs).T  # row 0: run A's per-unit values, row 1: B's

    def mean(side: int, counts: np.ndarray) -> float:
        return float(np.dot(values[side], counts) / counts.sum())

    forward = paired_differences([PairedMetric("m", "M", "higher", mean)], values.shape[1], replicates=30, seed=seed)
    swapped = paired_differences(
        [PairedMetric("m", "M", "higher", lambda s, c: mean(1 - s, c))], values.shape[1], replicates=30, seed=seed
    )
    assert swapped.loc[0, "difference"] == pytest.approx(-forward.loc[0, "difference"], abs=1e-12)
    assert swapped.loc[0, "low"] == pytest.approx(-forward.loc[0, "high"], abs=1e-9)
    assert forward.loc[0, "low"] <= forward.loc[0, "high"]
    same = paired_differences(
        [PairedMetric("m", "M", "zero", lambda s, c: mean(0, c))], values.shape[1], replicates=30, seed=seed
    )
    assert (
        same.loc[0, ["difference", "low", "high"]].tolist() == [0.0, 0.0, 0.0] and same.loc[0, "favours"] == "neither"
    )
