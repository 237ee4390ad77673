"""One-page HTML report of a risk-score run (``report.html`` in the run folder).

Self-contained: inline CSS, no JavaScript, no external assets; plots are
linked and shown by their paths relative to the run folder. Every piece of
text that reaches the page (model and task names, prompts, notes, group
names, configuration values) goes through :func:`html.escape`, because model
and user text is untrusted (``spec/reliability.md``, "Security"). Undefined
metrics are shown as "n/a", never as a number.
"""

from __future__ import annotations

import html
import json
import os
import platform
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

import numpy as np

from folkscope.errors import ConfigError
from folkscope._io import atomic_write
from folkscope.risk.evaluate import (
    INTERVAL_METRICS,
    METRICS,
    TABLE_COLUMNS,
    compare_table,
    to_jsonable,
)

__all__ = ["write_report"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.4;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:1.8em}h3{margin-bottom:.3em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}
.na{color:#999}.warn{color:#a40}.sub{color:#555;margin-top:0}.headline{font-size:1.15em}
figure{display:inline-block;margin:.5em;vertical-align:top}
figure img{max-width:100%;border:1px solid #ddd}pre{background:#f7f7f7;padding:1em;
overflow-x:auto;font-size:.85em;white-space:pre-wrap;word-break:break-word}
"""
# images from the run folder only, inline CSS, nothing else (no scripts, no requests)
_CSP = "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'"

_TITLES = {**TABLE_COLUMNS, "prevalence": "Prevalence", "n": "n", "n_nan": "NaN scores",
           "weight": "Weight", "mean_score": "Mean score"}
_GROUP_COLS = ("n", "n_nan", "weight", "prevalence", "mean_score", *METRICS)
_TOTALS = ("n", "n_nan", "weight")
_SUMMARY_KEYS = ("mean", "std", "q0.05", "q0.25", "q0.5", "q0.75", "q0.95", "share_near_0",
                 "share_near_1")


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _fmt(value: Any, *, digits: int = 4) -> str:
    """A cell: None -> n/a (undefined), "inf" -> ∞, ints with separators, floats rounded."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return '<span class="na" title="undefined">n/a</span>'
    if isinstance(value, str) and value in ("inf", "-inf"):
        return "∞" if value == "inf" else "−∞"
    if isinstance(value, bool):
        return _e(value)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not np.isfinite(v):
            return "∞" if v > 0 else "−∞"
        return f"{v:.{digits}f}"
    return _e(value)


def _fmt_total(value: Any) -> str:
    """Counts and weight sums: thousands separators, decimals only when needed."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
    return _fmt(value)


def _interval(iv: Mapping[str, Any] | None) -> str:
    if not iv:
        return '<span class="na">—</span>'
    return f"[{_fmt(iv.get('low'))}, {_fmt(iv.get('high'))}]"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Header cells are escaped here; body cells must already be escaped/formatted."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _config_value(config: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value: Any = config
        for part in key.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None and not isinstance(value, Mapping):
            return str(value)
    return None


# ----------------------------------------------------------------------------- sections
def _counts(metrics: Mapping[str, Any]) -> str:
    counts = metrics.get("counts", {})
    exc = metrics.get("excluded", {})
    rows = [["rows", _fmt(counts.get("n_rows"))], ["scored rows", _fmt(counts.get("n_scored"))],
            ["excluded: NaN score", f"{_fmt(exc.get('nan_score'))} "
                                    f"({_fmt(100 * (exc.get('share_nan_score') or 0), digits=2)}%)"]]
    out = [_table(["count", "value"], rows)]
    if exc.get("rows"):
        more = " (first ones only)" if exc.get("rows_truncated") else ""
        out.append(f"<p>Rows with a NaN score{more}: "
                   f"{_e(', '.join(map(str, exc['rows'])))}</p>")
    for col, by in (exc.get("by_group") or {}).items():
        if by:
            out.append(f"<p>NaN scores by {_e(col)}: "
                       + _e(", ".join(f"{k}: {v}" for k, v in by.items())) + "</p>")
    single = metrics.get("single_class_groups") or []
    if single:
        out.append('<h3 class="warn">Single-class groups (AUC, balanced accuracy, TPR or FPR '
                   "undefined)</h3>")
        out.append(_table(["column", "group", "positives", "negatives"], [
            [_e(s.get("column") or "—"), _e(s.get("group")), _fmt(s.get("n_positive")),
             _fmt(s.get("n_negative"))] for s in single]))
    undefined = metrics.get("undefined") or []
    if undefined:
        out.append('<h3 class="warn">Undefined metrics (reported as n/a)</h3>')
        out.append(_table(["weighting", "scope", "group", "metric", "note"], [
            [_e(u.get("weighting")), _e(u.get("scope")), _e(u.get("group") or "—"),
             _e(u.get("metric")),
             _e(f"{u['n_resamples_undefined']} bootstrap resamples undefined, excluded from "
                "the interval" if u.get("n_resamples_undefined") else "")]
            for u in undefined]))
    return "\n".join(out)


def _headline(metrics: Mapping[str, Any]) -> str:
    """The answer in one line: discrimination and calibration on the rows scored, with their intervals."""
    un = metrics.get("unweighted") or {}
    overall, intervals = un.get("overall") or {}, un.get("intervals") or {}
    parts = []
    for key in ("roc_auc", "ece"):
        if key in overall:
            ci = _interval(intervals.get(key)) if key in INTERVAL_METRICS else ""
            parts.append(f"{_e(TABLE_COLUMNS[key])} <strong>{_fmt(overall.get(key))}</strong>{f' {ci}' if ci else ''}")
    if not parts:
        return ""
    return f'<p class="headline">{", ".join(parts)} on {_fmt(overall.get("n"))} scored rows (unweighted, 95% CI).</p>'


def _diagnostics(diag: Mapping[str, Any] | None) -> str:
    """Whether the scores mean anything: order bias, letter mass, spread, and the warnings they raise."""
    if not diag:
        return ""
    rows = []
    bias = diag.get("order_bias")
    if bias:
        rows.append(["order bias: mean |score change| between answer orderings",
                     f"{_fmt(bias.get('mean_abs_difference'))} (max {_fmt(bias.get('max_abs_difference'))}, "
                     f"{_fmt(bias.get('orderings'))} orderings)"])
    mass = diag.get("answer_mass")
    if mass:
        share = mass.get("share_below_half")
        below = f"{share:.0%}" if isinstance(share, (int, float)) else "—"
        rows.append(["probability on the answer letters (median)",
                     f"{_fmt(mass.get('median'))} (min {_fmt(mass.get('min'))}; {below} of rows below 0.5)"])
    spread = diag.get("spread")
    if spread:
        rows.append(["score spread: 5% and 95% quantiles (min, max)",
                     f"{_fmt(spread.get('q05'))} to {_fmt(spread.get('q95'))} "
                     f"({_fmt(spread.get('min'))}, {_fmt(spread.get('max'))})"])
    warnings = diag.get("warnings") or []
    listed = ('<ul class="warn">' + "".join(f"<li>{_e(w)}</li>" for w in warnings) + "</ul>") if warnings else \
        "<p>No warning: the scores vary across rows and the answer letters hold most of the model's probability.</p>"
    return "<h2>Do the scores mean anything?</h2>" + listed + (_table(["diagnostic", "value"], rows) if rows else "")


def _selective(data: Mapping[str, Any] | None) -> str:
    at = (data or {}).get("at_coverage") or {}
    if not at:
        return ""
    return ("<h2>Selective accuracy</h2><p>Accuracy on the most confident rows: a score worth using is more "
            "accurate where it is more confident.</p>"
            + _table(["coverage (most confident share of rows)", "accuracy"],
                     [[_e(f"{float(c):.0%}"), _fmt(v)] for c, v in at.items()]))


def _importance(table: Mapping[str, Mapping[str, Any]] | None) -> str:
    if not table:
        return ""
    first = next(iter(table.values()))
    head = (f"<p>Drop in AUC when a feature's values are shuffled across rows (mean and sd over "
            f"{_fmt(first.get('n_repeats', 1))} repeat(s), {_fmt_total(first.get('rows'))} rows; "
            f"AUC without shuffling {_fmt(first.get('baseline_auc'))}).</p>")
    return ("<h2>Permutation importance</h2>" + head
            + _table(["feature", "AUC drop", "sd", "AUC when shuffled"],
                     [[_e(col), _fmt(r.get("importance")), _fmt(r.get("std")), _fmt(r.get("permuted_auc"))]
                      for col, r in table.items()]))


def _overall(metrics: Mapping[str, Any]) -> str:
    un = metrics.get("unweighted") or {}
    sw = metrics.get("survey_weighted")
    header = ["metric", "unweighted", "95% CI"]
    if sw:
        header += ["survey-weighted", "95% CI"]
    rows = []
    for m in METRICS:
        row = [_e(TABLE_COLUMNS[m]), _fmt(un.get("overall", {}).get(m)),
               _interval((un.get("intervals") or {}).get(m)) if m in INTERVAL_METRICS else ""]
        if sw:
            row += [_fmt(sw.get("overall", {}).get(m)),
                    _interval((sw.get("intervals") or {}).get(m)) if m in INTERVAL_METRICS
                    else ""]
        rows.append(row)
    threshold = un.get("overall", {}).get("threshold")
    boot = metrics.get("settings", {}).get("n_bootstrap")
    note = (f'<p class="sub">Threshold {_fmt(threshold)}; 95% percentile bootstrap intervals '
            f"from {_fmt(boot)} resamples (seed {_fmt(metrics.get('settings', {}).get('seed'))})."
            "</p>")
    summary_rows = []
    for key in _SUMMARY_KEYS:
        row = [_e(key), _fmt((un.get("overall", {}).get("score_summary") or {}).get(key))]
        if sw:
            row.append(_fmt((sw.get("overall", {}).get("score_summary") or {}).get(key)))
        summary_rows.append(row)
    summary = _table(["score distribution", "unweighted"] + (["survey-weighted"] if sw else []),
                     summary_rows)
    totals = [["scored rows", _fmt_total(un.get("overall", {}).get("n"))],
              ["total weight", _fmt_total(un.get("overall", {}).get("weight"))]]
    if sw:
        totals[1].append(_fmt_total(sw.get("overall", {}).get("weight")))
        totals[0].append(_fmt_total(sw.get("overall", {}).get("n")))
    prevalence = [["prevalence", _fmt(un.get("overall", {}).get("prevalence"))]
                  + ([_fmt(sw.get("overall", {}).get("prevalence"))] if sw else [])]
    rse = (sw or {}).get("replicate_standard_errors")
    if rse:
        note += ("<h3>Survey standard errors (replicate weights)</h3>"
                 "<p>By the Census Bureau's successive difference replication over PWGTP1–80, "
                 "SE = √(4/80 Σ(θ<sub>r</sub> − θ)²); unlike the bootstrap above it respects the survey design.</p>"
                 + _table(["metric", "survey-weighted", "SE"],
                          [[_e(TABLE_COLUMNS[m]), _fmt(sw.get("overall", {}).get(m)), _fmt(rse.get(m))]
                           for m in METRICS if m in rse]))
    return (_table(header, rows) + note
            + _table(["rows", "unweighted"] + (["survey-weighted"] if sw else []),
                     totals + prevalence)
            + "<h3>Score distribution</h3>" + summary)


def _groups(section: Mapping[str, Any] | None) -> str:
    if not section:
        return ""
    out = []
    for col, block in (section.get("groups") or {}).items():
        out.append(f"<h3>By {_e(col)}</h3>")
        out.append(_table(["group", *[_TITLES[c] for c in _GROUP_COLS]], [
            [_e(g.get("name")), *[(_fmt_total if c in _TOTALS else _fmt)(g.get(c))
                                  for c in _GROUP_COLS]]
            for g in block.get("groups", [])]))
        ivs = block.get("intervals") or {}
        by_group = ivs.get("groups") or {}
        if by_group:
            shown = [m for m in METRICS if any(m in v for v in by_group.values())]
            out.append(f'<p class="sub">95% bootstrap intervals per group ({_fmt(ivs.get("n_resamples"))} '
                       "resamples of all rows):</p>")
            out.append(_table(["group", *[TABLE_COLUMNS[m] for m in shown]], [
                [_e(name), *[_interval(v.get(m)) for m in shown]] for name, v in by_group.items()]))
        pair = block.get("pair")
        header = ["metric", "max − min", "95% CI", "max group", "min group"]
        if pair:
            header += [f"{pair[0]} − {pair[1]}", "95% CI"]
        rows = []
        gap_ivs = ivs.get("gaps") or {}
        for m in METRICS:
            gap = (block.get("gaps") or {}).get(m) or {}
            giv = gap_ivs.get(m) or {}
            row = [_e(TABLE_COLUMNS[m]), _fmt(gap.get("max_minus_min")), _interval(giv.get("max_minus_min")),
                   _e(gap.get("max_group") or "—"), _e(gap.get("min_group") or "—")]
            if pair:
                row += [_fmt(gap.get("a_minus_b")), _interval(giv.get("a_minus_b"))]
            rows.append(row)
        out.append(_table(header, rows))
        if pair:
            ci = _interval(ivs.get("delta_sce"))
            out.append(f"<p>ΔSCE = SCE({_e(pair[0])}) − SCE({_e(pair[1])}) = "
                       f"{_fmt(block.get('delta_sce'))}{f' {ci}' if ci else ''}</p>")
    return "\n".join(out)


def _comparison(model: str, metrics: Mapping[str, Any],
                baselines: Mapping[str, Mapping[str, Any]] | None) -> str:
    if not baselines:
        return "<p>No baselines were evaluated for this run.</p>"
    out = []
    results = {model: metrics, **{str(k): v for k, v in baselines.items()}}
    for weighting in ("unweighted", "survey_weighted"):
        if weighting == "survey_weighted" and not metrics.get("survey_weighted"):
            continue
        table = compare_table(results, weighting=weighting, intervals=True)
        titles = list(TABLE_COLUMNS.values())
        rows = []
        for name, row in table.iterrows():
            cells = [_e(name), _fmt_total(row["n"])]
            for key, title in TABLE_COLUMNS.items():
                cell = _fmt(to_jsonable(row[title]))
                if key in INTERVAL_METRICS and np.isfinite(row[f"{title} low"]):
                    cell += (f' <span class="sub">[{_fmt(row[f"{title} low"])}, '
                             f'{_fmt(row[f"{title} high"])}]</span>')
                cells.append(cell)
            rows.append(cells)
        out.append(f"<h3>{_e(weighting.replace('_', '-'))}</h3>")
        out.append(_table(["model", "n scored", *titles], rows))
    return "\n".join(out)


def _scoring(scoring: Mapping[str, Any] | None) -> str:
    """How the scores were obtained: rows, NaN / unparseable answers, orderings, ..."""
    if not scoring:
        return ""
    rows = []
    for key, value in scoring.items():
        if key == "notes":
            continue  # shown with the other notes
        if isinstance(value, (Mapping, list, tuple)):
            cell = _e(json.dumps(to_jsonable(value), ensure_ascii=False))
        else:
            cell = _fmt(to_jsonable(value))
        rows.append([_e(key), cell])
    return "<h2>Scoring</h2>" + _table(["item", "value"], rows) if rows else ""


def _plot_src(rel: str) -> str:
    path = PurePosixPath(str(rel).replace(os.sep, "/"))
    if path.is_absolute() or ".." in path.parts or ":" in str(path):
        raise ConfigError(f"plot paths must be relative to the run folder, without '..' or a "
                          f"scheme; got {rel!r}.", parameter="plots", value=rel)
    return quote(path.as_posix())


def _plots(run_dir: Path, plots: Mapping[str, str]) -> str:
    if not plots:
        return "<p>No plots.</p>"
    out = []
    for name, rel in plots.items():
        src = _e(_plot_src(rel))
        missing = "" if (run_dir / rel).is_file() else ' <span class="warn">(file missing)</span>'
        out.append(f'<figure><a href="{src}"><img src="{src}" alt="{_e(name)}" '
                   f'loading="lazy"></a><figcaption>{_e(name)}{missing}</figcaption></figure>')
    return "\n".join(out)


def _versions() -> dict[str, str]:
    import pandas as pd

    from folkscope import __version__

    return {"folkscope": __version__, "python": sys.version.split()[0],
            "numpy": np.__version__, "pandas": pd.__version__, "platform": platform.platform()}


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
        As returned by :func:`folkscope.report.make_all_plots` (with
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
    notes_html = ("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>") if notes else ""
    cfg = json.dumps(to_jsonable(config), indent=2, ensure_ascii=False)
    versions = _table(["package", "version"], [[_e(k), _e(v)] for k, v in _versions().items()])
    sw = metrics.get("survey_weighted")
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(model)} on {_e(task)} — folkscope report</title>
<style>{_CSS}</style>
</head>
<body>
<h1>{_e(model)} on {_e(task)}</h1>
<p class="sub">folkscope risk-score report</p>
{_headline(metrics)}
{notes_html}
{_diagnostics(diagnostics)}
<h2>Overall metrics</h2>
{_overall(metrics)}
{_selective(selective)}
{_importance(importance)}
<h2>Model vs baselines</h2>
{_comparison(model, metrics, baselines)}
<h2>Per-group metrics and gaps (unweighted)</h2>
{_groups(metrics.get("unweighted"))}
{"<h2>Per-group metrics and gaps (survey-weighted)</h2>" + _groups(sw) if sw else
 "<p>No survey weights: weighted metrics were not computed.</p>"}
<h2>Rows, exclusions and undefined metrics</h2>
{_counts(metrics)}
{_scoring(scoring)}
<h2>Plots</h2>
{_plots(run, plots)}
<h2>Configuration</h2>
<pre>{_e(cfg)}</pre>
<h3>Software</h3>
{versions}
</body>
</html>
"""
    return atomic_write(run / "report.html", lambda fh: fh.write(page.encode("utf-8")))
