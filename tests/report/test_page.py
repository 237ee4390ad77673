"""The page shell: everything escaped, figures kept inside the run folder, one page for every part, no part imported."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from html import unescape

import numpy as np
import pandas as pd
import pytest

import folkscope.report as report
from folkscope.errors import ConfigError
from folkscope.report import board, figures, leaderboard, notebook, page

EVIL = "<script>alert(1)</script>"


def test_numbers_and_undefined_values():
    assert page.number(None) == page.number(math.nan) == page.number(np.float32("nan"))
    assert 'title="undefined">n/a' in page.number(None)
    assert page.number(1234567) == "1,234,567" and page.number(np.int64(5)) == "5"
    assert page.number(0.123456) == "0.1235" and page.number(0.5, digits=2) == "0.50"
    assert page.number("inf") == page.number(math.inf) == "∞" and page.number(-math.inf) == "−∞"
    assert page.number(True) == "True" and page.number(EVIL) == page.escape(EVIL)
    assert page.total(1500.0) == "1,500" and page.total(2.5) == "2.50"


def test_tables_escape_headers_and_frame_cells():
    html = page.frame_table(pd.DataFrame({EVIL: [EVIL, "x"], "v": [0.5, math.nan]}), digits=3)
    assert "<script>" not in html and html.count("&lt;script&gt;") == 2
    assert "<td>0.500</td>" in html and "n/a" in html
    assert page.bullet_list([]) == "" and page.bullet_list([EVIL], css_class="warn").startswith('<ul class="warn">')


@pytest.mark.parametrize(
    "bad", ["/etc/passwd", "../outside.png", "a/../../b.png", "javascript:alert(1)", "http://example.org/x.png"]
)
def test_figure_paths_must_stay_in_the_run_folder(bad):
    with pytest.raises(ConfigError):
        page.figure_block({"x": bad})


def test_figure_block_links_quotes_and_flags_missing_files(tmp_path):
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "a b.png").write_bytes(b"png")
    html = page.figure_block({EVIL: "plots/a b.png", "gone": "plots/gone.png"}, run_dir=tmp_path)
    assert 'src="plots/a%20b.png"' in html and 'href="plots/a%20b.png"' in html
    assert "<script>" not in html and html.count("(file missing)") == 1
    assert page.figure_block({}) == "<p>No plots.</p>"


def test_render_page_is_self_contained_and_written_atomically(tmp_path):
    html = page.render_page(
        EVIL,
        heading=EVIL,
        subtitle=EVIL,
        body=[page.section(EVIL, "<p>body</p>")],
        config={"model": EVIL, "x": math.nan},
    )
    assert "<script>" not in html and "Content-Security-Policy" in html
    assert "http://" not in html and "https://" not in html
    assert "<h2>Configuration</h2>" in html and "<h3>Software</h3>" in html and '"x": null' in unescape(html)
    assert "Configuration" not in page.render_page("t", heading="h", body=[])
    path = page.write_page(tmp_path / "report.html", html)
    assert path.read_text(encoding="utf-8") == html and os.listdir(tmp_path) == ["report.html"]


def test_plain_text_keeps_dollars_literal():
    assert figures.plain_text("a$b$") == r"a\$b\$"


def test_public_names():
    assert set(report.__all__) == {n for n in vars(report) if not n.startswith("_") and callable(getattr(report, n))}
    for module in (page, figures, board, leaderboard, notebook):
        for name in module.__all__:
            assert getattr(report, name) is getattr(module, name)


def test_the_shell_imports_no_part():
    code = (
        "import sys, folkscope.report; "
        "print(sorted(m for m in sys.modules if m.startswith(('folkscope.risk', 'folkscope.numeric', 'folkscope.allocation', 'folkscope.epidemiology', 'matplotlib'))))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
