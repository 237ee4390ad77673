"""Figures and the run page of a numeric-calibration run (no model, no metrics maths).

The page is built on the shared shell (:mod:`folkscope.report.page`), so it
looks like every other part's run page and escapes every text from data;
the heatmap is drawn and saved with :mod:`folkscope.report.figures`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from folkscope._deps import require
from folkscope.metrics import REFERENCE_BEHAVIOURS
from folkscope.numeric.answer import answer
from folkscope.report.figures import new_figure, plain_text, save_png
from folkscope.report.numbers import fixed, format_number
from folkscope.report.page import bold, figure_block, frame_table, para, preformatted, render_page, section, sentence

__all__ = ["BEHAVIOUR_COLORS", "render_html", "write_heatmap"]

#: one fixed colour per reference behaviour, so every figure reads the same
BEHAVIOUR_COLORS = {
    "null": "#9e9e9e",
    "calibrated": "#2e7d32",
    "pick_higher": "#1565c0",
    "pick_lower": "#6a1b9a",
    "pick_first": "#ef6c00",
    "pick_second": "#c62828",
}
#: the reader's names of the three summaries (spec/numeric-calibration.md, "Metrics")
SUMMARY_LABELS = {
    "probability_mass": "probability mass on the options (PM)",
    "calibration_distance": "calibration distance, Wasserstein (WD)",
    "relative_entropy": "relative entropy, bits (RE)",
}
#: the reader's names of the reference behaviours
BEHAVIOUR_LABELS = {
    "null": "null (little mass on the options)",
    "calibrated": "calibrated",
    "pick_higher": "pick the higher count",
    "pick_lower": "pick the lower count",
    "pick_first": "pick the first option",
    "pick_second": "pick the second option",
}
#: table columns whose keys are not already words once ``_`` reads as a space
_COLUMN_LABELS = {
    "n": "problems",
    "n_undefined": "undefined",
    "low": "95% low",
    "high": "95% high",
    "std_error": "standard error",
    "n_first": "listed first",
    "n_second": "listed second",
    "win_rate_first": "win rate when first",
    "win_rate_second": "win rate when second",
    "mean_pm": "mean PM",
    "n_problems": "problems",
    "template_id": "template",
    "behaviour_renormalised": "behaviour of Π / PM",
    "spearman_rho": "Spearman ρ",
    "p_value": "p-value",
    "n_excluded": "excluded",
    "n_equal": "equal frequencies",
    "n_missing": "missing",
    "n_estimated": "estimated",
}
#: counts that a table may hold as floats (a mean over words), shown as whole numbers
_COUNTS = ("n", "n_undefined", "n_first", "n_second", "n_problems", "n_excluded", "n_equal", "n_missing", "n_estimated")
#: a summary's estimate columns, written as :func:`folkscope.report.numbers.format_number` writes them
_ESTIMATES = ("mean", "low", "high", "std_error")
_FEATURE = "drawing the numeric-calibration heatmap"
#: rows of a table shown on the page; the parquet files hold them all
_MAX_ROWS = 50


def write_heatmap(panels: dict[str, pd.DataFrame], path: str | Path, *, title: str) -> Path:
    """Draw one panel per heatmap table (first option x second option, coloured by
    dominant behaviour, annotated with its rate or else its share) and save a PNG."""
    require("matplotlib", feature=_FEATURE)
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    words = sorted({w for heat in panels.values() for w in (*heat["first"], *heat["second"])})
    index = {w: i for i, w in enumerate(words)}
    labels = [plain_text(w) for w in words]
    side = 1.5 + 0.5 * len(words)
    # axes placed by subplots_adjust below, to leave room for the legend on the right
    fig = new_figure(width=side * len(panels) + 2.0, height=side + 0.8, feature=_FEATURE, layout=None)
    cmap = ListedColormap([BEHAVIOUR_COLORS[b] for b in REFERENCE_BEHAVIOURS])
    for k, (name, heat) in enumerate(panels.items()):
        ax = fig.add_subplot(1, len(panels), k + 1)
        codes = [[float("nan")] * len(words) for _ in words]
        for row in heat.itertuples(index=False):
            i, j = index[row.first], index[row.second]
            codes[i][j] = float(REFERENCE_BEHAVIOURS.index(row.behaviour))
            value = row.rate if row.rate == row.rate else row.share
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color="white")
        ax.imshow(codes, cmap=cmap, vmin=-0.5, vmax=len(REFERENCE_BEHAVIOURS) - 0.5)
        ax.set_xticks(range(len(words)), labels, rotation=60, ha="right", fontsize=8)
        ax.set_yticks(range(len(words)), labels, fontsize=8)
        ax.set_xlabel("option listed second")
        ax.set_ylabel("option listed first")
        ax.set_title(plain_text(name), fontsize=9)
    fig.suptitle(plain_text(title), fontsize=10)
    fig.legend(
        handles=[Patch(color=BEHAVIOUR_COLORS[b], label=b.replace("_", " ")) for b in REFERENCE_BEHAVIOURS],
        loc="center right",
        fontsize=7,
    )
    fig.subplots_adjust(right=1 - 1.6 / fig.get_figwidth(), bottom=0.25, wspace=0.4)
    return save_png(fig, path)


def _table(df: pd.DataFrame) -> Markup:
    """The first rows of a table, three decimals, counts whole, readable headers and behaviour names; the rest is
    in the run's parquet files."""
    more = para(f"({len(df) - _MAX_ROWS} more rows in the parquet files)") if len(df) > _MAX_ROWS else ""
    shown = df.head(_MAX_ROWS).replace({c: BEHAVIOUR_LABELS for c in df.columns if str(c).startswith("behaviour")})
    return frame_table(shown, digits=3, labels=_COLUMN_LABELS, integers=_COUNTS) + more


def _distributions(dist: dict[str, Any]) -> Markup:
    parts = [
        para(
            f"Mode probability {dist['mode_probability']:.3f}; mode frequency "
            f"{dist['mode_frequency']:.3f} against {dist['uniform_rate']:.3f} for a uniform choice."
        )
    ]
    if dist.get("mode_last_digit"):
        parts += [
            para("Last digit of the most likely option, against a uniform choice:"),
            _table(pd.DataFrame([{"last digit": d, **v} for d, v in dist["mode_last_digit"].items()])),
        ]
    return section("Distributions", *parts)


def _frequency_effects(fe: dict[str, Any]) -> Markup:
    rows = [
        {
            "numbers": name.replace("_", " "),  # "all numbers", "measured only"
            **{
                k: (f"{v:.2e}" if k == "p_value" and v is not None and v == v else v)  # NaN: n/a
                for k, v in fe[name].items()
            },
        }
        for name in ("all_numbers", "measured_only")
    ]
    counts = fe["table"]  # the number-frequency table used
    return section(
        "Frequency effects",
        para(
            "Spearman correlation of WD with log |Freq(N1) − Freq(N2)| over the two numbers each text shows. Table: "
            f"{counts['source']} ({counts['n_numbers']} numbers, {counts['n_measured']} measured). Frequencies fall "
            "as numbers grow, so the gap also tracks how far apart the two numbers are; read the correlation with "
            "that in mind."
        ),
        _table(pd.DataFrame(rows)),
        preformatted(counts["note"]) if counts.get("note") else "",
    )


def _pennies(pen: dict[str, Any]) -> Markup:
    parts = [
        para(
            f"{pen['n_games']} games of {pen['n_rounds']} rounds against a "
            f"{pen['guesser_n']}-gram guesser ({'chat' if pen.get('chat') else 'base'} form): "
            f"player win rate {pen['win_rate']:.3f} (0.5 is random play); share of "
            f"sequences the runs test cannot reject at p = 0.05: "
            f"{pen['runs_test_pass_rate']:.3f}; heads rate {pen['heads_rate']:.3f}; mean "
            f"probability on the two faces {fixed(pen['mean_probability_mass'])}."
        ),
        para(
            "Rounds played as a fair coin because the faces had no usable probability: ",
            bold(pen["fallback_rounds"]),
            f" ({pen['fallback_nan_rounds']} unscored, {pen['fallback_zero_rounds']} with zero mass).",
        ),
    ]
    if pen["fallback_rounds"]:
        parts.append(
            para(
                f"Without the {pen['n_games'] - pen['n_games_without_fallback']} games "
                f"that had such rounds: win rate "
                f"{fixed(pen['win_rate_without_fallback_games'])}, runs-test pass rate "
                f"{fixed(pen['runs_test_pass_rate_without_fallback_games'])}."
            )
        )
    return section("Matching pennies", *parts)


def _comparison(comp: dict[str, Any]) -> Markup:
    rows = [{"metric": name, **entry} for name, entry in comp["differences"].items()]
    return section(
        "Paired differences",
        para(
            f"This run ({comp['chat']}) minus {comp['base']}, over "
            f"{comp['n_shared']} shared problems, 95% intervals clustered by option pair. "
            f"Mode stability (same most likely option): {comp['mode_stability']:.3f}."
        ),
        _table(pd.DataFrame(rows)),
    )


def render_html(
    metrics: dict[str, Any], cells: pd.DataFrame, by_word: pd.DataFrame, *, heatmap_file: str | None
) -> str:
    """The run's report page on the shared shell; every text from data is escaped.

    ``heatmap_file`` is relative to the run folder (a path outside it raises
    :class:`~folkscope.errors.ConfigError`).
    """
    config = metrics["config"]
    summary = pd.DataFrame(  # PM can be ~1e-8: two significant digits there, not "0.000" beside "-0.000"
        [
            {
                "metric": SUMMARY_LABELS.get(name, name),
                **{k: format_number(v) if k in _ESTIMATES and isinstance(v, float) else v for k, v in entry.items()},
            }
            for name, entry in metrics["summary"].items()
        ]
    )
    summary = summary[
        [
            "metric",
            *(c for c in _ESTIMATES if c in summary),
            *(c for c in summary if c not in _ESTIMATES and c != "metric"),
        ]
    ]
    shares = pd.DataFrame(
        [
            {"behaviour": b, "share of cells": s, "share of Π / PM": metrics["behaviour_shares_renormalised"][b]}
            for b, s in metrics["behaviour_shares"].items()
        ]
    )
    bias = metrics["order_bias"]
    body = [
        para(sentence(answer(metrics)), css_class="headline"),
        para(
            f"Model {config['model']} ({config['backend']}), {'chat form' if config['chat'] else 'base form'}, "
            f"{metrics['n_problems']} problems in {metrics['n_cells']} grid cells."
        ),
        para(
            bold(f"{metrics['n_unscored']} problems left out"),
            ": the backend could not score one of their options (NaN), so they have no defined Π.",
        )
        if metrics.get("n_unscored")
        else "",
        section(
            "Probability mass, calibration distance and relative entropy",
            _table(summary),
            para(
                "Per problem, then averaged with 95% intervals clustered by option pair. PM: the next-token "
                "probability on the option words (1: the model answers the question). WD: the Wasserstein distance "
                "between the stated proportions and the raw probabilities of the options (0: calibrated; all mass "
                "elsewhere gives about 0.74 for counts 51 and 98). RE: entropy of the renormalised probabilities minus "
                "that of the stated proportions (below 0: too concentrated)."
            ),
        ),
        section("Behaviour shares of grid cells", _table(shares)),
        section(
            "Order bias",
            para(
                f"Win rate of the option listed first: {fixed(bias['first_win_rate'])} "
                f"over {bias['n']} two-option problems (0.5 is unbiased)."
            ),
            _table(by_word),
        ),
        _distributions(metrics["distributions"]) if "distributions" in metrics else "",
        _frequency_effects(metrics["frequency_effect"]) if "frequency_effect" in metrics else "",
        _pennies(metrics["pennies"]) if "pennies" in metrics else "",
        _comparison(metrics["comparison"]) if "comparison" in metrics else "",
        para(
            "Timing: "
            + ", ".join(
                f"{k.removesuffix('_seconds').replace('_', ' ')} {v:.1f} s" for k, v in metrics["timing"].items()
            )
        )
        if "timing" in metrics
        else "",
        section(
            "Ordered option pairs",
            figure_block(
                {"behaviour heatmap": heatmap_file},
                captions={
                    "behaviour heatmap": "Each cell is one ordered pair of options (listed first down, second "
                    "across), coloured by the reference behaviour most of its problems follow, with that "
                    "behaviour's rate (or, for null, the share of problems) written in it; one panel per reading of the "
                    "probabilities (as they are, and renormalised over the options, Π / PM)."
                },
            ),
        )
        if heatmap_file
        else "",
        section("Grid cells", _table(cells)),
    ]
    return render_page(
        f"numeric calibration: {config['dataset']}", heading=f"Numeric calibration — {config['dataset']}", body=body
    )
