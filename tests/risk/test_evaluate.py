"""evaluate_scores and the plot-data helpers against hand-computed values."""

from __future__ import annotations

import doctest
import inspect
import json
import math

import numpy as np
import pandas as pd
import pytest

import folkscope.risk.evaluate as ev
from folkscope import metrics as fm
from folkscope.errors import ConfigError, DataError, UnknownColumnError
from folkscope.risk.evaluate import (
    METRICS,
    calibration_data,
    compare_table,
    evaluate_baselines,
    evaluate_scores,
    histogram_data,
    roc_data,
    to_jsonable,
)

LABELS = {"SEX": {1: "Male", 2: "Female"}}


@pytest.fixture
def six() -> pd.DataFrame:
    """Six rows, two groups of SEX, survey weights 1,2,1 | 3,1,2 (total 10)."""
    return pd.DataFrame(
        {
            "label": [1, 0, 1, 0, 1, 0],
            "risk_score": [0.9, 0.2, 0.6, 0.7, 0.4, 0.1],
            "weight": [1.0, 2.0, 1.0, 3.0, 1.0, 2.0],
            "SEX": [1, 1, 1, 2, 2, 2],
        }
    )


def run(frame: pd.DataFrame, **kw):
    kw = {"group_cols": ["SEX"], "n_bins": 2, "n_bootstrap": 0, "group_labels": LABELS, **kw}
    return evaluate_scores(frame, **kw)


def test_overall_unweighted_by_hand(six):
    o = run(six)["unweighted"]["overall"]
    # bins [0, .5): scores .2 .4 .1, labels 0 1 0 -> |1 - 0.7| = 0.3
    # bins [.5, 1]: scores .9 .6 .7, labels 1 1 0 -> |2 - 2.2| = 0.2 ; ECE = 0.5 / 6
    assert o["ece"] == pytest.approx(0.5 / 6)
    # (p - y)^2: .01 .04 .16 .49 .36 .01 -> 1.07 / 6
    assert o["brier"] == pytest.approx(1.07 / 6)
    assert o["log_loss"] == pytest.approx(
        -(math.log(0.9) + math.log(0.8) + math.log(0.6) + math.log(0.3) + math.log(0.4) + math.log(0.9)) / 6
    )
    # positives .9 .6 .4 vs negatives .2 .7 .1: 3 + 2 + 2 winning pairs of 9
    assert o["roc_auc"] == pytest.approx(7 / 9)
    # 1{r > .5}: right on .9 .2 .6 .1, wrong on .7 (y=0) and .4 (y=1)
    assert o["accuracy"] == pytest.approx(4 / 6)
    assert o["tpr"] == pytest.approx(2 / 3)
    assert o["fpr"] == pytest.approx(1 / 3)
    assert o["balanced_accuracy"] == pytest.approx((2 / 3 + 1 - 1 / 3) / 2)
    # mean max(r, 1-r) = (.9+.8+.6+.7+.6+.9)/6 = 4.5/6, minus accuracy 4/6
    assert o["confidence_bias"] == pytest.approx(0.5 / 6)
    # SCE = (sum r - sum y) / n = (2.9 - 3) / 6
    assert o["sce"] == pytest.approx(-0.1 / 6)
    assert (o["n"], o["n_positive"], o["n_negative"], o["prevalence"]) == (6, 3, 3, 0.5)
    assert o["threshold"] == 0.5
    s = o["score_summary"]
    assert s["mean"] == pytest.approx(2.9 / 6) and s["q0.5"] == pytest.approx(0.4)
    assert s["share_near_0"] == 0 and s["n_nan"] == 0


def test_overall_survey_weighted_by_hand(six):
    o = run(six)["survey_weighted"]["overall"]
    assert o["weight"] == 10
    # weighted (p - y)^2: 1*.01 + 2*.04 + 1*.16 + 3*.49 + 1*.36 + 2*.01 = 2.10
    assert o["brier"] == pytest.approx(2.10 / 10)
    # correct rows carry weight 1 + 2 + 1 + 2
    assert o["accuracy"] == pytest.approx(6 / 10)
    # bin [0,.5): sum w*y = 1, sum w*p = .4+.4+.2 = 1.0 -> 0; bin [.5,1]: 2 vs .9+.6+2.1 -> 1.6
    assert o["ece"] == pytest.approx(1.6 / 10)
    # w(p - y): -.1 + .4 - .4 + 2.1 - .6 + .2 = 1.6
    assert o["sce"] == pytest.approx(1.6 / 10)
    # W+ = 3, W- = 7; .9 beats 7, .6 beats 2+2, .4 beats 2+2 -> 15 / 21
    assert o["roc_auc"] == pytest.approx(15 / 21)
    assert o["prevalence"] == pytest.approx(3 / 10)


def test_groups_and_gaps_by_hand(six):
    res = run(six)
    sex = res["unweighted"]["groups"]["SEX"]
    male, female = sex["groups"]
    assert (male["code"], male["name"], female["name"]) == (1, "Male", "Female")
    assert sex["pair"] == ["Male", "Female"] and sex["pair_codes"] == [1, 2]
    # Male: y 1 0 1, r .9 .2 .6 ; Female: y 0 1 0, r .7 .4 .1
    assert male["sce"] == pytest.approx((1.7 - 2) / 3)
    assert female["sce"] == pytest.approx((1.2 - 1) / 3)
    assert sex["delta_sce"] == pytest.approx(-0.1 - 0.2 / 3)
    assert male["accuracy"] == 1.0 and female["accuracy"] == pytest.approx(1 / 3)
    assert male["roc_auc"] == 1.0 and female["roc_auc"] == 0.5
    assert male["prevalence"] == pytest.approx(2 / 3)
    gap = sex["gaps"]["accuracy"]
    assert gap["max_minus_min"] == pytest.approx(2 / 3)
    assert (gap["max_group"], gap["min_group"], gap["n_groups_defined"]) == ("Male", "Female", 2)
    assert gap["a_minus_b"] == pytest.approx(2 / 3)
    assert male["score_summary"]["mean"] == pytest.approx(1.7 / 3)

    wsex = res["survey_weighted"]["groups"]["SEX"]
    wmale, wfemale = wsex["groups"]
    assert (wmale["weight"], wfemale["weight"]) == (4.0, 6.0)
    assert (wmale["n"], wfemale["n"]) == (3, 3)
    assert wmale["prevalence"] == pytest.approx(2 / 4)
    assert wfemale["prevalence"] == pytest.approx(1 / 6)
    # w(p - y): Male 1*(-.1) + 2*.2 + 1*(-.4) = -.1 over 4 ; Female 3*.7 - .6 + 2*.1 = 1.7 over 6
    assert wmale["sce"] == pytest.approx(-0.1 / 4)
    assert wfemale["sce"] == pytest.approx(1.7 / 6)
    assert wsex["delta_sce"] == pytest.approx(-0.1 / 4 - 1.7 / 6)


def test_pairs_by_name_or_code_and_two_columns(six):
    six = six.assign(G=["a", "a", "b", "b", "c", "c"])
    res = run(six, group_cols=["SEX", "G"], group_pairs={"SEX": ("Female", "Male"), "G": ("c", "a")})
    sex = res["unweighted"]["groups"]["SEX"]
    assert sex["pair"] == ["Female", "Male"]
    assert sex["delta_sce"] == pytest.approx(0.2 / 3 + 0.1)
    g = res["unweighted"]["groups"]["G"]
    assert [x["name"] for x in g["groups"]] == ["a", "b", "c"] and g["pair"] == ["c", "a"]
    assert run(six, group_cols=["G"])["unweighted"]["groups"]["G"]["delta_sce"] is None


def test_nan_scores_are_excluded_and_counted(six):
    with_nan = pd.concat(
        [six, pd.DataFrame({"label": [1, 0], "risk_score": [np.nan, np.nan], "weight": [5.0, np.nan], "SEX": [2, 2]})],
        ignore_index=True,
    )
    clean, res = run(six), run(with_nan)
    assert res["counts"] == {"n_rows": 8, "n_scored": 6, "n_excluded": 2}
    assert res["excluded"]["nan_score"] == 2 and res["excluded"]["rows"] == [6, 7]
    assert res["excluded"]["share_nan_score"] == pytest.approx(2 / 8)
    assert res["excluded"]["by_group"] == {"SEX": {"Female": 2}}
    for weighting in ("unweighted", "survey_weighted"):
        for m in METRICS:  # identical to the table without those rows: not imputed
            assert res[weighting]["overall"][m] == pytest.approx(clean[weighting]["overall"][m])
        female = res[weighting]["groups"]["SEX"]["groups"][1]
        assert (female["n"], female["n_nan"], female["n_scored"]) == (5, 2, 3)
        assert res[weighting]["overall"]["score_summary"]["n_nan"] == 2
    assert res["survey_weighted"]["groups"]["SEX"]["groups"][1]["weight"] == 6.0


def test_all_scores_nan_is_reported_not_crashing(six):
    res = run(six.assign(risk_score=np.nan), n_bootstrap=5)
    assert res["counts"]["n_scored"] == 0
    assert res["unweighted"]["overall"]["ece"] is None
    assert res["unweighted"]["intervals"]["ece"] is None
    assert {"weighting": "unweighted", "scope": "overall", "group": None, "metric": "roc_auc"} in res["undefined"]
    json.dumps(res, allow_nan=False)


def test_single_class_group_is_flagged(six):
    six = six.assign(G=["x", "x", "x", "y", "y", "y"], label=[1, 1, 1, 0, 1, 0])
    res = run(six, group_cols=["G"])
    gx = res["unweighted"]["groups"]["G"]["groups"][0]
    assert gx["name"] == "x" and gx["n_negative"] == 0
    for m in ("roc_auc", "balanced_accuracy", "fpr"):
        assert gx[m] is None
        assert {"weighting": "unweighted", "scope": "G", "group": "x", "metric": m} in res["undefined"]
    assert gx["ece"] is not None and gx["tpr"] is not None  # defined metrics stay
    assert res["single_class_groups"] == [{"column": "G", "group": "x", "code": "x", "n_positive": 3, "n_negative": 0}]
    gap = res["unweighted"]["groups"]["G"]["gaps"]["roc_auc"]
    assert gap["n_groups_defined"] == 1


def test_json_serialisable_with_nan_as_null_and_inf_as_string(six):
    six = six.assign(
        risk_score=[0.9, 0.2, 0.6, 0.7, 0.0, 0.1],  # r = 0 on y = 1: log loss inf
        G=["x", "x", "x", "x", "x", "z"],
    )
    res = run(six, group_cols=["SEX", "G"], n_bootstrap=20)
    text = json.dumps(res, allow_nan=False)
    assert json.loads(text) == res
    assert res["unweighted"]["overall"]["log_loss"] == "inf"
    assert res["unweighted"]["groups"]["G"]["groups"][1]["roc_auc"] is None
    assert to_jsonable({"a": np.float64("nan"), 2: (np.int64(1), -np.inf)}) == {"a": None, "2": [1, "-inf"]}


def test_bootstrap_is_seeded_and_covers_the_estimate():
    rng = np.random.default_rng(1)
    p = rng.random(300)
    frame = pd.DataFrame(
        {
            "label": (rng.random(300) < p).astype(int),
            "risk_score": p,
            "weight": rng.integers(1, 5, 300).astype(float),
            "SEX": 1,
        }
    )
    a = evaluate_scores(frame, group_cols=[], n_bootstrap=200, seed=7)
    b = evaluate_scores(frame, group_cols=[], n_bootstrap=200, seed=7)
    c = evaluate_scores(frame, group_cols=[], n_bootstrap=200, seed=8)
    assert a == b
    assert a["unweighted"]["intervals"] != c["unweighted"]["intervals"]
    for weighting in ("unweighted", "survey_weighted"):
        for m in ev.INTERVAL_METRICS:
            iv = a[weighting]["intervals"][m]
            assert iv["n_resamples"] == 200 and iv["n_undefined"] == 0
            assert iv["estimate"] == a[weighting]["overall"][m]
            assert iv["low"] < iv["high"]
        for m in ("brier", "roc_auc", "accuracy"):
            iv = a[weighting]["intervals"][m]
            assert iv["low"] <= iv["estimate"] <= iv["high"]


def test_bootstrap_equals_the_library_row_bootstrap():
    # resampling as count weights gives the same draws as bootstrap_ci's row gather
    # when rows are already in score order
    rng = np.random.default_rng(3)
    p = np.sort(rng.random(80))
    y = (rng.random(80) < p).astype(int)
    frame = pd.DataFrame({"label": y, "risk_score": p})
    res = evaluate_scores(frame, group_cols=[], n_bootstrap=100, seed=5, n_bins=10)
    for name, fn in [
        ("brier", fm.brier_score_loss),
        ("roc_auc", fm.roc_auc_score),
        ("accuracy", fm.accuracy_score),
        ("ece", fm.expected_calibration_error),
    ]:
        ref = fm.bootstrap_ci(fn, y, p, n_resamples=100, random_state=5)
        iv = res["unweighted"]["intervals"][name]
        assert (iv["low"], iv["high"]) == pytest.approx((ref.low, ref.high), abs=1e-12), name


def test_without_weight_column(six):
    res = run(six.drop(columns="weight"), n_bootstrap=10)
    assert res["survey_weighted"] is None and res["settings"]["weight_col"] is None
    assert res["unweighted"]["intervals"]["brier"]["n_resamples"] == 10
    assert run(six, n_bootstrap=0)["unweighted"]["intervals"] == dict.fromkeys(ev.INTERVAL_METRICS)


def test_readable_names_from_string_keys_and_duplicates(six):
    labels = {"SEX": {"1": "Person", "2": "Person"}}
    res = run(six, group_labels=labels)
    names = [g["name"] for g in res["unweighted"]["groups"]["SEX"]["groups"]]
    assert names == ["Person (1)", "Person (2)"]


@pytest.mark.parametrize(
    "change, error",
    [
        (lambda f: f.drop(columns="label"), UnknownColumnError),
        (lambda f: f.drop(columns="SEX"), UnknownColumnError),
        (lambda f: f.assign(SEX=[1, None, 1, 2, 2, 2]), DataError),
        (lambda f: f.assign(weight=[1, -1, 1, 1, 1, 1.0]), DataError),
        (lambda f: f.assign(weight=[1, np.nan, 1, 1, 1, 1.0]), DataError),
        (lambda f: f.assign(risk_score=[1.5, 0.2, 0.6, 0.7, 0.4, 0.1]), DataError),
        (lambda f: f.assign(label=[2, 0, 1, 0, 1, 0]), DataError),
    ],
)
def test_bad_input_raises(six, change, error):
    with pytest.raises(error):
        run(change(six))


@pytest.mark.parametrize(
    "kw", [{"threshold": 1.5}, {"n_bins": 0}, {"n_bootstrap": -1}, {"group_pairs": {"RAC1P": (1, 2)}}]
)
def test_bad_options_raise(six, kw):
    with pytest.raises(ConfigError):
        run(six, **kw)


def test_calibration_data_by_hand(six):
    data = calibration_data(six, n_bins=2, group_cols=["SEX"], group_labels=LABELS)
    c = data["overall"]
    assert c["count"].tolist() == [3, 3]
    assert c["mean_predicted"] == pytest.approx([0.7 / 3, 2.2 / 3])
    assert c["fraction_positive"] == pytest.approx([1 / 3, 2 / 3])
    assert np.all(c["ci_low"] <= c["fraction_positive"])
    assert np.all(c["fraction_positive"] <= c["ci_high"])
    male, female = data["groups"]["SEX"]
    assert (male["name"], male["n"]) == ("Male", 3)
    # Male: .2 (y 0) in the low bin; .9 .6 (y 1 1) in the high one
    assert male["curve"]["fraction_positive"] == pytest.approx([0.0, 1.0])
    q = calibration_data(six, n_bins=3, strategy="quantile")
    assert q["overall"]["count"].tolist() == [2, 2, 2]
    w = calibration_data(six, n_bins=2, weight_col="weight")
    assert w["overall"]["weight"] == pytest.approx([5.0, 5.0])
    empty = calibration_data(six.assign(risk_score=np.nan), n_bins=2)
    assert empty["n_excluded"] == 6 and empty["overall"]["count"].tolist() == [0, 0]
    assert np.isnan(empty["overall"]["fraction_positive"]).all()


def test_roc_and_histogram_data(six):
    base = np.array([0.8, 0.1, 0.7, 0.3, 0.6, 0.2])  # separates the labels perfectly
    roc = roc_data(six.assign(risk_score=[0.9, 0.2, 0.6, 0.7, 0.4, np.nan]), baselines={"lr": base})
    assert roc["lr"]["auc"] == 1.0 and roc["model"]["n_excluded"] == 1
    assert roc["model"]["fpr"][0] == 0 and roc["model"]["tpr"][-1] == 1
    one_class = roc_data(six.assign(label=1))
    assert np.isnan(one_class["model"]["auc"]) and len(one_class["model"]["fpr"]) == 0
    h = histogram_data(six, bins=2)
    assert h["overall"].tolist() == [3, 3]
    assert h["by_label"][1].tolist() == [1, 2]


def test_compare_table_and_baselines(six):
    model = run(six, n_bootstrap=20)
    base = evaluate_baselines(six, {"lr": [0.8, 0.1, 0.7, 0.3, 0.6, 0.2]}, group_cols=["SEX"], n_bins=2, n_bootstrap=20)
    table = compare_table({"model": model, **base}, intervals=True)
    assert list(table.index) == ["model", "lr"]
    assert table.loc["lr", "AUC"] == 1.0 and table.loc["lr", "Accuracy"] == 1.0
    assert table.loc["model", "Brier"] == pytest.approx(1.07 / 6)
    assert table.loc["model", "n"] == 6
    assert {"ECE low", "ECE high", "AUC low"} <= set(table.columns)
    weighted = compare_table({"model": model}, weighting="survey_weighted")
    assert weighted.loc["model", "Brier"] == pytest.approx(0.21)
    flat = compare_table({"m": {"log_loss": "inf", "roc_auc": None}})
    assert flat.loc["m", "Log loss"] == np.inf and np.isnan(flat.loc["m", "AUC"])
    with pytest.raises(DataError):
        evaluate_baselines(six, {"short": [0.5]})
    with pytest.raises(ConfigError):
        compare_table({}, weighting="both")


def test_public_names_and_docstring_examples():
    public = {n for n, v in vars(ev).items() if not n.startswith("_") and getattr(v, "__module__", None) == ev.__name__}
    assert public <= set(ev.__all__)
    assert all(hasattr(ev, n) for n in ev.__all__)
    for name in ev.__all__:
        obj = getattr(ev, name)
        if inspect.isfunction(obj):
            assert ">>>" in (obj.__doc__ or ""), name
    assert doctest.testmod(ev, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def test_metric_undefined_in_every_group(six):
    # every group single-class: AUC, balanced accuracy and FPR undefined everywhere,
    # while ECE, Brier, accuracy stay defined (groupwise_metrics' gaps need one call per metric)
    res = run(six.assign(label=1))
    sex = res["unweighted"]["groups"]["SEX"]
    assert [g["roc_auc"] for g in sex["groups"]] == [None, None]
    assert sex["gaps"]["roc_auc"]["max_minus_min"] is None
    assert sex["gaps"]["roc_auc"]["n_groups_defined"] == 0
    assert sex["gaps"]["roc_auc"]["a_minus_b"] is None
    male = sex["groups"][0]
    # Male: r .9 .2 .6 on y = 1 -> Brier (.01 + .64 + .16) / 3, accuracy 2/3
    assert male["brier"] == pytest.approx(0.81 / 3) and male["accuracy"] == pytest.approx(2 / 3)
    assert male["tpr"] == pytest.approx(2 / 3) and male["n_positive"] == 3
    assert sex["gaps"]["brier"]["max_group"] in ("Male", "Female")
    assert len(res["single_class_groups"]) == 3  # overall, Male, Female


def test_codebook_names_for_acs_groups(six):
    labels = ev.codebook_group_labels(["RAC1P", "SEX", "AGEP"])
    assert set(labels) == {"RAC1P", "SEX"}  # AGEP is numeric: no group names
    res = run(six.assign(RAC1P=[1, 1, 2, 2, 6, 6]), group_cols=["RAC1P"], group_labels=labels)
    names = [g["name"] for g in res["unweighted"]["groups"]["RAC1P"]["groups"]]
    assert names == ["White", "Black or African American", "Asian"]
