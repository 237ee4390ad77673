"""``--data-file`` with rows as folktexts and folktables write them: a label column, no weights (issue 29).

They were refused: "task ACSIncome needs column(s) PINCP, PWGTP, which the data does not have".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from folkscope.cli.main import main, run_acs_benchmark_main
from folkscope.data import load_bundled

FAKE = ["--model", "cli-fake", "--inference-backend", "fake", "--no-cache", "--n-bootstrap", "10", "--no-baselines"]
NOTE = (
    "labels from column PINCP>50000 (folktexts' format); the task's filters PINCP>100, PWGTP>=1 taken as applied "
    "(the rows were written for it); no PWGTP column, so every metric is unweighted"
)


@pytest.mark.parametrize("entry", [lambda argv: main(["run", *argv]), run_acs_benchmark_main])
def test_folktexts_rows_run_unweighted_and_the_run_says_so_in_one_line(capsys, tmp_path, entry):
    path = tmp_path / "acs_income_10rows.csv"  # folktexts' own test rows: ten features and PINCP>50000
    load_bundled("acs-income-10").to_csv(path, index=False)
    assert entry([*FAKE, "--task", "ACSIncome", "--data-file", str(path), "--results-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    # one statement, folded to the terminal's width
    assert f"data: {NOTE}" in " ".join(out.split()) and sum(line.startswith("data: ") for line in out.splitlines()) == 1
    run_dir = Path(out.split("run folder: ")[1].splitlines()[0])
    record = json.loads((run_dir / "config.json").read_text())
    assert record["data"]["population"]["note"] == NOTE and record["data"]["rows"] == 10


def test_folktables_rows_with_true_false_labels_run(capsys, tmp_path):
    """folktables' df_to_pandas writes the label in the target's column as True/False (here PINCP > 50,000)."""
    rows = load_bundled("acs-income-10")
    rows = rows.assign(PINCP=rows.pop("PINCP>50000").astype(bool))
    path = tmp_path / "folktables.csv"
    rows.to_csv(path, index=False)
    assert (
        main(["run", *FAKE, "--task", "ACSIncome", "--data-file", str(path), "--results-dir", str(tmp_path / "r")]) == 0
    )
    assert "data: labels from column PINCP (folktables' format: True where PINCP>50000)" in " ".join(
        capsys.readouterr().out.split()
    )
