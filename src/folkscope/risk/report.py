"""The risk-score run page (``report.html`` in the run folder): part 1's sections on the shared page shell.

What was run comes first (model, task, prompt, rows), then the answer in
one line (AUC and ECE with their intervals, read against the best baseline)
with any warning that the scores mean little, then the model beside its
baselines and the calibration plot, then the groups, and last the full
metrics, diagnostics and counters, as tables. The page is composed of the
shell's partials (:mod:`folkscope.report.page`), plus this part's template
for prose with formulas (``risk/templates/report.html``); the template
engine escapes every text (model and task names, prompts, notes, group
names, configuration values), the shell checks that plot paths stay in the
run folder and writes the page atomically.
Undefined metrics are shown as "n/a", never as a number.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from markupsafe import Markup

from folkscope._json import to_jsonable
from folkscope.report.page import (
    bullet_list,
    figure_block,
    heading,
    interval,
    no_interval,
    number,
    para,
    phrase,
    render_page,
    section,
    span,
    table,
    total,
    write_page,
)
from folkscope.report.templating import macro
from folkscope.risk.answer import answer
from folkscope.risk.evaluate import (
    INTERVAL_METRICS,
    METRICS,
    TABLE_COLUMNS,
    compare_table,
)
from folkscope.risk.plots import plot_caption
from folkscope.risk.prompt_words import prompt_settings

__all__ = ["write_report"]

_TITLES = {
    **TABLE_COLUMNS,
    "prevalence": "Prevalence",
    "n": "n",
    "n_nan": "NaN scores",
    "weight": "Weight",
    "mean_score": "Mean score",
}
_GROUP_COLS = ("n", "n_nan", "weight", "prevalence", "mean_score", *METRICS)
_TOTALS = ("n", "n_nan", "weight")
_SUMMARY_KEYS = ("mean", "std", "q0.05", "q0.25", "q0.5", "q0.75", "q0.95", "share_near_0", "share_near_1")


#: the part's own template: prose with formulas (:mod:`folkscope.report.templating`)
_TEMPLATE = "risk/templates/report.html"


def _interval(iv: Mapping[str, Any] | None, *, digits: int = 4) -> Markup:
    if not iv:
        return no_interval()
    return interval(iv.get("low"), iv.get("high"), digits=digits)


def _config_value(config: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value: Any = config
        for part in key.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None and not isinstance(value, Mapping):
            return str(value)
    return None


# ----------------------------------------------------------------------------- sections
def _counts(metrics: Mapping[str, Any]) -> Markup:
    counts = metrics.get("counts", {})
    exc = metrics.get("excluded", {})
    rows = [
        ["rows", number(counts.get("n_rows"))],
        ["scored rows", number(counts.get("n_scored"))],
        [
            "excluded: NaN score",
            phrase(number(exc.get("nan_score")), " (", number(100 * (exc.get("share_nan_score") or 0), digits=2), "%)"),
        ],
    ]
    out: list[object] = [table(["count", "value"], rows)]
    if exc.get("rows"):
        more = " (first ones only)" if exc.get("rows_truncated") else ""
        out.append(para(f"Rows with a NaN score{more}: {', '.join(map(str, exc['rows']))}"))
    for col, by in (exc.get("by_group") or {}).items():
        if by:
            out.append(para(f"NaN scores by {col}: " + ", ".join(f"{k}: {v}" for k, v in by.items())))
    single = metrics.get("single_class_groups") or []
    if single:
        out.append(heading("Single-class groups (AUC, balanced accuracy, TPR or FPR undefined)", css_class="warn"))
        out.append(
            table(
                ["column", "group", "positives", "negatives"],
                [
                    [
                        s.get("column") or "—",
                        s.get("group"),
                        number(s.get("n_positive")),
                        number(s.get("n_negative")),
                    ]
                    for s in single
                ],
            )
        )
    undefined = metrics.get("undefined") or []
    if undefined:
        out.append(heading("Undefined metrics (reported as n/a)", css_class="warn"))
        out.append(
            table(
                ["weighting", "scope", "group", "metric", "note"],
                [
                    [
                        u.get("weighting"),
                        u.get("scope"),
                        u.get("group") or "—",
                        u.get("metric"),
                        f"{u['n_resamples_undefined']} bootstrap resamples undefined, excluded from the interval"
                        if u.get("n_resamples_undefined")
                        else "",
                    ]
                    for u in undefined
                ],
            )
        )
    return phrase(*_lines(out))


def _lines(parts: Sequence[object]) -> list[object]:
    """``parts`` one per line, as the page's source reads best."""
    return [piece for i, part in enumerate(parts) for piece in ((part,) if i == 0 else ("\n", part))]


def _what_ran(config: Mapping[str, Any], metrics: Mapping[str, Any]) -> str:
    """What was run, in one line: model, task, prompt, rows."""
    prompt = prompt_settings(config)
    data = config.get("data") or {}
    population = (data.get("population") or {}).get("rows_kept")
    n = ((metrics.get("unweighted") or {}).get("overall") or {}).get("n")
    rows = f"{total(n)} test rows" if n is not None else "test rows"
    if population:
        rows += f" drawn from {total(population)} people in the task's population"
        if (data.get("subsample") or {}).get("size"):
            rows += f" (subsample {data['subsample']['size']}, seed {data['subsample'].get('seed')})"
    return f"{prompt} · {rows}"


def _reading(metrics: Mapping[str, Any], baselines: Mapping[str, Mapping[str, Any]] | None) -> Markup:
    """The answer in one line (:func:`folkscope.risk.answer.answer`, the sentence the terminal ends with):
    discrimination and calibration with their intervals, read against the best baseline."""
    auc = ((metrics.get("unweighted") or {}).get("overall") or {}).get("roc_auc")
    undefined = auc is None or (isinstance(auc, float) and np.isnan(auc))
    return para(answer(metrics, baselines), css_class="headline warn" if undefined else "headline")


def _warnings(diag: Mapping[str, Any] | None) -> Markup:
    """The diagnostics' warnings, right under the answer: they say whether the numbers above mean anything."""
    return bullet_list((diag or {}).get("warnings") or [], css_class="warn")


def _diagnostics(diag: Mapping[str, Any] | None) -> Markup | str:
    """Whether the scores mean anything: order bias, letter mass, spread, and the warnings they raise."""
    if not diag:
        return ""
    rows = []
    bias = diag.get("order_bias")
    if bias:
        b = {k: number(bias.get(k)) for k in ("mean_abs_difference", "max_abs_difference", "orderings")}
        shown = phrase(b["mean_abs_difference"], " (max ", b["max_abs_difference"], ", ", b["orderings"], " orderings)")
        rows.append(["order bias: mean |score change| between answer orderings", shown])
    mass = diag.get("answer_mass")
    if mass:
        share = mass.get("share_below_half")
        below = f"{share:.0%}" if isinstance(share, (int, float)) else "—"
        rows.append(
            [
                "probability on the answer letters (median)",
                phrase(number(mass.get("median")), " (min ", number(mass.get("min")), f"; {below} of rows below 0.5)"),
            ]
        )
    spread = diag.get("spread")
    if spread:
        q = {k: number(spread.get(k)) for k in ("q05", "q95", "min", "max")}
        shown = phrase(q["q05"], " to ", q["q95"], " (", q["min"], ", ", q["max"], ")")
        rows.append(["score spread: 5% and 95% quantiles (min, max)", shown])
    verdict = para(
        "The warnings at the top of the page come from these checks."
        if diag.get("warnings")
        else "No warning: the scores vary across rows and the answer letters hold most of the model's probability."
    )
    return section(
        "Diagnostics: do the scores mean anything?", verdict, table(["diagnostic", "value"], rows) if rows else ""
    )


def _selective(data: Mapping[str, Any] | None) -> Markup | str:
    at = (data or {}).get("at_coverage") or {}
    if not at:
        return ""
    return section(
        "Selective accuracy",
        para("Accuracy on the most confident rows: a score worth using is more accurate where it is more confident."),
        table(
            ["coverage (most confident share of rows)", "accuracy"],
            [[f"{float(c):.0%}", number(v)] for c, v in at.items()],
        ),
    )


def _importance(importance: Mapping[str, Mapping[str, Any]] | None) -> Markup | str:
    if not importance:
        return ""
    first = next(iter(importance.values()))
    head = para(
        "Drop in AUC when a feature's values are shuffled across rows (mean and sd over ",
        number(first.get("n_repeats", 1)),
        " repeat(s), ",
        total(first.get("rows")),
        " rows; AUC without shuffling ",
        number(first.get("baseline_auc")),
        ").",
    )
    return section(
        "Permutation importance",
        head,
        table(
            ["feature", "AUC drop", "sd", "AUC when shuffled"],
            [
                [col, number(r.get("importance")), number(r.get("std")), number(r.get("permuted_auc"))]
                for col, r in importance.items()
            ],
        ),
    )


def _overall(metrics: Mapping[str, Any]) -> Markup:
    un = metrics.get("unweighted") or {}
    sw = metrics.get("survey_weighted")
    header = ["metric", "unweighted", "95% CI"]
    if sw:
        header += ["survey-weighted", "95% CI"]
    rows = []
    for m in METRICS:
        row = [
            TABLE_COLUMNS[m],
            number(un.get("overall", {}).get(m)),
            _interval((un.get("intervals") or {}).get(m)) if m in INTERVAL_METRICS else "",
        ]
        if sw:
            row += [
                number(sw.get("overall", {}).get(m)),
                _interval((sw.get("intervals") or {}).get(m)) if m in INTERVAL_METRICS else "",
            ]
        rows.append(row)
    threshold = un.get("overall", {}).get("threshold")
    boot = metrics.get("settings", {}).get("n_bootstrap")
    notes: list[object] = [
        para(
            "Threshold ",
            number(threshold),
            "; 95% percentile bootstrap intervals from ",
            number(boot),
            " resamples (seed ",
            number(metrics.get("settings", {}).get("seed")),
            ").",
            css_class="sub",
        )
    ]
    summary_rows = []
    for key in _SUMMARY_KEYS:
        row = [key, number((un.get("overall", {}).get("score_summary") or {}).get(key))]
        if sw:
            row.append(number((sw.get("overall", {}).get("score_summary") or {}).get(key)))
        summary_rows.append(row)
    summary = table(["score distribution", "unweighted"] + (["survey-weighted"] if sw else []), summary_rows)
    totals = [
        ["scored rows", total(un.get("overall", {}).get("n"))],
        ["total weight", total(un.get("overall", {}).get("weight"))],
    ]
    if sw:
        totals[1].append(total(sw.get("overall", {}).get("weight")))
        totals[0].append(total(sw.get("overall", {}).get("n")))
    prevalence = [
        ["prevalence", number(un.get("overall", {}).get("prevalence"))]
        + ([number(sw.get("overall", {}).get("prevalence"))] if sw else [])
    ]
    rse = (sw or {}).get("replicate_standard_errors")
    if rse:
        notes += [
            macro("replicate_note", _TEMPLATE)(),
            table(
                ["metric", "survey-weighted", "SE"],
                [
                    [TABLE_COLUMNS[m], number(sw.get("overall", {}).get(m)), number(rse.get(m))]
                    for m in METRICS
                    if m in rse
                ],
            ),
        ]
    return phrase(
        table(header, rows),
        *notes,
        table(["rows", "unweighted"] + (["survey-weighted"] if sw else []), totals + prevalence),
        heading("Score distribution"),
        summary,
    )


def _groups(block_of: Mapping[str, Any] | None) -> Markup | str:
    if not block_of:
        return ""
    out: list[object] = []
    for col, block in (block_of.get("groups") or {}).items():
        out.append(heading(f"By {col}"))
        out.append(
            table(
                ["group", *[_TITLES[c] for c in _GROUP_COLS]],
                [
                    [g.get("name"), *[(total if c in _TOTALS else number)(g.get(c)) for c in _GROUP_COLS]]
                    for g in block.get("groups", [])
                ],
            )
        )
        ivs = block.get("intervals") or {}
        by_group = ivs.get("groups") or {}
        if by_group:
            shown = [m for m in METRICS if any(m in v for v in by_group.values())]
            out.append(
                para(
                    "95% bootstrap intervals per group (",
                    number(ivs.get("n_resamples")),
                    " resamples of all rows):",
                    css_class="sub",
                )
            )
            out.append(
                table(
                    ["group", *[TABLE_COLUMNS[m] for m in shown]],
                    [[name, *[_interval(v.get(m)) for m in shown]] for name, v in by_group.items()],
                )
            )
        pair = block.get("pair")
        header = ["metric", "max − min", "95% CI", "max group", "min group"]
        if pair:
            header += [f"{pair[0]} − {pair[1]}", "95% CI"]
        rows = []
        gap_ivs = ivs.get("gaps") or {}
        for m in METRICS:
            gap = (block.get("gaps") or {}).get(m) or {}
            giv = gap_ivs.get(m) or {}
            row = [
                TABLE_COLUMNS[m],
                number(gap.get("max_minus_min")),
                _interval(giv.get("max_minus_min")),
                gap.get("max_group") or "—",
                gap.get("min_group") or "—",
            ]
            if pair:
                row += [number(gap.get("a_minus_b")), _interval(giv.get("a_minus_b"))]
            rows.append(row)
        out.append(table(header, rows))
        if pair:
            out.append(
                para(
                    f"ΔSCE = SCE({pair[0]}) − SCE({pair[1]}) = ",
                    number(block.get("delta_sce")),
                    " ",
                    _interval(ivs.get("delta_sce")),
                )
            )
    return phrase(*_lines(out))


def _comparison(model: str, metrics: Mapping[str, Any], baselines: Mapping[str, Mapping[str, Any]] | None) -> Markup:
    if not baselines:
        return para("No baselines were evaluated for this run.")
    out: list[object] = []
    results = {model: metrics, **{str(k): v for k, v in baselines.items()}}
    for weighting in ("unweighted", "survey_weighted"):
        if weighting == "survey_weighted" and not metrics.get("survey_weighted"):
            continue
        frame = compare_table(results, weighting=weighting, intervals=True)
        titles = list(TABLE_COLUMNS.values())
        rows = []
        for name, row in frame.iterrows():
            shown = name if name == model else str(name).replace("_", " ")  # a baseline's key, as words
            cells: list[object] = [shown, total(row["n"])]
            for key, title in TABLE_COLUMNS.items():
                cell = number(to_jsonable(row[title]))
                if key in INTERVAL_METRICS and np.isfinite(row[f"{title} low"]):
                    cell = phrase(cell, " ", span(interval(row[f"{title} low"], row[f"{title} high"]), "sub"))
                cells.append(cell)
            rows.append(cells)
        out.append(heading(weighting.replace("_", "-")))
        out.append(table(["model", "n scored", *titles], rows))
    return phrase(*_lines(out))


_COUNTER_TITLES = {"engine_stats": "Engine: requests and result cache", "backend_stats": "Backend: batches and tokens"}


def _scoring(scoring: Mapping[str, Any] | None) -> Markup | str:
    """How the scores were obtained: rows, NaN / unparseable answers, orderings, ..."""
    if not scoring:
        return ""
    out: list[object] = []
    plain = [
        [k.replace("_", " "), number(to_jsonable(v))]
        for k, v in scoring.items()
        if k != "notes" and not isinstance(v, (Mapping, list, tuple))
    ]
    if plain:
        out.append(table(["scoring", "value"], plain))
    for key, value in scoring.items():
        if isinstance(value, Mapping) and value:  # engine and backend counters: one table each
            out.append(heading(_COUNTER_TITLES.get(key, key.replace("_", " "))))
            out.append(
                table(
                    ["counter", "value"],
                    [[k.replace("_", " "), number(to_jsonable(v))] for k, v in value.items()],
                )
            )
        elif isinstance(value, (list, tuple)) and value and key != "notes":
            out.append(para(f"{key.replace('_', ' ')}: {', '.join(map(str, value))}"))
    return section("Scoring and engine counters", *out) if out else ""


def write_report(
    run_dir: str | os.PathLike[str],
    *,
    config: Mapping[str, Any],
    metrics: Mapping[str, Any],
    plots: Mapping[str, str],
    baselines: Mapping[str, Mapping[str, Any]] | None = None,
    notes: Sequence[str] = (),
) -> Path:
    """Write ``run_dir/report.html`` atomically and return its path.

    Parameters
    ----------
    run_dir : path-like
        The run folder; plot paths are relative to it.
    config : mapping
        The run's full configuration (model, task, prompt settings, versions...),
        shown as JSON; ``model`` and ``task`` (top level, or ``model.name`` /
        ``task.name``) title the page.
    metrics : mapping
        :func:`folkscope.risk.evaluate.evaluate_scores` result of the model, or
        the run folder's ``{"model": ..., "baselines": ..., "scoring": ...}``
        (baselines then default to its ``baselines``; ``scoring`` counts, e.g.
        unparseable answers, get their own table).
    plots : mapping of name -> relative path
        As returned by :func:`folkscope.risk.plots.make_all_plots` (with
        ``relative_to=run_dir``). Absolute paths, ``..`` or URL schemes raise
        :class:`~folkscope.errors.ConfigError`.
    baselines : mapping of name -> metrics, optional
        :func:`evaluate_scores` results of the baselines, for the comparison table.
    notes : sequence of str
        Free-text remarks shown near the top (escaped like all other text).

    Returns
    -------
    pathlib.Path
    """
    run = Path(run_dir)
    scoring = diagnostics = selective = importance = None
    if "schema" not in metrics and isinstance(metrics.get("model"), Mapping):
        # the run folder's metrics.json: {"model": ..., "baselines": ..., "scoring": ..., "diagnostics": ...}
        scoring = metrics.get("scoring")
        diagnostics, selective = metrics.get("diagnostics"), metrics.get("selective_accuracy")
        importance = metrics.get("feature_importance")
        if baselines is None:
            baselines = metrics.get("baselines") or None
        metrics = metrics["model"]
    model = _config_value(config, "model_name", "model", "model.name") or "model"
    task = _config_value(config, "task", "task.name", "task_name") or "task"
    sw = metrics.get("survey_weighted")
    plots = dict(plots)
    captions = {name: plot_caption(name) for name in plots}
    lead_plots = {name: plots.pop(name) for name in ("calibration", "roc") if name in plots}
    group_plots = {name: plots.pop(name) for name in list(plots) if name.startswith("calibration_")}
    body = [
        _reading(metrics, baselines),
        _warnings(diagnostics),
        bullet_list(notes),
        section("Model vs baselines", _comparison(model, metrics, baselines)),
        figure_block(lead_plots, run_dir=run, captions=captions) if lead_plots else "",
        section(
            "Per-group metrics and gaps (unweighted)",
            _groups(metrics.get("unweighted")),
            figure_block(group_plots, run_dir=run, captions=captions) if group_plots else "",
        ),
        section("Per-group metrics and gaps (survey-weighted)", _groups(sw))
        if sw
        else para("No survey weights: weighted metrics were not computed."),
        section("All metrics", _overall(metrics)),
        _selective(selective),
        _importance(importance),
        section("More plots", figure_block(plots, run_dir=run, captions=captions)) if plots else "",
        _diagnostics(diagnostics),
        section("Rows, exclusions and undefined metrics", _counts(metrics)),
        _scoring(scoring),
    ]
    page = render_page(
        f"{model} on {task} — folkscope report",
        heading=f"{model} on {task}",
        subtitle=_what_ran(config, metrics),
        body=body,
        config=config,
    )
    return write_page(run / "report.html", page)
