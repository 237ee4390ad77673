"""``--context-size``: folktexts' 600-token default, prompts cut to their last tokens, counted in the run's output (issue 29).

It did nothing by default (no limit) and refused longer prompts when given.
The cut itself is checked against folktexts in tests/parity/test_scores.py.
"""

from __future__ import annotations

import json

import pytest

from folkscope.cli.main import build_parser
from folkscope.cli.run_cmd import config_from_args
from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend
from folkscope.risk import Benchmark, BenchmarkConfig
from folkscope.risk.summary import print_summary


@pytest.mark.parametrize(
    ("flag", "expected"), [([], 600), (["--context-size", "250"], 250), (["--context-size", "none"], None)]
)
def test_the_flag_defaults_to_folktexts_600_tokens(flag, expected):
    assert (
        config_from_args(build_parser().parse_args(["run", "--task", "NISTIncome", *flag]))[1].context_size == expected
    )


def test_a_context_size_that_is_no_number_is_one_line(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--context-size", "lots"])
    assert "expected a number of tokens like 600, or 'none', got 'lots'" in capsys.readouterr().err


def test_a_run_says_how_many_prompts_were_cut_in_its_metrics_report_and_console(tmp_path, capsys):
    engine = Engine(FakeBackend("cutting", cut_prompts=True), cache=None, progress=False)
    config = BenchmarkConfig(context_size=300, subsampling=12, n_bootstrap=10, baselines=False)
    bench = Benchmark.make_benchmark("NISTIncome", model=engine, config=config)
    metrics = bench.run(tmp_path / "results")
    rows = metrics["scoring"]["rows"]
    assert metrics["scoring"]["context_size"] == 300 and metrics["scoring"]["truncated_prompts"] == rows > 0
    saved = json.loads((bench.run_dir / "metrics.json").read_text())["scoring"]
    assert saved["truncated_prompts"] == rows
    assert (
        f"{rows} of {rows} rows had prompts longer than the context size (300 tokens"
        in (bench.run_dir / "report.html").read_text()
    )
    capsys.readouterr()
    print_summary(bench.run_dir, metrics)
    assert f"prompts cut to the context size (300 tokens): {rows}" in " ".join(capsys.readouterr().out.split())
