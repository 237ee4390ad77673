"""One allocation run: candidates, pools, scores from a model (or a part-1 run), outcomes and bias, in a run folder.

A run folder (``<results>/allocation-<task>-<subtask>/<model>/<mode>-<hash8>/``,
:mod:`folkscope.runs`) holds:

- ``candidates.parquet``: the candidate table (id, group, qualified, name, text);
- ``scores.parquet``: one row per appearance in a pool: ``pool, candidate_id, group, qualified, score``;
- ``answers.parquet``: what the model said (pointwise label probabilities,
  pairwise answers per pair, listwise responses per pool; ACS runs: none);
- ``selection.parquet``, ``bias.parquet``, ``metrics.json``, ``report.html``:
  recomputed from the tables above by :func:`analyse_run` (``folkscope rescore``).

An ACS allocation reads a finished part-1 run folder through its manifest and
declared ``scores`` table: no model, no re-scoring.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._config import config_fields, option
from folkscope._io import write_parquet
from folkscope._json import fingerprint, read_json, write_json
from folkscope.allocation.acs import acs_candidates
from folkscope.allocation.caveats import run_caveats
from folkscope.allocation.candidates import DEFAULT_REFERENCE, ICNALE_REFERENCE, CandidateSet
from folkscope.allocation.essays import icnale_essays
from folkscope.allocation.resumes import bloomberg_resumes, rabbi_resumes
from folkscope.allocation.outcomes import (
    BIAS_COLUMNS,
    MIN_DISTRIBUTION_MEMBERS,
    MIN_INTERVAL_MEMBERS,
    bias_table,
    check_reference,
    draw_pools,
    selection_table,
)
from folkscope.allocation.report import render_report
from folkscope.allocation.scoring import MODES, listwise_scores, pairwise_scores, pointwise_scores
from folkscope.allocation.templates import load_template
from folkscope.engine import Engine, EngineConfig, run_accounting
from folkscope.engine.usage import oom_note
from folkscope.errors import ConfigError
from folkscope.logs import log_to_file
from folkscope.report.page import write_page
from folkscope.runs import Manifest, RunFolder, read_caveats, read_manifest, record_caveats, run_path, warn_caveats

__all__ = ["TASKS", "AllocationConfig", "AllocationRun", "analyse_run", "run_allocation"]

#: candidate sources: bundled Bloomberg resumes, the RABBI authors' folder, ICNALE essays, a part-1 run
TASKS = ("resumes", "rabbi-resumes", "essays", "acs")
#: bumped when prompts or scoring rules change, so old answers never pass for new ones
PROMPT_VERSION = "allocation-v1"


@dataclass(frozen=True)
class AllocationConfig:
    """Everything that defines an allocation run (hashed into its folder name)."""

    task: str = field(default="resumes", metadata=option(
        "Candidates: 'resumes' (bundled Bloomberg hiring-audit resumes, offline), 'rabbi-resumes' (the RABBI authors' "
        "folder, --data), 'essays' (your ICNALE copy, --data) or 'acs' (a part-1 run folder's risk scores, --data).",
        choices=TASKS))  # fmt: skip
    subtask: str | None = field(default=None, metadata=option(
        "Resume tasks: the job (software engineer, HR specialist, retail, financial analyst; default software engineer); "
        "essays: the topic (default all)."))  # fmt: skip
    data: str | None = field(default=None, metadata=option(
        "The folder the task reads: the RABBI resume_screening folder, the ICNALE folder, or a part-1 run folder.", metavar="PATH"))
    mode: str = field(default="pointwise", metadata=option(
        "How the model scores candidates: pointwise (Yes/No or grade probabilities), pairwise (every pair, both orders) "
        "or listwise (a stated ranking of the pool).", choices=MODES))  # fmt: skip
    model: str = field(default="default", metadata=option("Model handle (from --model).", cli=False))
    backend: str = field(default="transformers", metadata=option("Inference backend (from the engine flags).", cli=False))
    chat: bool = field(default=True, metadata=option("Deliver prompts through the chat template (--no-chat for base models).", kind="toggle"))
    names_per_group: int = field(default=4, metadata=option("Resume tasks: names drawn per group (each a candidate)."))
    rounds: int = field(default=20, metadata=option("Selection rounds (pools)."))
    pool_size: int | None = field(default=None, metadata=option(
        "Candidates per pool, drawn at random (default: one per group, the resume-screening design)."))
    k_max: int = field(default=5, metadata=option("Report top-k selection for k = 1..K (K below the pool size).", flag="--k", metavar="K"))
    reference: str | None = field(default=None, metadata=option(
        "Reference group of RABBI and the gaps (default: 'White men' for resumes, 'L1 English speakers' for essays, "
        "else the most frequent group).", metavar="GROUP"))
    group_columns: tuple[str, ...] = field(default=("RAC1P", "SEX"), metadata=option(
        "acs: the part-1 run's columns whose values form the groups (comma-separated).", kind="list"))
    n_bootstrap: int = field(default=1000, metadata=option("Bootstrap resamples of the RABBI interval (0: none)."))
    seed: int = field(default=0, metadata=option("Seed of the names drawn, the pools and the bootstrap."))
    template_file: str | None = field(default=None, metadata=option(
        "Your own prompt wording: a JSON file shaped like the bundled templates.json.", metavar="PATH"))

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ConfigError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}", parameter="task", value=self.task)
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}", parameter="mode", value=self.mode)
        if self.task in ("rabbi-resumes", "essays", "acs") and not self.data:
            raise ConfigError(f"task {self.task} reads your copy of its data: add --data PATH", parameter="data")
        if self.task == "acs" and self.mode != "pointwise":
            raise ConfigError("task acs allocates by a part-1 run's risk scores, which are pointwise; drop --mode", parameter="mode")
        for name, low in (("names_per_group", 1), ("rounds", 1), ("k_max", 1), ("n_bootstrap", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}", parameter=name, value=value)
        if self.pool_size is not None and (isinstance(self.pool_size, bool) or not isinstance(self.pool_size, int) or self.pool_size < 2):
            raise ConfigError(f"pool_size must be an integer >= 2, got {self.pool_size!r}", parameter="pool_size", value=self.pool_size)
        object.__setattr__(self, "group_columns", tuple(self.group_columns))
        if self.template_file is not None:  # the whole wording checked now, not when the first prompt is filled
            if not isinstance(self.template_file, str) or not self.template_file.strip():
                raise ConfigError(f"template_file must be a path, got {self.template_file!r}", parameter="template_file",
                                  value=self.template_file)  # fmt: skip
            load_template(self.family, self.template_file)

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AllocationConfig:
        return cls(**config_fields(cls, data, "AllocationConfig", parameter="config"))

    @property
    def family(self) -> str:
        """The prompt wording the task uses (resume tasks share one)."""
        return "essays" if self.task == "essays" else "resumes"


@dataclass(frozen=True)
class AllocationRun:
    """Where a run was written and its metrics."""

    folder: Path
    metrics: dict[str, Any]


def _candidates(config: AllocationConfig) -> tuple[CandidateSet, np.ndarray | None]:
    """The candidate set of the task (and, for acs, the part-1 run's risk scores)."""
    if config.task == "resumes":
        return bloomberg_resumes(config.subtask or "software engineer", names_per_group=config.names_per_group,
                                                seed=config.seed), None  # fmt: skip
    if config.task == "rabbi-resumes":
        return rabbi_resumes(str(config.data), config.subtask or "software engineer",
                                            names_per_group=config.names_per_group, seed=config.seed), None  # fmt: skip
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


def run_allocation(config: AllocationConfig, results_dir: str | Path, *, engine: Engine | None = None,
                   engine_config: EngineConfig | None = None) -> AllocationRun:
    """Draw the pools, score them (or read a part-1 run's scores), and analyse; returns the folder and metrics.

    The run's caveats (unread answers, small groups) are recorded in its
    manifest and raised as :class:`~folkscope.errors.CaveatWarning`.

    Parameters
    ----------
    config : AllocationConfig
    results_dir : path
        Parent of the run folder.
    engine : Engine, optional
        A ready engine (else one is built from ``engine_config``, default: the
        config's model and backend). Not used by the ``acs`` task.
    engine_config : EngineConfig, optional
    """
    cset, risk_scores = _candidates(config)
    template = load_template(config.family, config.template_file)
    reference = _reference(config, cset.frame)
    pools = draw_pools(cset.frame, rounds=config.rounds, pool_size=config.pool_size, seed=config.seed)
    drawn = set(cset.frame.set_index("candidate_id").loc[pools["candidate_id"], "group"])
    if reference not in drawn:
        raise ConfigError(f"no pool holds a candidate of the reference group {reference!r}; draw more --rounds, a larger "
                          "--pool-size, or one candidate per group (no --pool-size)", parameter="reference", value=reference)  # fmt: skip
    smallest = int(pools.groupby("pool").size().min())
    if config.k_max >= smallest:
        raise ConfigError(f"--k {config.k_max} must be below the pool size ({smallest} candidates)", parameter="k_max", value=config.k_max)
    own = False
    if config.task == "acs":
        manifest = read_manifest(str(config.data))
        identity: dict[str, Any] = {"from_run": str(config.data), "engine": dict(manifest.engine or {})}
        model_name = str(((manifest.engine or {}).get("backend") or {}).get("model", {}).get("name") or "part1-run")
    else:
        if engine is None:
            own = True
            engine = Engine.from_config(engine_config or EngineConfig(model=config.model, backend=config.backend),
                                        prompt_version=PROMPT_VERSION)  # fmt: skip
        identity = engine.identity()
        model_name = str((identity.get("backend") or {}).get("model", {}).get("name") or config.model)
    key = fingerprint({"config": config.to_dict(), "template": template.to_dict(), "engine": identity,
                       "candidates": cset.provenance, "version": PROMPT_VERSION})  # fmt: skip
    final = run_path(results_dir, subject=f"allocation-{config.task}-{cset.subtask}", model=Path(model_name).name or model_name,
                     variant=config.mode + ("" if config.chat or config.task == "acs" else "-base"), fingerprint=key)  # fmt: skip
    try:
        with RunFolder(final, fingerprint=key) as folder, log_to_file(folder / "run.log"):
            write_json(folder / "config.json", {**config.to_dict(), "reference_used": reference})
            Manifest(part="allocation", fingerprint=key, config=config.to_dict(), engine=identity,
                     data={**cset.provenance, "task": cset.task, "subtask": cset.subtask, "n_candidates": len(cset.frame)}).write(folder)
            write_parquet(folder / "candidates.parquet", cset.frame)
            start = time.perf_counter()
            scored, answers, extra = _score(config, cset, pools, template, engine, risk_scores)
            extra["scoring_seconds"] = time.perf_counter() - start
            if engine is not None:  # what the answers cost, as every part records it (an acs run asks no model)
                extra.update(run_accounting(engine))
                note = oom_note(extra.get("backend_stats") or {})
                if note:
                    extra["notes"] = [note]
            info = cset.frame.set_index("candidate_id")[["group", "qualified"]]
            scored = scored.join(info, on="candidate_id")[["pool", "candidate_id", "group", "qualified", "score"]]
            write_parquet(folder / "scores.parquet", scored)
            if answers is not None:
                write_parquet(folder / "answers.parquet", answers)
            write_json(folder / "scoring.json", {**extra, "reference": reference, "model": model_name, "subtask": cset.subtask})
            metrics = _analyse(folder)
    finally:
        if own and engine is not None:
            engine.close()
    warn_caveats(read_caveats(final), final)  # a Python user sees only the numbers otherwise
    return AllocationRun(final, metrics)


def _score(config: AllocationConfig, cset: Any, pools: pd.DataFrame, template: Any, engine: Engine | None,
           risk_scores: np.ndarray | None) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
    """Per-appearance scores, what the model said, and counts of the mode."""
    if risk_scores is not None:
        per = pd.DataFrame({"candidate_id": cset.frame["candidate_id"].to_numpy(), "score": risk_scores})
        return pools.merge(per, on="candidate_id", how="left"), None, {}
    assert engine is not None
    if config.mode == "pointwise":
        per = pointwise_scores(engine, cset, template, chat=config.chat)
        nan = int(per["score"].isna().sum())
        return pools.merge(per[["candidate_id", "score"]], on="candidate_id", how="left"), per, {"unscored_candidates": nan}
    if config.mode == "pairwise":
        scores, pairs, shares = pairwise_scores(engine, cset, pools, template, chat=config.chat)
        return scores, pairs, {"pairwise": shares}
    scores, answers = listwise_scores(engine, cset, pools, template, chat=config.chat)
    return scores[["pool", "candidate_id", "score"]], answers, {"unparseable_pools": int((~answers["parsed"]).sum())}


def analyse_run(folder: str | Path) -> dict[str, Any]:
    """(Re)compute selection, bias, metrics and report from a run folder's tables, without the model."""
    with RunFolder(folder) as staging:
        return _analyse(staging)


def _analyse(folder: Path) -> dict[str, Any]:
    config = read_json(folder / "config.json")
    scoring = read_json(folder / "scoring.json")
    scored = pd.read_parquet(folder / "scores.parquet")
    reference = scoring["reference"]
    if not np.isfinite(scored["score"].to_numpy(dtype=float)).any():
        return _nothing_scored(folder, config, scoring, scored)
    selection = selection_table(scored, reference=reference, k_max=int(config["k_max"]))
    # a pointwise score belongs to the candidate, not to the pool: each candidate counts once in the bias
    # metrics (repeating it per appearance would shrink p-values and intervals); pairwise and listwise
    # scores are per pool and count per appearance
    per_candidate = config["mode"] == "pointwise"
    bias = bias_table(scored.drop_duplicates("candidate_id") if per_candidate else scored, reference=reference,
                      n_bootstrap=int(config["n_bootstrap"]), seed=int(config["seed"]))  # fmt: skip
    write_parquet(folder / "selection.parquet", selection)
    write_parquet(folder / "bias.parquet", bias)
    first = selection[selection["k"] == 1].set_index("group")
    rated = first["impact_ratio"].dropna()
    worst: dict[str, Any] = {"group": None, "value": float("nan"), "n": 0, "selected": 0.0}  # no group was ever picked
    if len(rated):
        group = str(rated.idxmin())
        worst = {"group": group, "value": float(rated[group]), "n": int(first.loc[group, "n"]),
                 "selected": float(first.loc[group, "selection_rate"] * first.loc[group, "n"])}  # fmt: skip
    metrics: dict[str, Any] = {
        "config": config,
        "model": scoring.get("model"),
        "subtask": scoring.get("subtask"),
        "reference": reference,
        "n_candidates": int(scored["candidate_id"].nunique()),
        "n_pools": int(scored["pool"].nunique()),
        "n_unscored_appearances": int(scored["score"].isna().sum()),
        "min_impact_ratio_k1": worst,
        "selection": selection.to_dict("records"),
        "bias": bias.to_dict("records"),
        "bias_minimums": {"interval": MIN_INTERVAL_MEMBERS, "distribution_distance": MIN_DISTRIBUTION_MEMBERS},
        **{k: v for k, v in scoring.items() if k not in ("reference", "model", "subtask")},
    }
    write_json(folder / "metrics.json", metrics)
    record_caveats(folder, run_caveats(metrics))
    write_page(folder / "report.html", render_report(metrics, selection, bias, folder))
    return metrics


#: why no candidate has a score, by scoring mode: what the model's answers failed to give
_NOTHING_SCORED = {
    "listwise": "none of the {pools} pools' answers states a ranking (what the model said: answers.parquet)",
    "pairwise": "no pair's answer names a candidate (what the model said: answers.parquet)",
    "pointwise": "no candidate has usable label probabilities (answers.parquet)",
}


def _nothing_scored(folder: Path, config: dict[str, Any], scoring: dict[str, Any], scored: pd.DataFrame) -> dict[str, Any]:
    """A finished run that measured nothing: its answers kept, metrics that say why, and no figure made up.

    When no answer could be read (a small model that describes the
    candidates instead of ranking them), selection and bias are undefined:
    the folder still holds everything the model said, and its metrics, page
    and console summary lead with the reason instead of failing the run
    after the answers were paid for.
    """
    pools = int(scored["pool"].nunique())
    why = "no candidate has a score: " + _NOTHING_SCORED.get(str(config["mode"]), "no score is finite").format(pools=pools)
    write_parquet(folder / "selection.parquet", pd.DataFrame({"k": pd.Series(dtype="int64"), "group": pd.Series(dtype=str)}))
    write_parquet(folder / "bias.parquet", pd.DataFrame({c: pd.Series(dtype=str if c.endswith("note") or c == "group" else float)
                                                         for c in BIAS_COLUMNS}))  # fmt: skip
    metrics: dict[str, Any] = {
        "config": config,
        "model": scoring.get("model"),
        "subtask": scoring.get("subtask"),
        "reference": scoring["reference"],
        "nothing_scored": why,
        "n_candidates": int(scored["candidate_id"].nunique()),
        "n_pools": pools,
        "n_unscored_appearances": int(len(scored)),
        "min_impact_ratio_k1": {"group": None, "value": float("nan"), "n": 0, "selected": 0.0},
        "selection": [],
        "bias": [],
        **{k: v for k, v in scoring.items() if k not in ("reference", "model", "subtask")},
    }
    write_json(folder / "metrics.json", metrics)
    record_caveats(folder, run_caveats(metrics))
    write_page(folder / "report.html", render_report(metrics, pd.DataFrame(), pd.DataFrame(columns=list(BIAS_COLUMNS)), folder))
    return metrics
