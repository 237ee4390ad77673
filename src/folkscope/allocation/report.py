"""The allocation run page: who the top k would pick, then the bias metrics, then what the model said.

Built on the shared page shell (:mod:`folkscope.report.page`). Figures need
matplotlib (the ``plots`` extra); without it the page says so and keeps every table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.allocation.outcomes import FOUR_FIFTHS, headline_bias, interval_text
from folkscope.engine.usage import usage_line
from folkscope.report.figures import plain_text, save_png, subplots_row
from folkscope.report.page import escape, frame_table, optional_figures, render_page, section

__all__ = ["render_report", "write_figures"]

_FEATURE = "drawing the allocation figures"


def _lead(metrics: dict[str, Any], bias: pd.DataFrame) -> str:
    worst = metrics["min_impact_ratio_k1"]
    if worst.get("group") is None or worst["value"] != worst["value"]:
        lines = [
            f"If the model picked the top 1 of each of {metrics['n_pools']} pools, no impact ratio would be defined "
            "(no group was ever picked)."
        ]
    else:
        verdict = (
            "below the four-fifths line: adverse impact"
            if worst["value"] < FOUR_FIFTHS
            else "within the four-fifths rule"
        )
        count = f" ({worst['selected']:g} of its {worst['n']} appearances picked)" if "n" in worst else ""
        lines = [
            f"If the model picked the top 1 of each of {metrics['n_pools']} pools, the least-picked group would be "
            f"<b>{escape(worst['group'])}</b> at {worst['value']:.2f} of the most-picked group's rate{escape(count)} ({verdict})."
        ]
    if len(bias):
        top = headline_bias(bias)
        if top is None:
            lines.append(
                f"No group's RABBI against {escape(metrics['reference'])} could be tested (every score identical)."
            )
        else:
            lines.append(
                f"Strongest evidence of rank bias against {escape(metrics['reference'])}: {escape(top['group'])} RABBI "
                f"{top['rabbi']:+.3f} {escape(interval_text(top))} (p = {top['rabbi_p_value']:.3g}, {top['n']} vs "
                f"{top.get('n_reference', '?')} scored); RABBI > 0 means the group is ranked above the reference."
            )
        notes = sorted({str(n) for col in ("interval_note", "distance_note") if col in bias for n in bias[col] if n})
        if notes:
            lines.append(f'<span class="warn">Too small to say: {escape("; ".join(notes))}.</span>')
    lost = {
        "unparseable_pools": "pools whose answer stated no ranking",
        "unscored_candidates": "candidates without usable label probabilities",
    }
    missing = [f"{metrics[key]} {what}" for key, what in lost.items() if metrics.get(key)]
    if missing:
        lines.append(f'<span class="warn">Left out: {escape("; ".join(missing))}.</span>')
    paid = usage_line(metrics.get("engine_stats") or {}, metrics.get("backend_stats") or {})
    if paid:
        lines.append(escape(paid))
    shares = metrics.get("pairwise")
    if shares:
        lines.append(
            f"Pairwise answers: {shares['regular']:.0%} named a candidate, {shares['tie']:.0%} said equally good, "
            f"{shares['inconsistent']:.0%} of pairs changed with the order ({shares['flipped']:.0%} flipped)."
        )
    return "".join(f"<p>{line}</p>" for line in lines)


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
    return {"Selection rate by k, and RABBI per group": "allocation.png"}


def render_report(metrics: dict[str, Any], selection: pd.DataFrame, bias: pd.DataFrame, folder: Path) -> str:
    """The run page as HTML (figures written into ``folder`` when matplotlib is there)."""
    config = metrics["config"]
    subtitle = (
        f"{metrics['model']} · {config['task']} / {metrics['subtask']} · {config['mode']} · "
        f"{metrics['n_candidates']} candidates in {metrics['n_pools']} pools"
    )
    if metrics.get("nothing_scored"):
        lead = f'<p class="warn">Nothing measured: {escape(metrics["nothing_scored"])}.</p>'
        return render_page(
            f"allocation: {metrics['subtask']}",
            heading="Allocation: who would be picked?",
            body=[lead],
            subtitle=subtitle,
            config=config,
        )
    figures = optional_figures(
        lambda: write_figures(selection, bias, folder, reference=metrics["reference"]), run_dir=folder
    )
    rates = selection.pivot(index="group", columns="k", values="selection_rate").add_prefix("rate k=")
    ratios = selection.pivot(index="group", columns="k", values="impact_ratio").add_prefix("impact k=")
    body = [
        _lead(metrics, bias),
        figures,
        section(
            "Selection by group",
            frame_table(rates.join(ratios).reset_index(), digits=3),
            "<p>Impact ratio: the group's selection rate over the highest group's (four-fifths rule: flag below 0.8). "
            "Ties at the cut-off share the remaining places.</p>",
        ),
        section("Gaps to the reference group", frame_table(selection, digits=3)),
        section(
            f"Bias metrics against {metrics['reference']}",
            frame_table(bias, digits=3),
            "<p>RABBI: share of (group, reference) pairs where the group scores higher minus where it scores lower; "
            "rabbi_qualified: the same among qualified candidates (compare with the EO gap); delta: mean score gap; "
            "jsd, emd: distribution distances without sign. An interval needs at least "
            f"{metrics.get('bias_minimums', {}).get('interval', '?')} scored members in the group and the reference, "
            f"JSD and EMD {metrics.get('bias_minimums', {}).get('distribution_distance', '?')}; below that they are "
            "left empty, with the reason in the notes.</p>",
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
