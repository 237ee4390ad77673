"""The paper's analyses folktexts lacks, and the diagnostics that say when scores mean nothing.

On main (2026-11-25) a run had no order-bias size, answer-letter mass or
collapse warning (the default model's scores all sit in 0.497-0.502 with an
order bias of 0.83 and a median letter mass of 0.18), no selective accuracy,
one-repeat importance without a plot, no intervals for per-group metrics,
gaps or ΔSCE (and no way to choose the ΔSCE pair), and no survey standard
errors from the ACS's replicate weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from markupsafe import escape

from folkscope.cli.main import main
from folkscope.data import load_bundled
from folkscope.metrics import GROUP_METRICS, replicate_standard_error
from folkscope.risk.diagnostics import score_diagnostics
from folkscope.risk.evaluate import selective_accuracy_data

FAKE = ["--model", "cli-fake", "--inference-backend", "fake", "--no-cache", "--no-baselines", "--task", "NISTIncome"]


def _run(capsys, tmp_path, *extra: str) -> tuple[Path, dict, str]:
    assert main(["run", *FAKE, "--results-dir", str(tmp_path), *extra]) == 0
    captured = capsys.readouterr()
    run_dir = Path(captured.out.split("run folder: ")[1].splitlines()[0])
    return run_dir, json.loads((run_dir / "metrics.json").read_text()), captured.out + captured.err


# -- diagnostics ---------------------------------------------------------------------------------------


def test_diagnostics_by_hand_and_the_collapse_warning():
    table = pd.DataFrame(
        {
            "risk_score": [0.498, 0.5, 0.501, 0.502],
            "score_ordering_0": [0.9, 0.95, 0.92, 0.99],
            "score_ordering_1": [0.1, 0.05, 0.08, 0.01],
            "answer_mass": [0.2, 0.15, 0.18, 0.9],
        }
    )
    d = score_diagnostics(table)
    assert d["order_bias"]["mean_abs_difference"] == pytest.approx((0.8 + 0.9 + 0.84 + 0.98) / 4)
    assert d["answer_mass"]["median"] == pytest.approx(0.19) and d["answer_mass"]["share_below_half"] == 0.75
    assert d["spread"]["collapsed"] and len(d["warnings"]) == 3
    assert (
        "Scores collapse" in d["warnings"][0]
        and "0.88 on average" in d["warnings"][1]
        and "median 19%" in d["warnings"][2]
    )
    spread_out = score_diagnostics(pd.DataFrame({"risk_score": np.linspace(0.05, 0.95, 50)}))
    assert spread_out["warnings"] == [] and spread_out["order_bias"] is None and spread_out["answer_mass"] is None


def test_selective_accuracy_by_hand():
    table = pd.DataFrame({"label": [1, 0, 1, 0, 1], "risk_score": [0.95, 0.1, 0.3, 0.65, 0.65]})
    # confidence 0.95 0.9 0.7 0.65 0.65; correct 1 1 0 0 1 -> coverage 0.2: 1, 0.4: 1, 0.6: 2/3, 1.0: 3/5
    at = selective_accuracy_data(table)["at_coverage"]
    assert at == {
        "0.1": 1.0,
        "0.25": 1.0,
        "0.5": pytest.approx(2 / 3),
        "0.75": pytest.approx(3 / 5),
        "1.0": pytest.approx(3 / 5),
    }


def test_a_run_reports_diagnostics_selective_accuracy_and_warns_on_the_console(capsys, tmp_path):
    run_dir, metrics, printed = _run(capsys, tmp_path, "--subsampling", "0.02", "--n-bootstrap", "20")
    diag = metrics["diagnostics"]
    assert diag["order_bias"]["orderings"] == 2 and 0 <= diag["answer_mass"]["median"] <= 1
    assert "diagnostics: order bias" in printed and "selective accuracy: 10% most confident" in printed
    shown = [
        line.removeprefix("caveat: ").split("\u2026")[0] for line in printed.splitlines() if line.startswith("caveat: ")
    ]
    # every warning reached the console: one line each, its start (cut to the width) and where the rest is
    assert all(any(w.startswith(start) for start in shown) for w in diag["warnings"])
    html = (run_dir / "report.html").read_text()
    assert "Diagnostics: do the scores mean anything?" in html and "Selective accuracy" in html
    assert (run_dir / "plots" / "selective_accuracy.png").is_file()
    for warning in diag["warnings"]:  # the warnings sit with the answer, above every table
        assert html.index(escape(warning)) < html.index("<table")


# -- intervals for groups, gaps and ΔSCE -----------------------------------------------------------


def test_group_gap_and_delta_sce_intervals_with_a_chosen_pair(capsys, tmp_path):
    run_dir, metrics, _ = _run(
        capsys, tmp_path, "--subsampling", "0.03", "--n-bootstrap", "200", "--sce-pair", "RAC1P=White,2"
    )
    block = metrics["model"]["unweighted"]["groups"]["RAC1P"]
    assert block["pair"] == ["White", "Black or African American"]
    iv = block["intervals"]
    assert iv["n_resamples"] == 200
    delta = iv["delta_sce"]
    assert delta["low"] <= block["delta_sce"] <= delta["high"]
    white = next(g for g in block["groups"] if g["name"] == "White")
    assert iv["groups"]["White"]["ece"]["low"] <= white["ece"] <= iv["groups"]["White"]["ece"]["high"]
    gap = iv["gaps"]["roc_auc"]["max_minus_min"]
    assert gap["low"] is not None and gap["low"] <= gap["high"]
    sex = metrics["model"]["unweighted"]["groups"]["SEX"]  # two groups: the pair is the default, with its interval
    assert sex["intervals"]["delta_sce"]["low"] <= sex["delta_sce"] <= sex["intervals"]["delta_sce"]["high"]
    html = (run_dir / "report.html").read_text()
    assert "95% bootstrap intervals per group" in html and "ΔSCE = SCE(White) − SCE(Black or African American)" in html


def test_group_intervals_cover_the_truth_at_the_nominal_rate():
    """Calibrated scores, two groups with equal SCE 0: the ΔSCE interval holds 0 in about 95% of 200 samples."""
    from folkscope.risk.evaluate import evaluate_scores

    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(200):
        p = rng.uniform(0.05, 0.95, 300)
        table = pd.DataFrame({"label": rng.binomial(1, p), "risk_score": p, "SEX": rng.integers(1, 3, 300)})
        block = evaluate_scores(
            table, weight_col=None, group_cols=("SEX",), n_bootstrap=200, seed=int(rng.integers(1e9))
        )
        iv = block["unweighted"]["groups"]["SEX"]["intervals"]["delta_sce"]
        hits += iv["low"] <= 0 <= iv["high"]
    assert 0.88 <= hits / 200 <= 0.99, hits


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("SEX=1", "expected COLUMN=A,B"),
        ("AGEP=1,2", "not a group column"),
        ("RAC1P=1,Martian", "'Martian' is not a group of RAC1P"),
    ],
)
def test_bad_pairs_are_one_line_before_any_model_loads(capsys, pair, message):
    assert main(["run", "--model", "/nonexistent", "--task", "NISTIncome", "--sce-pair", pair]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# -- permutation importance -------------------------------------------------------------------------


def test_importance_with_repeats_a_row_cap_and_its_plot(capsys, tmp_path):
    run_dir, metrics, printed = _run(
        capsys,
        tmp_path,
        "--subsampling",
        "0.03",
        "--n-bootstrap",
        "10",
        "--feature-importance",
        "--importance-repeats",
        "3",
        "--importance-rows",
        "30",
    )
    table = pd.read_csv(run_dir / "feature_importance.csv", index_col="column")
    assert set(table["n_repeats"]) == {3} and set(table["rows"]) == {30}
    assert (table["std"] > 0).any()  # three different shuffles per feature
    assert list(table["importance"]) == sorted(table["importance"], reverse=True)
    assert (run_dir / "plots" / "feature_importance.png").is_file()
    assert "Permutation importance" in (run_dir / "report.html").read_text()
    assert "feature importance (AUC drop when permuted)" in printed


# -- replicate weights -------------------------------------------------------------------------------


def test_replicate_standard_error_by_hand_and_with_acs_shaped_weights():
    x = np.array([1.0, 2.0, 3.0])
    mean = lambda w: float(np.average(x, weights=w))  # noqa: E731
    # replicates give 2.25 and 1.75 around 2.0: SE = sqrt(4/2 * (0.25^2 + 0.25^2)) = 0.5
    assert replicate_standard_error(mean, [1, 1, 1], [[1, 2], [1, 1], [2, 1]]) == pytest.approx(0.5)
    # replicates equal to the full weight: no variance
    assert replicate_standard_error(mean, [1, 2, 3], np.tile([[1], [2], [3]], 80)) == 0.0
    with pytest.raises(Exception, match="shape"):
        replicate_standard_error(mean, [1, 1, 1], [[1, 2], [1, 1]])


def test_a_run_on_rows_with_80_replicate_weights_reports_survey_standard_errors(capsys, tmp_path):
    rows = load_bundled("nist-national").head(400).copy()
    rng = np.random.default_rng(0)
    for k in range(1, 81):
        rows[f"PWGTP{k}"] = np.round(rows["PWGTP"] * rng.uniform(0.5, 1.5, len(rows)))
    rows.to_parquet(tmp_path / "rows.parquet")
    run_dir, metrics, _ = _run(
        capsys, tmp_path / "r", "--data-file", str(tmp_path / "rows.parquet"), "--n-bootstrap", "10"
    )
    sw = metrics["model"]["survey_weighted"]
    se = sw["replicate_standard_errors"]
    table = pd.read_parquet(run_dir / "scores.parquet")
    y, p, w = table["label"].to_numpy(float), table["risk_score"].to_numpy(float), table["weight"].to_numpy(float)
    reps = table[[f"replicate_weight_{k}" for k in range(1, 81)]].to_numpy(float)
    brier = GROUP_METRICS["brier_score"]
    by_hand = np.sqrt(
        4 / 80 * sum((brier(y, p, reps[:, k], 0.5, 10) - brier(y, p, w, 0.5, 10)) ** 2 for k in range(80))
    )
    assert se["brier"] == pytest.approx(by_hand) and se["brier"] > 0
    assert "Survey standard errors (replicate weights)" in (run_dir / "report.html").read_text()
