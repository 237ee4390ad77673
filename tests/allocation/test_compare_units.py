"""``folkscope compare`` pairs allocation candidates on what they are (name, resume, the text read), not on ids.

Ids such as ``software-engineer/White men/0/resume-0`` carry no name, so two runs that drew other names
used to be compared as "64 shared candidates" though 63 were different people.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from folkscope.allocation import AllocationConfig, run_allocation
from folkscope.cli.main import main
from folkscope.engine import EngineConfig
from folkscope.errors import DataError
from folkscope.report.compare import compare_runs
from folkscope.runs import read_table


def _run(root: Path, **changes) -> Path:
    config = AllocationConfig(
        **{
            "engine": EngineConfig(model="fake", backend="fake", use_cache=False),
            "names_per_group": 8,
            "rounds": 8,
            "k_max": 1,
            "n_bootstrap": 0,
            **changes,
        }
    )
    return run_allocation(config, root).folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("allocation-compare")
    return {
        "a": _run(root / "a"),
        "base": _run(root / "base", chat=False),
        "other_names": _run(root / "other", seed=1),
        "pairwise": _run(root / "pairwise", mode="pairwise", names_per_group=2, rounds=2),
        "pairwise_other": _run(root / "pairwise_other", mode="pairwise", names_per_group=2, rounds=2, seed=5),
    }


def test_runs_over_other_name_draws_are_refused_in_one_line(runs, capsys):
    a, b = (read_table(runs[k], "candidates") for k in ("a", "other_names"))
    assert a["candidate_id"].tolist() == b["candidate_id"].tolist()  # the same ids ...
    assert (a["name"] != b["name"]).sum() >= 60  # ... for (nearly) all other people
    with pytest.raises(DataError, match=r"the runs (share no candidate|only partly overlap)") as info:
        compare_runs(runs["a"], runs["other_names"], replicates=20)
    assert "\n" not in str(info.value)
    assert main(["compare", str(runs["a"]), str(runs["other_names"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "64 candidates" in err, err


def test_pool_appearances_over_other_draws_are_refused_too(runs):
    with pytest.raises(DataError, match=r"the runs (share no appearance|only partly overlap)"):
        compare_runs(runs["pairwise"], runs["pairwise_other"], replicates=20)


def test_the_same_draw_is_paired_person_by_person(runs):
    res = compare_runs(runs["a"], runs["base"], replicates=20)
    assert res.unit == "candidate" and res.n_shared == 64 == res.n_a == res.n_b
    names = read_table(runs["a"], "candidates").set_index("candidate_id")
    assert set(res.moved["unit"]) <= {f"{n} / {i}" for n, i in zip(names["name"], names["item"])}


def test_a_shared_id_whose_text_differs_is_refused(runs, tmp_path):
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(runs["base"], copy)
    cands = pd.read_parquet(copy / "candidates.parquet")
    cands.loc[0, "text"] = cands.loc[0, "text"] + " Also speaks French."
    cands.to_parquet(copy / "candidates.parquet")
    with pytest.raises(DataError, match=r"1 of those have another text in B"):
        compare_runs(runs["a"], copy, replicates=20)
