"""``folkscope rescore`` on a run of any part: the manifest names the part, the registry calls it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from folkscope.cli.main import main


def _one_line_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def _numeric_run(capsys, tmp_path) -> Path:
    argv = [
        "numeric",
        "run",
        "--dataset",
        "colors",
        "--numbers",
        "1,3",
        "--words",
        "red,blue",
        "--model",
        "fk",
        "--inference-backend",
        "fake",
        "--results-dir",
        str(tmp_path),
        "--no-cache",
        "--no-heatmap",
    ]
    assert main(argv) == 0
    return Path(capsys.readouterr().out.split("run folder: ")[1].splitlines()[0])


def _risk_run(capsys, tmp_path) -> Path:
    argv = [
        "risk",
        "run",
        "--model",
        "cli-fake",
        "--inference-backend",
        "fake",
        "--task",
        "NISTPoverty",
        "--subsampling",
        "0.02",
        "--results-dir",
        str(tmp_path),
        "--no-cache",
        "--n-bootstrap",
        "10",
        "--no-baselines",
    ]
    assert main(argv) == 0  # `folkscope risk run` is part 1's `folkscope run`
    return Path(capsys.readouterr().out.split("run folder: ")[1].splitlines()[0])


def test_rescore_dispatches_on_the_manifest_for_every_part(capsys, tmp_path):
    numeric, risk = _numeric_run(capsys, tmp_path / "n"), _risk_run(capsys, tmp_path / "r")
    for folder, part in ((numeric, "numeric"), (risk, "risk")):
        assert json.loads((folder / "manifest.json").read_text())["part"] == part
    before = json.loads((numeric / "metrics.json").read_text())
    (numeric / "metrics.json").unlink()
    assert main(["rescore", str(numeric)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"run folder: {numeric}" and out[-1] == f"report: {numeric / 'report.html'}"  # numeric's own
    after = json.loads((numeric / "metrics.json").read_text())
    assert after["summary"] == before["summary"] and after["behaviour_shares"] == before["behaviour_shares"]
    assert main(["rescore", str(risk)]) == 0
    out = capsys.readouterr().out
    assert "ECE" in out  # risk's own summary
    assert re.search(r"^model +\d+ +0\.\d{3} ", out, re.M), out  # the row count reads as a count


def test_a_run_folder_from_before_manifests_is_still_rescored_and_gains_one(capsys, tmp_path):
    numeric, risk = _numeric_run(capsys, tmp_path / "n"), _risk_run(capsys, tmp_path / "r")
    for folder, part in ((numeric, "numeric"), (risk, "risk")):
        (folder / "manifest.json").unlink()
        assert main(["rescore", str(folder)]) == 0
        capsys.readouterr()
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["part"] == part and manifest["created"] == ""  # written now, for a run of unknown date


def test_a_folder_of_no_known_part_is_one_line(capsys, tmp_path):
    (tmp_path / "config.json").write_text('{"model": "x"}')
    assert "matches no known part (risk, numeric, allocation, epidemiology)" in _one_line_error(
        capsys, ["rescore", str(tmp_path)]
    )
    (tmp_path / "manifest.json").write_text('{"schema": 1, "part": "astrology", "fingerprint": "x", "config": {}}')
    assert "unknown part 'astrology'" in _one_line_error(capsys, ["rescore", str(tmp_path)])
