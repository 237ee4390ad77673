"""The pages read as a person reads them: nothing wider than the window, no row made tall by text, figures that say
what they show, settings rather than hashes, labels rather than keys (issue 32).

Real pages are built once per module through the CLI with the fake backend
(four models on one risk task, one of them with a prompt variation; a
numeric, an allocation and an epidemiology run whose tasks include a
published BLS table with a long "best from" reason), plus the leaderboard
over all of them, and opened in headless Chromium at 1400 and 800 pixels.
Screenshots go to ``test-artifacts/reading`` (``$FOLKSCOPE_TEST_ARTIFACTS``).
The figure checks measure text boxes with matplotlib's renderer.
"""

from __future__ import annotations

import html
import itertools
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.cli.main import main
from folkscope.report.leaderboard import write_leaderboard
from folkscope.report.page import LONG_TEXT, frame_table

ARTIFACTS = (
    Path(os.environ.get("FOLKSCOPE_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts")) / "reading"
)
WIDTHS = (1400, 800)
#: a table cell holding short text is a line or two; taller means text that belongs under the table
MAX_CELL_PX = 100
FAKE = ["--inference-backend", "fake", "--no-cache"]
RISK = ["run", "--task", "NISTIncome", "--subsampling", "0.02", "--n-bootstrap", "20", *FAKE]


def _run(argv: list[str]) -> None:
    assert main(argv) == 0, argv


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reading")
    out = ["--results-dir", str(root)]
    for model in ("fake", "fake-alpha", "fake-beta", "fake-gamma"):
        _run([*RISK, "--model", model, *out])
    _run([*RISK, "--model", "fake-alpha", "--variation", "format=bullet", *out])
    _run(["numeric", "run", "--model", "fake", "--limit", "20", *FAKE, *out])
    _run(["allocation", "run", "--model", "fake", "--rounds", "4", "--n-bootstrap", "20", *FAKE, *out])
    tasks = "acs_income_by_sex,bls_union_membership_by_sex,anes96_vote_by_party"
    _run(["epidemiology", "run", "--model", "fake", "--tasks", tasks, *FAKE, *out])
    return root


@pytest.fixture(scope="module")
def site(results: Path):
    return write_leaderboard(results)


@pytest.fixture(scope="module")
def pages(results: Path, site) -> dict[str, Path]:
    """Each part's run page (the first risk run's for risk) and the leaderboard, by a short name."""
    found = sorted(p for p in results.rglob("report.html") if "leaderboard" not in p.parts)
    by_part = {
        "risk": next(p for p in found if "NISTIncome" in p.parts and "fake" in p.parts),
        "numeric": next(p for p in found if p.parts[-4].startswith("numeric")),
        "allocation": next(p for p in found if p.parts[-4].startswith("allocation")),
        "epidemiology": next(p for p in found if p.parts[-4].startswith("epidemiology")),
    }
    return {**by_part, "leaderboard": site.index}


@pytest.fixture(scope="module", params=WIDTHS, ids=lambda w: f"{w}px")
def browser(request):
    from tests.report.browser import Browser, BrowserUnavailable

    try:
        with Browser(width=request.param, height=900) as opened:
            yield request.param, opened
    except BrowserUnavailable as exc:
        pytest.skip(f"browser test skipped: {exc}")


# Elements whose box reaches past the right edge of the window, outside any sideways-scrolling box (whatever is
# inside one is the box's business: the box itself is measured), and the page's own scroll width.
_OVERFLOW = """(() => {
  const width = document.documentElement.clientWidth;
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const wide = [];
  for (const el of document.body.querySelectorAll('*')) {
    let up = el.parentElement, boxed = false;
    for (; up && up !== document.body; up = up.parentElement) if (scrolls(up)) { boxed = true; break; }
    if (boxed) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right > width + 1 || r.left < -1))
      wide.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(r.left)}..${Math.round(r.right)}`);
  }
  return {width, scrollWidth: document.documentElement.scrollWidth, wide};
})()"""

_TALL_CELLS = f"""Array.from(document.querySelectorAll('td'))
  .map(td => [Math.round(td.getBoundingClientRect().height), td.textContent.trim().slice(0, 80)])
  .filter(([h]) => h > {MAX_CELL_PX})"""


@pytest.mark.parametrize("name", ["risk", "numeric", "allocation", "epidemiology", "leaderboard"])
def test_nothing_is_wider_than_the_window_and_no_cell_is_tall(browser, pages, name: str) -> None:
    width, tab = browser
    load = tab.open(pages[name])
    assert load.errors == []
    found = tab.evaluate(_OVERFLOW)
    assert found["scrollWidth"] <= found["width"] and found["wide"] == [], found
    assert tab.evaluate(_TALL_CELLS) == []
    # wide tables keep their width and scroll inside their own box, never the page
    boxes = tab.evaluate(
        "Array.from(document.querySelectorAll('table')).map(t => getComputedStyle(t.parentElement).overflowX)"
    )
    assert boxes and set(boxes) == {"auto"}, boxes
    # lazy images below the window would be blank in a full-page screenshot: load them all first
    loaded = tab.evaluate(
        "Promise.all(Array.from(document.images).map(i => { i.loading = 'eager'; return i.decode().then(() => true); }))"
    )
    assert all(loaded)
    tab.screenshot(ARTIFACTS / f"{name}-{width}.png")


def test_headers_are_labels_not_keys(pages) -> None:
    """No table head shows a snake_case key to the reader (task and column names from data may, in cells)."""
    for name, page in pages.items():
        heads = re.findall(r"<th[^>]*>(.*?)</th>", page.read_text(encoding="utf-8"))
        assert heads, name
        assert [h for h in heads if re.search(r"[a-z]_[a-z]", h)] == [], name


def test_the_checks_see_what_they_look_for(browser, tmp_path: Path) -> None:
    """A table wider than the window outside a scroll box, and a cell made tall by text, are both caught."""
    _, tab = browser
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><body><table class='bad'><tr><td style='white-space:nowrap'>"
        + "wide " * 400
        + "</td></tr></table><table style='width:200px'><tr><td>"
        + "tall text " * 60
        + "</td></tr></table><div class='box' style='overflow-x:auto'><table class='boxed'><tr><td style='white-space:nowrap'>"
        + "boxed " * 400
        + "</td></tr></table></div></body></html>"
    )
    tab.open(page)
    found = tab.evaluate(_OVERFLOW)
    assert found["scrollWidth"] > found["width"] and any(w.startswith("table.bad ") for w in found["wide"])
    assert not any(".box" in w for w in found["wide"])  # a table inside its own scroll box, and the box: fine
    assert len(tab.evaluate(_TALL_CELLS)) == 1


def test_long_text_is_a_note_under_the_table_not_a_cell(pages) -> None:
    """The BLS task's "best from" reason is listed under the scores table, its cell holding the marker."""
    page = pages["epidemiology"].read_text(encoding="utf-8")
    scores = page.split("<h2>Scores by task</h2>")[1]
    table, after = scores.split("</table>", 1)
    assert 'class="fn"' in table and "note 1</span>" in table
    assert after.lstrip().startswith('</div><ol class="notes"') and "<b>best from</b>: " in after.split("</ol>")[0]
    cells = re.findall(r"<td>(.*?)</td>", table)
    assert cells and max(len(re.sub(r"<[^>]+>", "", c)) for c in cells) <= LONG_TEXT


def test_every_cell_is_a_line_of_text_at_most(pages) -> None:
    """No page, run or leaderboard, puts a paragraph in a table cell: the longest cell text is a short phrase."""
    for name, page in pages.items():
        cells = re.findall(r"<td[^>]*>(.*?)</td>", page.read_text(encoding="utf-8"), flags=re.S)
        texts = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells]
        assert texts and max(map(len, texts)) <= 80, (name, max(texts, key=len))


def test_frame_table_keeps_short_text_and_numbers_one_note_per_text() -> None:
    long = "a reason " * 20
    frame = pd.DataFrame({"task": ["a", "b", "c"], "why": [long, "short", long], "n": [2.0, 3.0, np.nan]})
    html = frame_table(frame, integers=("n",), labels={"why": "reason"})
    assert html.count("note 1</span>") == 2 and "note 2" not in html and "<td>short</td>" in html
    assert "<li><b>reason</b>: " + long.strip() in html.replace(long, long.strip())
    assert "<td>2</td>" in html and "<td>3</td>" in html and "2.000" not in html and 'title="undefined"' in html


def test_the_leaderboard_says_prompt_settings_not_hashes(site) -> None:
    table = next(t for t in site.tables if t.key == "risk-nistincome").frame
    prompts = set(table.loc[table["kind"] == "model", "prompt"])
    assert prompts == {
        "multiple choice, zero-shot, 2 orderings",
        "multiple choice, zero-shot, 2 orderings, varied: format=bullet",
    }
    shown = re.sub(r"<[^>]+>", " ", site.index.read_text(encoding="utf-8"))  # the text, not the links' paths
    assert "multiple choice, zero-shot, 2 orderings" in shown and not re.search(r"mc-zeroshot-[0-9a-f]{8}", shown)


def test_every_figure_says_what_it_shows(pages) -> None:
    """A caption is a sentence about the figure, never its file or key name."""
    for name, page in pages.items():
        captions = re.findall(r"<figcaption>(.*?)</figcaption>", page.read_text(encoding="utf-8"))
        assert captions, name
        for caption in captions:
            assert not caption.endswith(".png") and len(caption.split()) >= 6, (name, caption)


def test_the_numeric_page_answers_first_in_words_with_whole_counts(pages) -> None:
    page = pages["numeric"].read_text(encoding="utf-8")
    assert page.index('class="headline"') < page.index("<table")
    assert "probability mass on the options (PM)" in page and "calibration distance, Wasserstein (WD)" in page
    assert "probability_mass" not in page.split("<h2>Configuration")[0]
    order_bias = page.split("<h2>Order bias</h2>")[1].split("</table>")[0]
    rows = [re.findall(r"<td>(.*?)</td>", r) for r in order_bias.split("<tr>")[2:]]
    counts = [cell for row in rows for cell in row[-2:]]  # listed first, listed second
    assert counts and all(re.fullmatch(r"\d+|<span class=\"na\".*", c) for c in counts), counts


# ----------------------------------------------------------------------------- figures, at the matplotlib level
def _label_boxes(fig, ax) -> list:
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [Text.get_window_extent(t, renderer) for t in ax.texts]


@pytest.mark.parametrize("n", [3, 12, 30])
def test_scatter_labels_never_overlap_even_when_models_score_alike(n: int) -> None:
    """Points a hair apart (models that score alike) still get numbers whose boxes do not touch, inside the figure."""
    pytest.importorskip("matplotlib")
    from folkscope.risk.board_plots import ece_auc_figure

    rng = np.random.default_rng(n)
    points = pd.DataFrame(
        {
            "model": [f"model-{i}" for i in range(n)],
            "prompt": "multiple choice, zero-shot, 2 orderings",
            "task": rng.choice(["ACSIncome", "ACSEmployment"], n),
            "AUC": 0.7 + rng.normal(0, 0.004, n),
            "ECE": 0.1 + rng.normal(0, 0.002, n),
            "kind": ["model"] * (n - 1) + ["baseline"],
        }
    )
    fig = ece_auc_figure(points)
    ax = fig.axes[0]
    boxes = _label_boxes(fig, ax)
    assert len(boxes) == n
    overlapping = [(i, j) for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2) if a.overlaps(b)]
    assert overlapping == []
    frame = fig.bbox
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)


def test_several_runs_calibration_is_small_multiples(tmp_path: Path) -> None:
    """Five runs' curves are five panels on shared axes, not five bands over each other on one."""
    pytest.importorskip("matplotlib")
    from folkscope.report.figures import subplots_grid

    fig, axes = subplots_grid(5, max_cols=4, feature="test")
    assert len(axes) == 5 == len(fig.axes)
    assert len({round(ax.get_position().y0, 3) for ax in axes}) == 2  # two rows of panels
