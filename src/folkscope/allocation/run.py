"""One allocation run: candidates, pools, scores from a model (or a part-1 run), in a run folder.

A run folder (``<results>/allocation-<task>-<subtask>/<model>/<mode>-<hash8>/``,
:mod:`folkscope.runs`) holds:

- ``candidates.parquet``: the candidate table (id, group, qualified, name, text);
- ``scores.parquet``: one row per appearance in a pool: ``pool, candidate_id, group, qualified, score`` (and the
  survey ``weight`` of ACS candidates);
- ``answers.parquet``: what the model said (pointwise label probabilities,
  pairwise answers per pair with the generated texts, listwise responses per
  pool; ACS runs: none);
- ``scoring.json``: counts of the scoring, and for pairwise runs how the
  answers were read (``pairwise_answer``) and pointed (``pairwise_points``);
- ``selection.parquet``, ``bias.parquet``, ``metrics.json``, ``report.html``
  and the CSV tables ``top_k_ranking.csv``, ``allocation_gaps.csv``,
  ``bias_metrics.csv``: recomputed from the tables above by
  :func:`~folkscope.allocation.analysis.rescore` (``folkscope rescore``).

An ACS allocation reads a finished part-1 run folder through its manifest and
declared ``scores`` table: no model, no re-scoring.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import write_parquet
from folkscope._json import fingerprint, write_json
from folkscope.allocation.acs import acs_candidates
from folkscope.allocation.analysis import analyse
from folkscope.allocation.candidates import DEFAULT_REFERENCE, ICNALE_REFERENCE, CandidateSet
from folkscope.allocation.config import AllocationConfig
from folkscope.allocation.essays import icnale_essays
from folkscope.allocation.outcomes import check_reference, draw_pools
from folkscope.allocation.resumes import bloomberg_resumes, rabbi_resumes
from folkscope.allocation.scoring import listwise_scores, pairwise_scores, pointwise_scores
from folkscope.allocation.templates import load_template
from folkscope.engine import Engine, engine_for_run, run_accounting
from folkscope.engine.usage import oom_note
from folkscope.errors import ConfigError
from folkscope.report.notebook import open_result
from folkscope.runs import Manifest, open_run, read_manifest, run_path

__all__ = ["AllocationRun", "run_allocation"]

#: bumped when prompts or scoring rules change, so old answers never pass for new ones
PROMPT_VERSION = "allocation-v1"


@dataclass(frozen=True)
class AllocationRun:
    """Where a run was written and its metrics."""

    folder: Path
    metrics: dict[str, Any]

    def _repr_html_(self) -> str:
        """In Jupyter: the answer, the headline metrics with intervals and the caveats, read from the folder
        (:func:`folkscope.report.open_result`)."""
        return open_result(self.folder)._repr_html_()


def _candidates(config: AllocationConfig) -> tuple[CandidateSet, np.ndarray | None]:
    """The candidate set of the task (and, for acs, the part-1 run's risk scores)."""
    if config.task == "resumes":
        return bloomberg_resumes(
            config.subtask or "software engineer", names_per_group=config.names_per_group, seed=config.seed
        ), None
    if config.task == "rabbi-resumes":
        return rabbi_resumes(
            str(config.data),
            config.subtask or "software engineer",
            names_per_group=config.names_per_group,
            seed=config.seed,
        ), None
    if config.task == "essays":
        return icnale_essays(str(config.data), topic=config.subtask), None
    cset, scores = acs_candidates(str(config.data), group_columns=config.group_columns)
    return cset, scores


def _reference(config: AllocationConfig, frame: pd.DataFrame) -> str:
    if config.reference is not None:
        check_reference(frame, config.reference)
        return config.reference
    groups = frame["group"].value_counts()
    default = ICNALE_REFERENCE if config.task == "essays" else DEFAULT_REFERENCE
    return default if default in groups.index else str(groups.idxmax())


def run_allocation(
    config: AllocationConfig,
    results_dir: str | Path,
    *,
    engine: Engine | None = None,
) -> AllocationRun:
    """Draw the pools, score them (or read a part-1 run's scores), and analyse; returns the folder and metrics.

    The run's caveats (unread answers, small groups) are recorded in its
    manifest and raised as :class:`~folkscope.errors.CaveatWarning`.

    Parameters
    ----------
    config : AllocationConfig
    results_dir : path
        Parent of the run folder.
    engine : Engine, optional
        A ready engine, borrowed and left open (else one is built from
        ``config.engine`` and closed at the end). Not used by the ``acs`` task.
    """
    cset, risk_scores = _candidates(config)
    template = load_template(config.family, config.template_file)
    reference = _reference(config, cset.frame)
    pools = draw_pools(cset.frame, rounds=config.rounds, pool_size=config.pool_size, seed=config.seed)
    drawn = set(cset.frame.set_index("candidate_id").loc[pools["candidate_id"], "group"])
    if reference not in drawn:
        raise ConfigError(
            f"no pool holds a candidate of the reference group {reference!r}; draw more --rounds, a larger "
            "--pool-size, or one candidate per group (no --pool-size)",
            parameter="reference",
            value=reference,
        )
    smallest = int(pools.groupby("pool").size().min())
    if config.k_max >= smallest:
        raise ConfigError(
            f"--k {config.k_max} must be below the pool size ({smallest} candidates)",
            parameter="k_max",
            value=config.k_max,
        )
    if config.task == "acs":  # scores from a part-1 run: no model asked
        manifest = read_manifest(str(config.data))
        identity: dict[str, Any] = {"from_run": str(config.data), "engine": dict(manifest.engine or {})}
        model_name = str(((manifest.engine or {}).get("backend") or {}).get("model", {}).get("name") or "part1-run")
        return _write(config, cset, pools, template, reference, risk_scores, None, identity, model_name, results_dir)
    with engine_for_run(engine, config.engine, prompt_version=PROMPT_VERSION) as engine:
        identity = engine.identity()
        model_name = str((identity.get("backend") or {}).get("model", {}).get("name") or config.engine.model)
        return _write(config, cset, pools, template, reference, risk_scores, engine, identity, model_name, results_dir)


def _write(
    config: AllocationConfig,
    cset: CandidateSet,
    pools: pd.DataFrame,
    template: Any,
    reference: str,
    risk_scores: np.ndarray | None,
    engine: Engine | None,
    identity: dict[str, Any],
    model_name: str,
    results_dir: str | Path,
) -> AllocationRun:
    """Score the pools into the run's folder (through the shared lifecycle) and analyse them."""
    key = fingerprint(
        {
            "config": config.to_dict(),
            "template": template.to_dict(),
            "engine": identity,
            "candidates": cset.provenance,
            "version": PROMPT_VERSION,
        }
    )
    final = run_path(
        results_dir,
        subject=f"allocation-{config.task}-{cset.subtask}",
        model=Path(model_name).name or model_name,
        variant=config.mode + ("" if config.chat or config.task == "acs" else "-base"),
        fingerprint=key,
    )
    manifest = Manifest(
        part="allocation",
        fingerprint=key,
        config=config.to_dict(),
        engine=identity,
        data={**cset.provenance, "task": cset.task, "subtask": cset.subtask, "n_candidates": len(cset.frame)},
    )
    with open_run(final, manifest, config={**config.to_dict(), "reference_used": reference}) as folder:
        write_parquet(folder / "candidates.parquet", cset.frame)
        start = time.perf_counter()
        scored, answers, extra = _score(config, cset, pools, template, engine, risk_scores)
        extra["scoring_seconds"] = time.perf_counter() - start
        if engine is not None:  # what the answers cost, as every part records it (an acs run asks no model)
            extra.update(run_accounting(engine))
            note = oom_note(extra.get("backend_stats") or {})
            if note:
                extra["notes"] = [note]
        weighted = ["weight"] if "weight" in cset.frame else []  # survey candidates: population-weighted rates
        info = cset.frame.set_index("candidate_id")[["group", "qualified", *weighted]]
        scored = scored.join(info, on="candidate_id")[
            ["pool", "candidate_id", "group", "qualified", "score", *weighted]
        ]
        write_parquet(folder / "scores.parquet", scored)
        if answers is not None:
            write_parquet(folder / "answers.parquet", answers)
        write_json(
            folder / "scoring.json", {**extra, "reference": reference, "model": model_name, "subtask": cset.subtask}
        )
        metrics = analyse(folder)
    return AllocationRun(final, metrics)


def _score(
    config: AllocationConfig,
    cset: Any,
    pools: pd.DataFrame,
    template: Any,
    engine: Engine | None,
    risk_scores: np.ndarray | None,
) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
    """Per-appearance scores, what the model said, and counts of the mode."""
    if risk_scores is not None:
        per = pd.DataFrame({"candidate_id": cset.frame["candidate_id"].to_numpy(), "score": risk_scores})
        return pools.merge(per, on="candidate_id", how="left"), None, {}
    assert engine is not None
    if config.mode == "pointwise":
        per = pointwise_scores(engine, cset, template, chat=config.chat)
        nan = int(per["score"].isna().sum())
        return (
            pools.merge(per[["candidate_id", "score"]], on="candidate_id", how="left"),
            per,
            {"unscored_candidates": nan},
        )
    if config.mode == "pairwise":
        scores, pairs, shares = pairwise_scores(
            engine,
            cset,
            pools,
            template,
            chat=config.chat,
            answer=config.pairwise_answer,
            points=config.pairwise_points,
        )
        read = {"pairwise_answer": config.pairwise_answer, "pairwise_points": config.pairwise_points}
        return scores, pairs, {"pairwise": shares, **read}
    scores, answers = listwise_scores(engine, cset, pools, template, chat=config.chat)
    return scores[["pool", "candidate_id", "score"]], answers, {"unparseable_pools": int((~answers["parsed"]).sum())}
