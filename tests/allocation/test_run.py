"""Part 2 end to end: the default model screens the bundled resumes (pointwise, pairwise), a listwise run on a
scripted fake, an ACS allocation from a part-1 run folder without re-scoring, rescore, the study, and clear errors."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from folkscope.allocation import AllocationConfig, bloomberg_resumes, draw_pools, rescore, run_allocation, study
from folkscope.cli.main import main
from folkscope.engine import Engine, EngineConfig
from folkscope.engine.backends.fake import FakeBackend
from folkscope.errors import CaveatWarning
from folkscope.runs import read_manifest, read_table


def _one_run(tmp_path: Path) -> Path:
    (manifest,) = tmp_path.rglob("manifest.json")
    return manifest.parent


def test_default_model_screens_resumes_pointwise_end_to_end(tmp_path, capsys):
    argv = [
        "allocation",
        "run",
        "--names-per-group",
        "1",
        "--rounds",
        "6",
        "--k",
        "2",
        "--n-bootstrap",
        "50",
        "--results-dir",
        str(tmp_path),
    ]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run folder: ") and lines[-1].startswith("report: ")
    assert "answer: top 1 of 6 pools: the least-picked group" in "\n".join(lines)
    folder = _one_run(tmp_path)
    assert read_manifest(folder).part == "allocation" and folder.parent.name == "SmolLM2-135M-Instruct"
    scores = read_table(folder, "scores")
    assert len(scores) == 48 and scores["score"].between(0, 1).all()  # 6 pools x 8 groups, P(Yes) renormalised
    answers = read_table(folder, "answers")
    assert ((answers["p_Yes"] + answers["p_No"]) - 1).abs().max() < 1e-9
    selection = read_table(folder, "selection")
    assert sorted(selection["k"].unique()) == [1, 2] and (selection.groupby("k")["selection_rate"].mean() * 8).round(
        9
    ).tolist() == [1, 2]
    bias = read_table(folder, "bias")
    assert set(bias["group"]) == {
        "White women",
        "Black men",
        "Black women",
        "Asian men",
        "Asian women",
        "Hispanic men",
        "Hispanic women",
    }
    assert (bias["n"] == 1).all()  # pointwise: each candidate counts once, however many pools it is in
    page = (folder / "report.html").read_text()
    assert page.index("least-picked group") < page.index("Selection by group") < page.index("Configuration")
    before = json.loads((folder / "metrics.json").read_text())
    again = rescore(folder)  # no model: the folder's tables are enough
    assert again["selection"] == before["selection"]
    assert main(["rescore", str(folder)]) == 0 and "the least-picked group" in capsys.readouterr().out


def test_default_model_pairwise_counts_every_pair_in_both_orders(tmp_path):
    pool = draw_pools(bloomberg_resumes("software engineer", names_per_group=1).frame, rounds=1, pool_size=3, seed=0)
    reference = pool["candidate_id"].iloc[0].split("/")[1]  # a group this pool holds
    config = AllocationConfig(
        mode="pairwise", names_per_group=1, rounds=1, pool_size=3, k_max=1, n_bootstrap=0, reference=reference
    )
    result = run_allocation(config, tmp_path)
    pairs = read_table(result.folder, "answers")
    assert len(pairs) == 3 and set(pairs["answer_ab"]) | set(pairs["answer_ba"]) <= {"a", "b", "tie", "unread"}
    scores = read_table(result.folder, "scores")
    assert scores["score"].sum() == pytest.approx(3.0)  # one point per pair, however it is split
    shares = result.metrics["pairwise"]
    assert shares["n_prompts"] == 6 and shares["regular"] + shares["tie"] + shares["unread"] == pytest.approx(1.0)


def test_listwise_reads_stated_rankings(tmp_path):
    def respond(prompt: str) -> str:  # a scripted model that always ranks the names in alphabetical order
        names = [line.removeprefix("Candidate: ") for line in prompt.splitlines() if line.startswith("Candidate: ")]
        return "My ranking:\n" + "\n".join(f"{i + 1}. {n}" for i, n in enumerate(sorted(names)))

    engine = Engine(FakeBackend("scripted", responses=respond), cache=None)
    result = run_allocation(
        AllocationConfig(
            mode="listwise",
            engine=EngineConfig(model="scripted", backend="fake"),
            names_per_group=1,
            rounds=3,
            k_max=1,
            n_bootstrap=0,
        ),
        tmp_path,
        engine=engine,
    )
    answers = read_table(result.folder, "answers")
    assert answers["parsed"].all() and answers["numbered"].all() and (answers["mentioned"] == 8).all()
    scores = read_table(result.folder, "scores").merge(
        read_table(result.folder, "candidates"), on=["candidate_id", "group"]
    )
    top = scores.loc[scores.groupby("pool")["score"].idxmax(), "name"]
    assert all(name == min(scores.loc[scores["pool"] == pool, "name"]) for pool, name in zip(range(3), top))

    def refuse_some(prompt: str) -> str:  # names nobody when the pool holds a given candidate
        return "I will not rank people." if "Candidate: " + first_name in prompt else respond(prompt)

    frame = bloomberg_resumes("software engineer", names_per_group=2).frame
    first_name = frame.loc[frame["candidate_id"].str.contains("/Asian men/0/"), "name"].iloc[
        0
    ]  # in some pools, not all
    engine = Engine(FakeBackend("refusing", responses=refuse_some), cache=None)
    partial = run_allocation(
        AllocationConfig(
            mode="listwise",
            engine=EngineConfig(model="refusing", backend="fake"),
            names_per_group=2,
            rounds=6,
            k_max=1,
            n_bootstrap=0,
        ),
        tmp_path / "partial",
        engine=engine,
    )
    assert 0 < partial.metrics["unparseable_pools"] < 6
    assert "Left out:" in (partial.folder / "report.html").read_text()


def test_a_listwise_run_where_no_answer_ranks_keeps_its_answers_and_says_nothing_was_measured(
    tmp_path, capsys, monkeypatch
):
    """What the default model did (issue 28, item 4): it described the candidates in the order shown. No ranking is
    read, so nothing is measured; the run still finishes with every answer kept, and says so instead of failing."""
    from folkscope.allocation.board import leaderboard
    from folkscope.allocation.summary import print_summary
    from folkscope.cli.allocation_cmd import run_allocation_cmd

    def describe(prompt: str) -> str:
        names = [line.removeprefix("Candidate: ") for line in prompt.splitlines() if line.startswith("Candidate: ")]
        return " ".join(f"{n} has worked as an engineer." for n in names)

    config = AllocationConfig(
        mode="listwise",
        engine=EngineConfig(model="describing", backend="fake"),
        names_per_group=1,
        rounds=3,
        k_max=1,
        n_bootstrap=0,
    )
    result = run_allocation(config, tmp_path, engine=Engine(FakeBackend("describing", responses=describe), cache=None))
    assert result.folder.is_dir() and not list(tmp_path.rglob("*.staging*"))
    assert len(read_table(result.folder, "answers")) == 3 and not read_table(result.folder, "answers")["parsed"].any()
    why = "no candidate has a score: none of the 3 pools' answers states a ranking"
    assert result.metrics["nothing_scored"].startswith(why) and result.metrics["selection"] == []
    assert rescore(result.folder)["nothing_scored"] == result.metrics["nothing_scored"]  # rescore agrees
    assert "Nothing measured: " + why in html.unescape((result.folder / "report.html").read_text())
    print_summary(result.folder, result.metrics)
    out = capsys.readouterr().out
    assert "answer: nothing measured: " + why in " ".join(out.split()) and "impact ratio" not in out
    board = leaderboard([result.folder], site=tmp_path / "site", draw=False)  # named on the leaderboard, not tabulated
    assert not board.tables and board.notes == [f"{result.folder}: {result.metrics['nothing_scored']}"]

    monkeypatch.setattr("folkscope.allocation.run_allocation", lambda *a, **k: result)
    args = type("Args", (), {"results_dir": str(tmp_path), "inference_backend": "fake"})()
    monkeypatch.setattr("folkscope.cli.allocation_cmd.config_from_args", lambda _args: (None, config))
    assert run_allocation_cmd(args) == 1  # a run that measured nothing is not a success


@pytest.fixture(scope="module")
def risk_run(tmp_path_factory) -> Path:
    from folkscope.risk import Benchmark  # only tests import a part to make its run folder

    root = tmp_path_factory.mktemp("risk")
    Benchmark.make_benchmark("NISTIncome", model="demo", backend="fake", subsampling=0.05, use_cache=False).run(root)
    return _one_run(root)


def test_acs_allocation_from_a_part1_run_without_rescoring(risk_run, tmp_path, capsys):
    argv = [
        "allocation",
        "run",
        "--task",
        "acs",
        "--data",
        str(risk_run),
        "--rounds",
        "200",
        "--pool-size",
        "10",
        "--reference",
        "White, Male",
        "--results-dir",
        str(tmp_path),
        "--n-bootstrap",
        "50",
    ]
    assert main(argv) == 0
    folder = _one_run(tmp_path)
    scores = read_table(folder, "scores")
    risk = read_table(risk_run, "scores").assign(candidate_id=lambda d: d["row_id"].astype(str))
    merged = scores.merge(risk[["candidate_id", "risk_score"]], on="candidate_id")
    assert len(merged) == 2000 and (merged["score"] == merged["risk_score"]).all()  # the part-1 scores, as they were
    assert read_manifest(folder).engine["from_run"] == str(risk_run)
    assert "qualified_selection_rate" in read_table(folder, "selection")  # qualified = the row's label


def test_study_relates_metrics_to_gaps_over_runs(tmp_path, capsys):
    for model in ("fake-a", "fake-b", "fake-c"):
        for job in ("retail", "software engineer"):
            engine = EngineConfig(model=model, backend="fake", use_cache=False)
            config = AllocationConfig(engine=engine, subtask=job, names_per_group=3, rounds=30, k_max=3, n_bootstrap=0)
            run_allocation(config, tmp_path)
    runs = sorted(str(p.parent) for p in tmp_path.rglob("manifest.json"))
    result = study(runs)  # three fake models answer differently: no caveat
    assert result.notes == ()
    assert len(result.points[result.points["k"] == 1]) == 6 * 7  # 6 runs x 7 groups besides the reference
    table = result.table1.set_index(["k", "mode", "metric"])
    assert list(table.loc[1].index) == [("pointwise", m) for m in ("jsd", "emd", "delta", "rabbi")]
    assert (
        table.loc[(1, "pointwise", "rabbi"), "n_dp_gap"] == 42
        and -1 <= table.loc[(1, "pointwise", "rabbi"), "r_dp_gap"] <= 1
    )
    eo = result.correlations.set_index(["metric", "gap", "k"]).loc[("rabbi", "eo_gap", 1)]
    assert eo["column"] == "rabbi_qualified"  # ΔEO is compared with RABBI among qualified candidates
    ndcg = result.selection[(result.selection["metric"] == "rabbi") & (result.selection["gap"] == "dp_gap")]
    assert ndcg[ndcg["k"] == 1]["n"].tolist() == [1, 2, 3] and (ndcg["n_subtasks"] == 2).all()
    assert ndcg["ndcg"].between(0, 1).all()
    out = tmp_path / "study"
    assert main(["allocation", "study", *runs, "--output", str(out)]) == 0
    assert "best predicted by" in capsys.readouterr().out
    assert pd.read_csv(out / "correlations.csv").shape[0] == 4 * 2 * 3  # pointwise: 4 metrics x (ΔDP, ΔEO) x k
    assert pd.read_csv(out / "table1.csv").shape[0] == 4 * 3
    assert (out / "ndcg.png").stat().st_size > 0 and (out / "study.png").stat().st_size > 0


def test_study_warns_when_runs_are_merged_or_models_identical(tmp_path, capsys):
    for seed, model in ((0, "same"), (1, "same"), (0, "fake")):
        engine = EngineConfig(model=model, backend="fake", use_cache=False)
        config = AllocationConfig(engine=engine, names_per_group=2, rounds=10, k_max=1, n_bootstrap=0, seed=seed)
        run_allocation(config, tmp_path)
    runs = sorted(str(p.parent) for p in tmp_path.rglob("manifest.json"))
    with pytest.warns(CaveatWarning, match="2 runs of model 'same'"):
        study(runs)
    out = tmp_path / "study"
    assert main(["allocation", "study", *runs, "--output", str(out)]) == 0
    assert "caveat: 2 runs of model 'same'" in capsys.readouterr().out
    assert "are merged" in (out / "notes.txt").read_text()
    twins = [runs[0]]  # one run under two model names: identical measurements
    twin = tmp_path / "twin"
    shutil.copytree(runs[0], twin)
    metrics = json.loads((twin / "metrics.json").read_text())
    (twin / "metrics.json").write_text(json.dumps({**metrics, "model": "renamed"}))
    with pytest.warns(CaveatWarning, match="identical bias measurements"):
        study([*twins, str(twin)])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--task", "acs"], "add --data PATH"),
        (["--k", "8"], "below the pool size"),
        (["--reference", "Martians"], "reference group 'Martians'"),
        (["--subtask", "astronaut"], "astronaut"),
        (["--mode", "pairwise", "--task", "acs", "--data", "x"], "drop --mode"),
    ],
)
def test_bad_input_is_one_line_before_any_model_loads(argv, message, capsys, tmp_path):
    code = main(["allocation", "run", "--model", str(tmp_path / "never-loaded"), "--results-dir", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_essay_grading_end_to_end_on_a_synthetic_icnale_folder(tmp_path):
    """Grades 1-5 read from the label probabilities; the L1 speakers are the reference (synthetic essays, never ICNALE text)."""
    root = tmp_path / "icnale"
    essays = root / "ICNALE_WE_2.6" / "WE_0_Unclassified_Unmerged"
    essays.mkdir(parents=True)
    codes = [f"WE_{region}_PTJ0_{i:03d}_B1_1" for region in ("ENS", "CHN", "JPN") for i in (1, 2)]
    for k, code in enumerate(codes):
        (essays / f"{code}.txt").write_text(f"Synthetic essay {k}: students should work part time.\n", encoding="utf-8")
    (root / "ratings.csv").write_text(
        "code,rating\n" + "\n".join(f"{c},{40 + 5 * k}" for k, c in enumerate(codes)) + "\n"
    )
    engine = EngineConfig(model="grader", backend="fake", use_cache=False)
    config = AllocationConfig(
        task="essays", data=str(root), engine=engine, pool_size=3, rounds=10, k_max=1, n_bootstrap=20
    )
    result = run_allocation(config, tmp_path / "runs")
    scores = read_table(result.folder, "scores")
    assert scores["score"].between(1, 5).all() and result.metrics["reference"] == "L1 English speakers"
    answers = read_table(result.folder, "answers")
    assert [c for c in answers.columns if c.startswith("p_")] == ["p_1", "p_2", "p_3", "p_4", "p_5"]
    assert set(read_table(result.folder, "bias")["group"]) == {"China", "Japan"}
