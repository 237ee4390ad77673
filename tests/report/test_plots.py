"""Plots are valid PNGs, written atomically, with matplotlib imported only when drawing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from folkscope import _io
from folkscope.risk import plots

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 1000 and data[:8] == PNG_SIGNATURE, path
    assert data[12:16] == b"IHDR" and data.rstrip(b"\x00")[-8:-4] == b"IEND", path


def test_make_all_plots_writes_every_png_and_no_temporary_file(run_dir):
    run, paths = run_dir
    assert set(paths) == {
        "calibration",
        "calibration_RAC1P",
        "calibration_SEX",
        "score_histogram",
        "roc",
        "selective_accuracy",
    }
    for rel in paths.values():
        assert not Path(rel).is_absolute() and rel.startswith("plots/")
        assert_png(run / rel)
    assert sorted(os.listdir(run / "plots")) == sorted(Path(r).name for r in paths.values())


def test_each_plot_function_returns_its_path(tmp_path, scores, baseline_scores):
    out = plots.plot_roc(scores, tmp_path / "sub" / "roc.png", baselines=baseline_scores, model_name="m$")
    assert out == tmp_path / "sub" / "roc.png"
    assert_png(out)
    # a second call replaces the file in place
    again = plots.plot_score_histogram(scores, out, bins=10)
    assert_png(again) and os.listdir(tmp_path / "sub") == ["roc.png"]


def test_single_class_and_unscored_tables_still_draw(tmp_path, scores):
    one = scores.assign(label=1)
    assert_png(plots.plot_roc(one, tmp_path / "roc.png"))
    assert_png(plots.plot_group_calibration(one, tmp_path / "g.png", group_col="SEX"))
    assert_png(plots.plot_calibration(scores.assign(risk_score=float("nan")), tmp_path / "c.png"))


def test_failed_write_leaves_no_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "x.png"

    def boom(fh):
        fh.write(b"partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        _io.atomic_write(target, boom)
    assert os.listdir(tmp_path) == []
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        _io.atomic_write(target, boom)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["x.png"]


def test_public_names():
    assert set(plots.__all__) == {
        n
        for n, v in vars(plots).items()
        if not n.startswith("_") and callable(v) and getattr(v, "__module__", "") == plots.__name__
    }


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_import_does_not_load_matplotlib():
    out = _python(
        "import sys, folkscope.report, folkscope.risk.plots, folkscope.risk.report; "
        "print(sorted(n for n in sys.modules if n.startswith('matplotlib')))"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_missing_matplotlib_names_the_extra(tmp_path):
    code = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "matplotlib":
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
import pandas as pd
from folkscope.errors import MissingDependencyError
from folkscope.risk.plots import plot_roc
try:
    plot_roc(pd.DataFrame({{"label": [0, 1], "risk_score": [0.2, 0.8]}}), {str(tmp_path / "r.png")!r})
except MissingDependencyError as exc:
    print(exc)
"""
    out = _python(code)
    assert out.returncode == 0, out.stderr
    assert "folkscope[plots]" in out.stdout
    assert not (tmp_path / "r.png").exists()


def test_bins_with_no_positives_draw_for_every_size(tmp_path):
    """Sizes 7, 9, 12, ... of an all-negative bin crashed the reliability diagram (a -3e-17 error bar)."""
    import numpy as np
    import pandas as pd

    for n in (7, 9, 12, 14, 18, 24):
        table = pd.DataFrame({"label": np.zeros(n, dtype=int), "risk_score": np.full(n, 0.3), "weight": np.ones(n)})
        assert_png(plots.plot_calibration(table, tmp_path / f"c{n}.png"))
