"""Caveats travel with the numbers: recorded in the manifest by each part, raised to Python users, printed on the console.

The leaderboard's marks and ``compare``'s lines over a run whose scores
collapse (the default model's) are in ``tests/report/test_leaderboard.py``.
"""

from __future__ import annotations

import doctest
import importlib
import json

import pytest

from folkscope.engine import Engine
from folkscope.errors import CaveatWarning, DataError
from folkscope.runs import Caveat, Manifest, caveat_lines, read_caveats, read_manifest, record_caveats, warn_caveats


def test_caveats_round_trip_through_the_manifest_and_a_rescore_replaces_them(tmp_path):
    Manifest(part="risk", fingerprint="ab" * 32, config={"seed": 1}).write(tmp_path)
    assert read_caveats(tmp_path) == [] and json.loads((tmp_path / "manifest.json").read_text())["caveats"] == []
    first = [Caveat("scores-collapse", "Scores collapse."), Caveat("order-bias", "Answer order drives the answer.")]
    record_caveats(tmp_path, first)
    assert read_caveats(tmp_path) == first and read_manifest(tmp_path).fingerprint == "ab" * 32
    assert caveat_lines(tmp_path) == ["caveat: Scores collapse.", "caveat: Answer order drives the answer."]
    record_caveats(tmp_path, [])  # a rescore that finds none clears them
    assert read_caveats(tmp_path) == []


def test_a_damaged_caveat_is_one_line_naming_the_fix(tmp_path):
    Manifest(part="risk", fingerprint="ab" * 32, config={}, caveats=[{"code": "x"}]).write(tmp_path)
    with pytest.raises(DataError, match="folkscope rescore"):
        read_caveats(tmp_path)


def test_each_caveat_is_one_warning_of_folkscopes_category(tmp_path):
    with pytest.warns(CaveatWarning) as seen:
        warn_caveats([Caveat("a", "first."), Caveat("b", "second.")], tmp_path / "run-1", stacklevel=2)
    assert [str(w.message) for w in seen] == ["run-1: first.", "run-1: second."]
    assert all(w.filename == __file__ for w in seen)  # pointed at the caller's line


def test_a_python_risk_run_raises_its_caveats(tmp_path):
    """The fake model answers by letter position: the run's order-bias caveat reaches a script, not only the page."""
    from folkscope.risk.run import Benchmark

    engine = Engine.from_model("seeded-fake", backend="fake", use_cache=False)
    bench = Benchmark.make_benchmark("NISTIncome", model=engine, subsampling=0.05, n_bootstrap=0)
    with pytest.warns(CaveatWarning) as seen:
        bench.run(tmp_path)
    recorded = read_caveats(bench.run_dir)
    assert recorded and [str(w.message) for w in seen] == [f"{bench.run_dir.name}: {c.message}" for c in recorded]
    assert {c.code for c in recorded} <= {"scores-collapse", "order-bias", "low-answer-mass", "unscored-rows"}


@pytest.mark.parametrize("part", ["risk", "allocation", "epidemiology", "numeric"])
def test_every_part_decides_its_caveats_in_one_module(part):
    module = importlib.import_module(f"folkscope.{part}.caveats")
    failures, tried = doctest.testmod(module)
    assert failures == 0 and tried > 0
    assert module.run_caveats({}) == []  # no metric, no caveat: nothing is made up


def test_allocation_caveats_name_unread_answers_and_small_groups():
    from folkscope.allocation.caveats import run_caveats

    bias = [{"group": "A", "interval_note": "no interval: 4 vs 30", "distance_note": "no JSD/EMD"}, {"group": "B"}]
    caveats = run_caveats(
        {
            "n_pools": 8,
            "pairwise": {"unread": 0.25},
            "bias": bias,
            "reference": "W",
            "bias_minimums": {"interval": 10, "distribution_distance": 30},
        }
    )
    assert [c.code for c in caveats] == ["unparsed-answers", "small-groups", "small-groups"]
    assert (
        caveats[0].message.startswith("25% of the pairwise answers")
        and "1 of the 2 groups compared with W (A)" in caveats[1].message
    )
    assert run_caveats({"nothing_scored": "no candidate has a score"})[0].code == "nothing-scored"
    assert run_caveats({"pairwise": {"unread": float("nan")}}) == []  # no pairs: nothing to say
