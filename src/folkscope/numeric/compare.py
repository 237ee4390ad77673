"""Part 4 in ``folkscope compare``: two of its run folders, paired unit by unit (B minus A).

Units are problems (``problem_id``, same option pair); the problem-level means of PM, WD and RE,
resampling whole option pairs as the part's own intervals cluster by them. RE is left out where
either run leaves it undefined (PM = 0).

The paired bootstrap, unit matching and output are shared (:mod:`folkscope.report.paired`,
:mod:`folkscope.report.matching`, :mod:`folkscope.report.compare`); the floor plan (:mod:`folkscope.registry`) makes
:func:`compare` this part's ``compare`` entry point.

``folkscope numeric run --compare-to RUN`` is the part's own comparison, kept in the run folder:
:func:`check_reference` refuses a wrong folder before any problem is scored, :func:`compare_runs`
gives the chat-minus-base differences clustered by option pair and the mode stability the paper
reports, and :func:`attach_comparison` writes them into the run and re-analyses it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._json import write_json
from folkscope.errors import ConfigError, DataError
from folkscope.metrics import mode_stability
from folkscope.numeric import measures
from folkscope.numeric.analysis import analyse
from folkscope.numeric.problems import NumericProblem
from folkscope.report.matching import check_same_subject, match_units
from folkscope.report.paired import Options, PairedMetric, PartComparison, paired_differences, top_moved
from folkscope.runs import RunFolder, read_manifest, read_table

__all__ = ["attach_comparison", "check_reference", "compare", "compare_runs"]

#: problem_metrics column -> (title, better)
NUMERIC_METRICS: dict[str, tuple[str, str]] = {
    "calibration_distance": ("WD", "lower"),
    "probability_mass": ("PM", "higher"),
    "relative_entropy": ("RE", "zero"),
}


def compare(a: Path, b: Path, opts: Options) -> PartComparison:
    """Paired differences of the problem-level means of PM, WD and RE, resampling option pairs."""
    check_same_subject(read_manifest(a).config.get("dataset"), read_manifest(b).config.get("dataset"), "dataset")
    keys = ["problem_id", "pair"]
    matched = match_units(
        read_table(a, "problems")[keys],
        read_table(b, "problems")[keys],
        keys=["problem_id"],
        same=["pair"],
        unit="problem",
        shared_rows=opts.shared_rows,
    )
    notes = [matched.note] if matched.note else []
    cols = ["problem_id", *NUMERIC_METRICS, "cell"]
    per = [read_table(f, "problem_metrics").reindex(columns=cols) for f in (a, b)]
    both = matched.shared.merge(per[0], on="problem_id").merge(
        per[1].drop(columns="cell"), on="problem_id", suffixes=("_a", "_b")
    )
    if len(both) < len(matched.shared):
        notes.append(f"{len(matched.shared) - len(both):,} shared problems that A or B could not score are left out")
    if both.empty:
        raise DataError("no shared problem is scored in both runs; nothing to compare")
    metrics = []
    for col, (title, better) in NUMERIC_METRICS.items():
        values = (both[f"{col}_a"].to_numpy(np.float64), both[f"{col}_b"].to_numpy(np.float64))
        ok = np.isfinite(values[0]) & np.isfinite(values[1])
        if not ok.all():
            notes.append(
                f"{title} is undefined (PM = 0) in A or B on {int((~ok).sum()):,} problems, left out of {title}"
            )

        def value(side: int, counts: np.ndarray, values: tuple[np.ndarray, ...] = values, ok: np.ndarray = ok) -> float:
            c = counts[ok]
            return float(np.dot(values[side][ok], c) / c.sum()) if c.sum() > 0 else float("nan")

        metrics.append(PairedMetric(col, title, better, value))
    table = paired_differences(
        metrics,
        len(both),
        clusters=both["pair"].to_numpy(),
        replicates=opts.replicates,
        seed=opts.seed,
        confidence=opts.confidence,
    )
    moved = pd.DataFrame(
        {
            "problem_id": both["problem_id"],
            "pair": both["pair"],
            "cell": both["cell"],
            "wd_a": both["calibration_distance_a"],
            "wd_b": both["calibration_distance_b"],
        }
    )
    moved["difference"] = moved["wd_b"] - moved["wd_a"]
    moved["pm_a"], moved["pm_b"] = both["probability_mass_a"], both["probability_mass_b"]
    moved["re_a"], moved["re_b"] = both["relative_entropy_a"], both["relative_entropy_b"]
    return PartComparison(
        "problem",
        matched.n_a,
        matched.n_b,
        len(both),
        table,
        top_moved(moved, moved["difference"], opts.top),
        tuple((k, "overall") for k in NUMERIC_METRICS),
        tuple(notes),
    )


def compare_runs(base: str | Path, chat: str | Path) -> dict[str, Any]:
    """Paired chat-minus-base differences of two run folders over the same problems.

    Typically one model in base and chat form, or a base and an instruction-tuned
    model. Returns the PM, WD and RE differences with 95% intervals clustered by
    option pair (:func:`~folkscope.numeric.measures.paired_differences`) and,
    for every dataset, the mode stability (share of problems whose most likely
    option agrees, :func:`folkscope.metrics.mode_stability`). Problems that
    either run could not score are left out (``n_unscored``).

    Raises
    ------
    DataError
        The two folders hold different problems (another dataset, grid or seed).
    """
    a, b = Path(base), Path(chat)
    ids_a = pd.read_parquet(a / "problems.parquet", columns=["problem_id"])["problem_id"]
    ids_b = pd.read_parquet(b / "problems.parquet", columns=["problem_id"])["problem_id"]
    if set(ids_a) != set(ids_b):
        raise DataError(
            f"{a.name} and {b.name} hold different problems; compare runs of the same dataset, grid and seed"
        )
    pa, bad_a = measures.split_unscored(pd.read_parquet(a / "probabilities.parquet"))
    pb, bad_b = measures.split_unscored(pd.read_parquet(b / "probabilities.parquet"))
    shared = set(pa["problem_id"]) & set(pb["problem_id"])
    pa = pa[pa["problem_id"].isin(shared)].reset_index(drop=True)
    per_a = measures.problem_metrics(pa)
    per_b = measures.problem_metrics(pb[pb["problem_id"].isin(shared)])
    pairs = pd.read_parquet(a / "problems.parquet", columns=["problem_id", "pair"]).set_index("problem_id")["pair"]
    out: dict[str, Any] = {
        "base": a.name,
        "chat": b.name,
        "n_shared": len(shared),
        "n_unscored": len(set(bad_a) | set(bad_b)),
        "differences": measures.paired_differences(per_a, per_b, pairs),
    }
    pb = pb.set_index(["problem_id", "position"])
    pb = pb.loc[list(zip(pa["problem_id"], pa["position"]))].reset_index()
    stability, total = 0.0, 0
    for (_, pi_a, _), (_, pi_b, _) in zip(measures.option_matrices(pa), measures.option_matrices(pb)):
        stability += mode_stability(pi_a, pi_b) * len(pi_a)
        total += len(pi_a)
    out["mode_stability"] = stability / total
    return out


def check_reference(reference: str | Path, problems: list[NumericProblem]) -> Path:
    """The ``--compare-to`` folder, checked before any problem is scored: a finished numeric run of the same problems.

    Without this check a typo in the folder surfaced only after every problem
    had been scored (hours on the default model), as a traceback.

    Raises
    ------
    ConfigError
        Not a folder, not a finished numeric run, or a run of other problems
        (another dataset, grid, seed or template file).
    """
    from folkscope.paths import check_existing_dir

    folder = check_existing_dir(reference, flag="--compare-to", what="a finished run folder of the same problems")
    try:
        part = read_manifest(folder).part
        ids = pd.read_parquet(folder / "problems.parquet", columns=["problem_id"])["problem_id"]
        if not (folder / "probabilities.parquet").is_file():
            raise FileNotFoundError(folder / "probabilities.parquet")
    except (OSError, ValueError, KeyError) as exc:  # DataError is a ValueError; a damaged parquet file one of the three
        reason = (
            str(exc)
            if isinstance(exc, DataError)
            else f"it lacks a readable {Path(getattr(exc, 'filename', None) or 'problems.parquet').name}"
        )
        raise ConfigError(
            f"--compare-to {folder} is not a finished numeric run ({reason}); pass a folder `folkscope numeric` wrote",
            parameter="compare_to",
            value=str(folder),
        ) from None
    if part != "numeric":
        raise ConfigError(
            f"--compare-to {folder} is a {part} run, not a numeric one", parameter="compare_to", value=str(folder)
        )
    mine = {p.id for p in problems}
    if set(ids) != mine:
        raise ConfigError(
            f"--compare-to {folder} holds other problems ({len(set(ids) & mine):,} of its {ids.nunique():,} are this "
            f"run's {len(mine):,}); compare runs of the same dataset, grid, seed and templates",
            parameter="compare_to",
            value=str(folder),
        )
    return folder


def attach_comparison(folder: str | Path, reference: str | Path, *, heatmap: bool = True) -> dict[str, Any]:
    """Compare run ``folder`` with the ``reference`` run of the same problems and keep the
    result in the folder (``comparison.json``, ``metrics["comparison"]``, the report).

    The differences are ``folder`` minus ``reference`` (:func:`compare_runs` with
    ``reference`` as base), e.g. a chat-form run against the base-form run of the
    same grid. Returns the re-analysed metrics.
    """
    result = compare_runs(reference, folder)
    with RunFolder(folder) as staging:
        write_json(staging / "comparison.json", result)
        return analyse(staging, heatmap=heatmap)
