"""The part registry: the one place that knows which parts exist and how to reach them.

folkscope's parts (risk scores, numeric calibration, and the ones to come)
never import each other, and the CLI, the report and the runs layer reach a
part only through this table. An entry is plain data: the part's name, its
commands and the tables its run folders hold (what another part may read, see
:func:`folkscope.runs.read_table`); its entry points are found by the floor
plan and imported only when used. So ``import folkscope.registry`` loads no
part, and nothing here can form an import cycle.

How a new part plugs in: every part's package has the same floor plan
(:data:`FLOOR_PLAN`: ``config``, ``run``, ``analysis``, ``caveats``,
``report``, ``board``, ``compare``, ``summary``, with the same entry names
where the rest of folkscope calls them: ``rescore``, ``run_caveats``,
``leaderboard``, ``compare``, ``print_summary``), writes its folders through
the shared lifecycle (:func:`folkscope.runs.open_run`), and has a command
module ``folkscope/cli/<part>_cmd.py`` offering ``folkscope <part> run`` and
``list`` with the shared flags. Copy an existing part's layout, then add one :class:`Part`
entry below: the rest of folkscope finds the entry points by the floor
plan (:meth:`Part.load`). ``tests/test_architecture.py`` checks all of it.

Examples
--------
>>> part("risk").commands
('risk', 'run')
>>> part("numeric").load("rescore").__module__
'folkscope.numeric.analysis'
>>> [p.name for p in PARTS.values()]
['risk', 'numeric', 'allocation', 'epidemiology']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from folkscope import errors

__all__ = ["ENTRIES", "FLOOR_PLAN", "PARTS", "Part", "TableSpec", "part"]

#: the modules every part's package has, and the names each must define (a fifth part copies this layout)
FLOOR_PLAN: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "config": (),  # the part's config dataclass (with its EngineConfig), checked when built, hashed into the folder name
        "run": (),  # run_<part>(config, results_dir, *, engine=None) through runs.open_run (risk: folktexts' Benchmark)
        "analysis": ("rescore",),  # the run folder's tables -> metrics, caveats and page, without a model
        "caveats": ("run_caveats",),  # metrics -> the run's caveats (runs.Caveat)
        "report": (),  # the run's page
        "board": ("leaderboard",),  # the part's leaderboard tables and figures
        "compare": ("compare",),  # two run folders, paired unit by unit (B minus A)
        "summary": ("print_summary",),  # the console summary: the answer first
    }
)
#: what the rest of folkscope calls a part for -> (module of the floor plan, name in it)
ENTRIES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "rescore": ("analysis", "rescore"),
        "summarise": ("summary", "print_summary"),
        "leaderboard": ("board", "leaderboard"),
        "compare": ("compare", "compare"),
    }
)


@dataclass(frozen=True)
class TableSpec:
    """A file of a run folder that other parts and tools may read, and what it holds."""

    file: str
    about: str
    optional: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "about": self.about, "optional": self.optional}


@dataclass(frozen=True)
class Part:
    """One part of folkscope, as the rest of the package sees it.

    Attributes
    ----------
    name : str
        Written into every run folder's ``manifest.json`` (``part``).
    title : str
        How pages and listings name it.
    commands : tuple of str
        Its ``folkscope`` sub-commands: ``folkscope <first> run`` runs it
        (risk's ``run`` is folktexts' spelling of ``folkscope risk run``).
    legacy_keys : tuple of str
        Keys of ``config.json`` that identify this part's run folders written
        before manifests existed, so those stay re-scorable.
    tables : mapping of str to TableSpec
        The folder's declared tables.
    """

    name: str
    title: str
    commands: tuple[str, ...]
    legacy_keys: tuple[str, ...]
    tables: Mapping[str, TableSpec] = field(default_factory=dict)

    def load(self, entry: str) -> Callable[..., Any]:
        """Import and return one of the entry points of :data:`ENTRIES` (``"rescore"``, ``"summarise"``,
        ``"leaderboard"`` or ``"compare"``), found by the floor plan: ``folkscope.<part>.<module>:<name>``.

        ``rescore`` takes a run folder and returns its metrics, recomputed
        without a model; ``summarise`` takes a run folder and its metrics and
        prints the console summary; ``leaderboard`` takes the part's run
        folders (and the site folder and whether to draw) and returns a
        :class:`folkscope.report.board.PartBoard`; ``compare`` takes two run
        folders and :class:`folkscope.report.paired.Options` and returns a
        :class:`folkscope.report.paired.PartComparison`.
        """
        module, name = ENTRIES[entry]
        return getattr(importlib.import_module(f"folkscope.{self.name}.{module}"), name)  # type: ignore[no-any-return]


#: every part, by name, in the order the CLI and the leaderboard list them
PARTS: Mapping[str, Part] = MappingProxyType(
    {
        "risk": Part(
            name="risk",
            title="Risk scores (folktexts)",
            commands=("risk", "run"),
            legacy_keys=("benchmark_config", "prompt_config"),
            tables={
                "scores": TableSpec(
                    "scores.parquet",
                    "one row per test row: row_id, split, label, weight, the task's group columns, risk_score, "
                    "per-ordering scores, baseline_* and recalibrated_* scores",
                ),
                "metrics": TableSpec(
                    "metrics.json", "overall, per-group and baseline metrics with intervals; diagnostics"
                ),
                "feature_importance": TableSpec(
                    "feature_importance.csv",
                    "permutation importance per feature (with --feature-importance)",
                    optional=True,
                ),
            },
        ),
        "numeric": Part(
            name="numeric",
            title="Numeric calibration",
            commands=("numeric",),
            legacy_keys=("dataset", "n_numbers", "scales"),
            tables={
                "problems": TableSpec(
                    "problems.parquet",
                    "one row per problem: problem_id, dataset, template_id, scale, cell, pair, options, counts, text",
                ),
                "probabilities": TableSpec(
                    "probabilities.parquet",
                    "one row per (problem, option): position, option, count, ideal_prob, model_prob, n_variants, min_tokens",
                ),
                "problem_metrics": TableSpec("problem_metrics.parquet", "PM, WD and RE per problem"),
                "cells": TableSpec("cells.parquet", "behaviour classification per grid cell"),
                "metrics": TableSpec("metrics.json", "summaries with intervals, behaviour shares, order bias"),
                "pennies": TableSpec(
                    "pennies.parquet", "matching-pennies rounds (with pennies_games > 0)", optional=True
                ),
            },
        ),
        "allocation": Part(
            name="allocation",
            title="Allocational harms (RABBI)",
            commands=("allocation",),
            legacy_keys=(),
            tables={
                "candidates": TableSpec(
                    "candidates.parquet", "one row per candidate: candidate_id, group, qualified, name, text"
                ),
                "scores": TableSpec(
                    "scores.parquet", "one row per appearance in a pool: pool, candidate_id, group, qualified, score"
                ),
                "answers": TableSpec(
                    "answers.parquet",
                    "what the model said: label probabilities, pairwise answers or listwise responses",
                    optional=True,
                ),
                "selection": TableSpec(
                    "selection.parquet", "per (k, group): selection rate, DP gap, impact ratio, qualified rate, EO gap"
                ),
                "bias": TableSpec(
                    "bias.parquet", "per group vs the reference: RABBI with p-value and interval, delta, JSD, EMD"
                ),
                "metrics": TableSpec("metrics.json", "the run's headline numbers, selection and bias records"),
            },
        ),
        "epidemiology": Part(
            name="epidemiology",
            title="Epidemiology (P(Y | X) of surveys)",
            commands=("epidemiology",),
            legacy_keys=(),
            tables={
                "truth": TableSpec(
                    "truth.parquet",
                    "per task, condition and answer: the survey's share, the condition's share and respondents",
                ),
                "model": TableSpec("model.parquet", "per task, condition and answer: the model's elicited share"),
                "persons": TableSpec(
                    "persons.parquet",
                    "high-dimensional tasks: each person's cell, cross-fitted truth and weight",
                    optional=True,
                ),
                "bins": TableSpec(
                    "bins.parquet",
                    "likelihood mode: every question asked, the probability bin chosen, its probability and the value read",
                    optional=True,
                ),
                "scores": TableSpec(
                    "scores.parquet",
                    "per task: distance, score 0-100 with interval, worst/best/mean-baseline distances",
                ),
                "metrics": TableSpec("metrics.json", "the run's mean score and per-task scores"),
            },
        ),
    }
)


def part(name: str) -> Part:
    """The registered part called ``name``.

    Raises
    ------
    ConfigError
        No such part; the message lists the known ones.
    """
    try:
        return PARTS[name]
    except KeyError:
        raise errors.ConfigError(
            f"unknown part {name!r}; known parts: {', '.join(PARTS)}", parameter="part", value=name
        ) from None
