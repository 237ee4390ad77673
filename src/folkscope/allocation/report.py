"""The allocation run page: who the top k would pick, then the bias metrics, then what the model said.

Built on the shared page shell (:mod:`folkscope.report.page`). Figures need
matplotlib (the ``plots`` extra); without it the page says so and keeps every table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from folkscope.allocation.answer import answer
from folkscope.engine.usage import usage_line
from folkscope.report.figures import plain_text, save_png, subplots_row
from folkscope.report.page import frame_table, optional_figures, para, render_page, section, sentence, span

__all__ = ["render_report", "write_figures"]

_FEATURE = "drawing the allocation figures"
#: the reader's names of the selection and bias columns
_LABELS = {
    "n": "candidates",
    "selection_rate": "selection rate",
    "dp_gap": "parity gap",
    "n_qualified": "qualified",
    "qualified_selection_rate": "qualified selection rate",
    "eo_gap": "equal opportunity gap",
    "impact_ratio": "impact ratio",
    "n_reference": "reference candidates",
    "mean_score": "mean score",
    "rabbi": "RABBI",
    "rabbi_low": "RABBI 95% low",
    "rabbi_high": "RABBI 95% high",
    "rabbi_p_value": "RABBI p-value",
    "rabbi_qualified": "RABBI qualified",
    "delta": "Δ score",
    "delta_qualified": "Δ score qualified",
    "jsd": "JSD",
    "jsd_qualified": "JSD qualified",
    "emd": "EMD",
    "emd_qualified": "EMD qualified",
    "interval_note": "interval",
    "distance_note": "JSD/EMD",
}


def _lead(metrics: dict[str, Any], bias: pd.DataFrame) -> list[Markup]:
    """The answer first (:func:`folkscope.allocation.answer.answer`, the sentence the terminal ends with), then what
    limits it: groups too small to say, candidates left out, what the run cost, how pairwise answers went."""
    lines: list[object] = [span(sentence(answer(metrics)), "headline")]
    if len(bias):
        notes = sorted({str(n) for col in ("interval_note", "distance_note") if col in bias for n in bias[col] if n})
        if notes:
            lines.append(span(f"Too small to say: {'; '.join(notes)}.", "warn"))
    lost = {
        "unparseable_pools": "pools whose answer stated no ranking",
        "unscored_candidates": "candidates without usable label probabilities",
    }
    missing = [f"{metrics[key]} {what}" for key, what in lost.items() if metrics.get(key)]
    if missing:
        lines.append(span(f"Left out: {'; '.join(missing)}.", "warn"))
    paid = usage_line(metrics.get("engine_stats") or {}, metrics.get("backend_stats") or {})
    if paid:
        lines.append(paid)
    shares = metrics.get("pairwise")
    if shares:
        lines.append(
            f"Pairwise answers: {shares['regular']:.0%} named a candidate, {shares['tie']:.0%} said equally good, "
            f"{shares['inconsistent']:.0%} of pairs changed with the order ({shares['flipped']:.0%} flipped)."
        )
    return [para(line) for line in lines]


def write_figures(selection: pd.DataFrame, bias: pd.DataFrame, folder: Path, *, reference: str) -> dict[str, str]:
    """Selection rate against k per group, and RABBI per group with its interval; returns name -> file."""
    fig, (left, right) = subplots_row(2, width=5.2, height=4.0, feature=_FEATURE)
    for group, rows in selection.groupby("group", sort=True):
        left.plot(rows["k"], rows["selection_rate"], marker="o", label=plain_text(group))
    left.set_xlabel("k (selected per pool)")
    left.set_ylabel("selection rate")
    left.legend(fontsize=7)
    left.set_title("Who is selected")
    if len(bias):
        y = range(len(bias))
        err = [
            (bias["rabbi"] - bias["rabbi_low"]).fillna(0).clip(lower=0),
            (bias["rabbi_high"] - bias["rabbi"]).fillna(0).clip(lower=0),
        ]
        right.errorbar(bias["rabbi"], list(y), xerr=err, fmt="o", color="#4c78a8")
        right.set_yticks(list(y), [plain_text(g) for g in bias["group"]], fontsize=8)
        right.axvline(0, color="grey", lw=0.8)
    right.set_xlabel(plain_text(f"RABBI vs {reference} (95% bootstrap)"))
    right.set_title("Rank bias")
    save_png(fig, folder / "allocation.png")
    return {
        "Left: each group's selection rate when the top k of every pool are picked, k = 1 up to the pool size. "
        "Right: each group's RABBI against the reference group with its 95% bootstrap interval (above 0: ranked "
        "above the reference).": "allocation.png"
    }


def render_report(metrics: dict[str, Any], selection: pd.DataFrame, bias: pd.DataFrame, folder: Path) -> str:
    """The run page as HTML (figures written into ``folder`` when matplotlib is there)."""
    config = metrics["config"]
    subtitle = (
        f"{metrics['model']} · {config['task']} / {metrics['subtask']} · {config['mode']} · "
        f"{metrics['n_candidates']} candidates in {metrics['n_pools']} pools"
    )
    if metrics.get("nothing_scored"):
        return render_page(
            f"allocation: {metrics['subtask']}",
            heading="Allocation: who would be picked?",
            body=[para(f"Nothing measured: {metrics['nothing_scored']}.", css_class="warn")],
            subtitle=subtitle,
            config=config,
        )
    figures = optional_figures(
        lambda: write_figures(selection, bias, folder, reference=metrics["reference"]), run_dir=folder
    )
    rates = selection.pivot(index="group", columns="k", values="selection_rate").add_prefix("rate k=")
    ratios = selection.pivot(index="group", columns="k", values="impact_ratio").add_prefix("impact k=")
    body = [
        *_lead(metrics, bias),
        figures,
        section(
            "Selection by group",
            frame_table(rates.join(ratios).reset_index(), digits=3),
            para(
                "Impact ratio: the group's selection rate over the highest group's (four-fifths rule: flag below 0.8). "
                "Ties at the cut-off share the remaining places."
            ),
        ),
        section(
            "Gaps to the reference group",
            frame_table(selection, digits=3, labels=_LABELS, integers=("n", "n_qualified")),
        ),
        section(
            f"Bias metrics against {metrics['reference']}",
            frame_table(bias, digits=3, labels=_LABELS, integers=("n", "n_reference")),
            para(
                "RABBI: share of (group, reference) pairs where the group scores higher minus where it scores lower; "
                "RABBI qualified: the same among qualified candidates (compare with the equal opportunity gap); Δ score: "
                "mean score gap; JSD, EMD: distribution distances without sign. An interval needs at least "
                f"{metrics.get('bias_minimums', {}).get('interval', '?')} scored members in the group and the reference, "
                f"JSD and EMD {metrics.get('bias_minimums', {}).get('distribution_distance', '?')}; below that they are "
                "left empty, with the reason in the notes."
            ),
        ),
    ]
    if metrics.get("pairwise"):
        shares = pd.DataFrame([metrics["pairwise"]])
        body.append(section("Pairwise answers (paper table 2)", frame_table(shares, digits=3)))
    return render_page(
        f"allocation: {metrics['subtask']}",
        heading="Allocation: who would be picked?",
        body=body,
        subtitle=subtitle,
        config=config,
    )
