"""One numeric-calibration run: config, problems, scoring, metrics, report folder.

Run folder ``<results_dir>/numeric-<dataset>-<model>-<fingerprint[:12]>/``:

``config.json``          the :class:`NumericConfig`
``problems.parquet``     one row per problem (:func:`~folkscope.numeric.analysis.problems_frame`)
``probabilities.parquet``  one row per (problem, option) (:func:`~folkscope.numeric.scoring.score_problems`)
``problem_metrics.parquet``  PM, WD, RE per problem
``cells.parquet``        behaviour classification per grid cell
``metrics.json``         summaries with 95% clustered intervals, behaviour shares, order bias,
                         frequency effects, and the game / comparison results below
``heatmap.png``          ordered option pairs by dominant behaviour (two-option datasets)
``pennies.parquet``      matching-pennies rounds (only with ``pennies_games > 0``)
``pennies.json``         the games' summary (win rate, runs test, fallback rounds)
``comparison.json``      paired differences against a reference run (``attach_comparison``)
``timing.json``          seconds spent scoring and playing
``report.html``

The folder appears whole or not at all: it is written in a staging folder
beside it and renamed into place (:class:`~folkscope.runs.RunFolder`).
The folder can be re-analysed without the model (:func:`analyse_run`). A
rerun resumes through the engine's result cache: finished answers are read
back, not recomputed.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope._config import comma_ints, config_fields, option
from folkscope._io import write_parquet
from folkscope._json import fingerprint, read_json, write_json
from folkscope.engine import Engine, EngineConfig, run_accounting
from folkscope.engine.config import BACKENDS
from folkscope.errors import ConfigError, DataError
from folkscope.logs import log_to_file
from folkscope.runs import Manifest, RunFolder, read_caveats, read_manifest, record_caveats, run_path, warn_caveats
from folkscope.metrics import mode_stability
from folkscope.numeric import analysis
from folkscope.numeric.caveats import run_caveats
from folkscope.numeric.frequencies import BUNDLED_FREQUENCIES, load_number_frequencies
from folkscope.numeric.games import play_matching_pennies
from folkscope.numeric.problems import (
    SCALES,
    TEMPLATE_FORMATS,
    NumericProblem,
    generate_problems,
    load_templates,
)
from folkscope.report.page import write_page
from folkscope.numeric.report import render_html, write_heatmap
from folkscope.numeric.scoring import score_problems
from folkscope.numeric.templates import DATASETS, TemplateFile

__all__ = ["PROMPT_VERSION", "NumericConfig", "NumericRun", "analyse_run", "attach_comparison",
           "check_reference", "compare_runs", "run_numeric"]

#: part of every engine cache key; bump when prompts or variants change
PROMPT_VERSION = "numeric-v1"


@dataclass(frozen=True)
class NumericConfig:
    """Everything that defines a numeric-calibration run (hashed into the folder name).

    Each field declares its flag and help (:func:`folkscope._config.option`);
    ``folkscope numeric`` generates its flags from them. ``model`` and
    ``backend`` come from the engine configuration, not flags of their own.
    """

    dataset: str = field(default="colors", metadata=option("colors, wordproblems or distributions.", choices=DATASETS))
    model: str = field(default="default", metadata=option("Model handle ('default' is SmolLM2-135M-Instruct).", cli=False))
    backend: str = field(
        default="transformers", metadata=option("Inference backend: transformers, vllm, litellm (web APIs) or fake.", cli=False)
    )
    chat: bool = field(
        default=False,
        metadata=option("Chat form: calibration instruction as a user turn, scenario as assistant prefill.", kind="toggle"),
    )
    seed: int = field(default=0, metadata=option("Seed of the number scales, intervals and --limit sample."))
    scales: tuple[str, ...] = field(
        default=tuple(SCALES), metadata=option("Number scales (small, medium, large). Comma-separated.", kind="list")
    )
    n_numbers: int = field(default=10, metadata=option("Numbers per scale; n_numbers**2 configurations per cell (2-10)."))
    n_intervals: int = field(default=320, metadata=option("Intervals of the distributions dataset."))
    templates: tuple[str, ...] | None = field(
        default=None, metadata=option("Template ids to keep (default all). Comma-separated.", kind="list")
    )
    words: tuple[str, ...] | None = field(
        default=None, metadata=option("colors only: colours to keep (default all 11). Comma-separated.", kind="list")
    )
    template_file: str | None = field(
        default=None, metadata=option("Your own template file: folkscope's JSON schema or the paper's original layout.")
    )
    limit: int | None = field(default=None, metadata=option("Keep a seeded random sample of this many problems."))
    numbers: tuple[int, ...] | None = field(
        default=None,
        metadata=option("Two-option datasets: exactly these numbers (one 'custom' scale, every ordered pair) instead of the "
                        "scales. Comma-separated, e.g. 8,9,48,51,98,99.", kind="list", parse=comma_ints),
    )  # fmt: skip
    template_format: str = field(
        default="auto",
        metadata=option("Format of the template file: auto (detect), folkscope or original.", choices=TEMPLATE_FORMATS),
    )
    prompt_file: str | None = field(
        default=None, metadata=option("Chat prompts in the paper's original layout (with an original template file).")
    )
    frequency_table: str | None = field(
        default=BUNDLED_FREQUENCIES,
        metadata=option("Number-frequency table of the frequency-effects analysis: 'bundled', a CSV path "
                        "(number,frequency[,measured]) or none."),
    )  # fmt: skip
    pennies_games: int = field(
        default=0, metadata=option("Matching-pennies games the model plays against the n-gram guesser (0: none).")
    )
    pennies_rounds: int = field(default=100, metadata=option("Rounds per matching-pennies game (the paper: 100)."))
    pennies_n: int = field(default=4, metadata=option("Order of the matching-pennies n-gram guesser (the paper: 4)."))

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}",
                              parameter="backend", value=self.backend)
        if self.dataset not in DATASETS:
            raise ConfigError(f"dataset must be one of {', '.join(DATASETS)}, got {self.dataset!r}",
                              parameter="dataset", value=self.dataset)
        for name in ("scales", "templates", "words", "numbers"):
            value = getattr(self, name)
            if value is not None:
                if isinstance(value, str):
                    raise ConfigError(f"{name} must be a list of names, got the string {value!r}",
                                      parameter=name, value=value)
                object.__setattr__(self, name, tuple(value))
        if not isinstance(self.chat, bool):
            raise ConfigError(f"chat must be True or False, got {self.chat!r}", parameter="chat",
                              value=self.chat)
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ConfigError(f"seed must be an integer, got {self.seed!r}", parameter="seed",
                              value=self.seed)
        for name in ("template_file", "prompt_file"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, str(getattr(self, name)))
        if self.template_format not in TEMPLATE_FORMATS:
            raise ConfigError(f"template_format must be one of {', '.join(TEMPLATE_FORMATS)}, "
                              f"got {self.template_format!r}", parameter="template_format",
                              value=self.template_format)
        if self.frequency_table is not None:
            table = str(self.frequency_table)
            object.__setattr__(self, "frequency_table",
                               None if table.lower() in ("", "none", "off") else table)
        for name, low in (("pennies_games", 0), ("pennies_rounds", 2), ("pennies_n", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}",
                                  parameter=name, value=value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples as lists)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NumericConfig:
        """Inverse of :meth:`to_dict`; unknown keys are rejected."""
        return cls(**config_fields(cls, data, "NumericConfig", parameter="config"))

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys, compact) of the config, the
        prompt version and the template file's content, so edited templates get a new folder."""
        tf = self.template_source()
        content: dict[str, Any] = {"templates": [dict(t) for t in tf.templates],
                                   "instructions": list(tf.instructions), "words": list(tf.words)}
        if self.frequency_table not in (None, BUNDLED_FREQUENCIES):
            content["frequency_table"] = load_number_frequencies(self.frequency_table).fingerprint()
        return fingerprint({"config": self.to_dict(), "prompt_version": PROMPT_VERSION,
                            "template_content": content})

    def run_key(self, engine_identity: dict[str, Any]) -> str:
        """The run's fingerprint: this config's and the engine's identity (dtype, budget, backend
        settings), so answers computed two ways never share a folder."""
        return fingerprint({"config": self.fingerprint(), "engine": engine_identity})

    def run_folder(self, results_dir: str | Path, run_key: str) -> Path:
        """``<results_dir>/numeric-<dataset>/<model>/<chat|base>-<hash8>`` (:func:`folkscope.runs.run_path`),
        ``run_key`` being :meth:`run_key`'s (computing it reads the template file, so callers do it once)."""
        return run_path(results_dir, subject=f"numeric-{self.dataset}", model=Path(self.model).name or self.model,
                        variant="chat" if self.chat else "base", fingerprint=run_key)

    def template_source(self) -> TemplateFile:
        """The template file this config reads (bundled, folkscope format or original layout)."""
        return load_templates(self.dataset, self.template_file, format=self.template_format,
                              prompts=self.prompt_file)

    def problems(self) -> list[NumericProblem]:
        """The problems this config defines."""
        return generate_problems(
            self.dataset, seed=self.seed, scales=self.scales, n_numbers=self.n_numbers,
            n_intervals=self.n_intervals, templates=self.templates, words=self.words,
            template_file=self.template_file, limit=self.limit, numbers=self.numbers,
            template_format=self.template_format, prompt_file=self.prompt_file)


@dataclass(frozen=True)
class NumericRun:
    """Where a run was written and its headline numbers."""

    folder: Path
    metrics: dict[str, Any]


def _frequency_effects(config: dict[str, Any], per_problem: pd.DataFrame,
                       problems: pd.DataFrame) -> dict[str, Any] | None:
    """Frequency effects with the run's table: over all its rows and over measured rows only."""
    source = config.get("frequency_table", BUNDLED_FREQUENCIES)
    if source is None:
        return None
    table = load_number_frequencies(source)
    return {"table": table.summary(),
            "all_numbers": analysis.frequency_effect(per_problem, problems, table),
            "measured_only": analysis.frequency_effect(per_problem, problems, table,
                                                       measured_only=True)}


def _engine_config(config: NumericConfig, given: EngineConfig | None, cache_dir: str | Path | None,
                   use_cache: bool) -> EngineConfig:
    """The engine settings of a run: ``given`` (checked against the config) or the config's model and backend."""
    if given is None:
        return EngineConfig(model=config.model, backend=config.backend, use_cache=use_cache,
                            cache_dir=None if cache_dir is None else str(cache_dir))
    for name in ("model", "backend"):
        if getattr(given, name) != getattr(config, name):
            raise ConfigError(f"engine_config.{name} is {getattr(given, name)!r} but the NumericConfig says "
                              f"{getattr(config, name)!r}; build both from the same value", parameter=name,
                              value=getattr(given, name))
    if cache_dir is not None or not use_cache:
        raise ConfigError("cache_dir= and use_cache= go into the engine_config when one is given",
                          parameter="cache_dir")
    return given


def _data_record(config: NumericConfig, problems: list[NumericProblem]) -> dict[str, Any]:
    """Where the run's problems came from, for its manifest."""
    return {"dataset": config.dataset, "template_file": config.template_file, "prompt_file": config.prompt_file,
            "frequency_table": config.frequency_table, "n_problems": len(problems)}


def analyse_run(folder: str | Path, *, heatmap: bool = True) -> dict[str, Any]:
    """(Re)compute metrics, cells, heatmap and report from a run folder's tables.

    Problems with an option the backend could not score (NaN, web backends)
    are left out of every statistic and counted in ``n_unscored``. The
    folder is updated as a whole (:class:`~folkscope.runs.RunFolder`).
    """
    with RunFolder(folder) as staging:
        manifest = read_manifest(staging)
        if manifest.legacy:  # a folder from before manifests gains one
            manifest.write(staging)
        return _analyse(staging, heatmap=heatmap)


def _analyse(folder: Path, *, heatmap: bool) -> dict[str, Any]:
    """:func:`analyse_run` inside a staging folder."""
    config = read_json(folder / "config.json")
    problems = pd.read_parquet(folder / "problems.parquet")
    probs, unscored = analysis.split_unscored(pd.read_parquet(folder / "probabilities.parquet"))
    if probs.empty:
        name = folder.name.removeprefix(".").removesuffix(".staging")  # the run's name, not its staging folder's
        raise DataError(f"{name}: no problem has every option scored ({len(unscored)} left out), so there is "
                        "nothing to analyse; the backend gave no probability for some option of each problem "
                        "(a web API's chat endpoint returns only its top log-probabilities: try the base form)")
    per_problem = analysis.problem_metrics(probs).merge(
        problems[["problem_id", "pair", "cell"]], on="problem_id")
    cells = analysis.classify_cells(probs, problems)
    bias, by_word = analysis.order_bias(probs)
    metrics: dict[str, Any] = {
        "config": config,
        "n_problems": len(problems),
        "n_unscored": len(unscored),
        "n_cells": len(cells),
        "summary": analysis.summarize_metrics(per_problem, per_problem["pair"]),
        "behaviour_shares": analysis.behaviour_shares(cells),
        "behaviour_shares_renormalised": analysis.behaviour_shares(
            cells, column="behaviour_renormalised"),
        "order_bias": bias,
        "multi_token_share": float((probs["min_tokens"] > 1).mean()),
    }
    if unscored:
        metrics["unscored_problem_ids"] = unscored[:20]
    if config["dataset"] == "distributions":
        metrics["distributions"] = analysis.distribution_summary(probs, problems)
    effects = _frequency_effects(config, per_problem, problems)
    if effects is not None:
        metrics["frequency_effect"] = effects
    for name in ("pennies", "comparison", "timing"):
        if (folder / f"{name}.json").exists():
            metrics[name] = read_json(folder / f"{name}.json")
    if (folder / "accounting.json").exists():
        metrics.update(read_json(folder / "accounting.json"))  # engine_stats, backend_stats
    write_parquet(folder / "problem_metrics.parquet", per_problem)
    write_parquet(folder / "cells.parquet", cells)
    write_parquet(folder / "order_bias.parquet", by_word)
    heat_name = None
    if heatmap and config["dataset"] != "distributions" and len(cells):
        heat = analysis.heatmap_data(cells)
        renormalised = analysis.heatmap_data(cells, column="behaviour_renormalised")
        write_parquet(folder / "heatmap.parquet", heat)
        write_parquet(folder / "heatmap_renormalised.parquet", renormalised)
        write_heatmap({"behaviour (rate)": heat, "behaviour of Π / PM (share of cells)": renormalised},
                      folder / "heatmap.png",
                      title=f"{config['dataset']} / {config['model']} "
                            f"({'chat' if config['chat'] else 'base'})")
        heat_name = "heatmap.png"
    write_json(folder / "metrics.json", metrics)
    record_caveats(folder, run_caveats(metrics))
    page = render_html(metrics, cells, by_word, heatmap_file=heat_name)
    write_page(folder / "report.html", page)
    return metrics


def run_numeric(config: NumericConfig, results_dir: str | Path, *, engine: Engine | None = None,
                engine_config: EngineConfig | None = None, cache_dir: str | Path | None = None,
                use_cache: bool = True, heatmap: bool = True) -> NumericRun:
    """Generate, score and analyse one run; returns its folder and metrics.

    With ``config.pennies_games > 0`` the same engine then plays the
    matching-pennies games (chat form when ``config.chat``), seeded by
    ``config.seed``; the rounds go to ``pennies.parquet`` and the summary to
    ``pennies.json`` and ``metrics["pennies"]``.

    Problems with an unscored option are the run's caveat: recorded in its
    manifest and raised as a :class:`~folkscope.errors.CaveatWarning`.

    Parameters
    ----------
    config : NumericConfig
    results_dir : path
        Parent folder of the run folder.
    engine : Engine, optional
        A ready engine; otherwise one is built from ``engine_config``.
    engine_config : EngineConfig, optional
        Every engine setting (device, dtype, batch budget, web-API and vLLM
        options); its model and backend must be ``config``'s. Default: the
        config's model and backend with ``cache_dir`` and ``use_cache``.
    cache_dir, use_cache
        Engine result cache (only when neither ``engine`` nor ``engine_config`` is given).
    heatmap : bool, default True
        Draw ``heatmap.png`` (needs matplotlib).
    """
    problems = config.problems()
    if config.frequency_table is not None:
        load_number_frequencies(config.frequency_table)  # a bad table fails before any scoring
    own = engine is None
    if engine is None:
        engine = Engine.from_config(_engine_config(config, engine_config, cache_dir, use_cache),
                                    prompt_version=PROMPT_VERSION)
    identity = engine.identity()
    key = config.run_key(identity)
    final = config.run_folder(results_dir, key)
    try:
        with RunFolder(final, fingerprint=key) as folder, log_to_file(folder / "run.log"):  # the log is kept with the results
            write_json(folder / "config.json", config.to_dict())
            Manifest(part="numeric", fingerprint=key, config=config.to_dict(), engine=identity,
                     data=_data_record(config, problems)).write(folder)
            write_parquet(folder / "problems.parquet", analysis.problems_frame(problems))
            timing: dict[str, float] = {}
            start = time.perf_counter()
            probs = score_problems(engine, problems, chat=config.chat)
            timing["scoring_seconds"] = time.perf_counter() - start
            write_parquet(folder / "probabilities.parquet", probs)
            if config.pennies_games > 0:
                start = time.perf_counter()
                games = play_matching_pennies(engine, n_games=config.pennies_games,
                                              n_rounds=config.pennies_rounds, n=config.pennies_n,
                                              chat=config.chat, seed=config.seed)
                timing["pennies_seconds"] = time.perf_counter() - start
                write_parquet(folder / "pennies.parquet", games.rounds_frame())
                write_json(folder / "pennies.json", {**games.to_dict(), "chat": config.chat,
                                                     "seed": config.seed})
            write_json(folder / "timing.json", timing)
            write_json(folder / "accounting.json", run_accounting(engine))  # what the answers cost, as every part records it
            metrics = _analyse(folder, heatmap=heatmap)
    finally:
        if own:
            engine.close()
    metrics["scoring_seconds"] = timing["scoring_seconds"]
    warn_caveats(read_caveats(final), final)  # a Python user sees only the numbers otherwise
    return NumericRun(final, metrics)


def compare_runs(base: str | Path, chat: str | Path) -> dict[str, Any]:
    """Paired chat-minus-base differences of two run folders over the same problems.

    Typically one model in base and chat form, or a base and an instruction-tuned
    model. Returns the PM, WD and RE differences with 95% intervals clustered by
    option pair (:func:`~folkscope.numeric.analysis.paired_differences`) and,
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
        raise DataError(f"{a.name} and {b.name} hold different problems; compare runs of the "
                        "same dataset, grid and seed")
    pa, bad_a = analysis.split_unscored(pd.read_parquet(a / "probabilities.parquet"))
    pb, bad_b = analysis.split_unscored(pd.read_parquet(b / "probabilities.parquet"))
    shared = set(pa["problem_id"]) & set(pb["problem_id"])
    pa = pa[pa["problem_id"].isin(shared)].reset_index(drop=True)
    per_a = analysis.problem_metrics(pa)
    per_b = analysis.problem_metrics(pb[pb["problem_id"].isin(shared)])
    pairs = pd.read_parquet(a / "problems.parquet", columns=["problem_id", "pair"]).set_index(
        "problem_id")["pair"]
    out: dict[str, Any] = {"base": a.name, "chat": b.name, "n_shared": len(shared),
                           "n_unscored": len(set(bad_a) | set(bad_b)),
                           "differences": analysis.paired_differences(per_a, per_b, pairs)}
    pb = pb.set_index(["problem_id", "position"])
    pb = pb.loc[list(zip(pa["problem_id"], pa["position"]))].reset_index()
    stability, total = 0.0, 0
    for (_, pi_a, _), (_, pi_b, _) in zip(analysis.option_matrices(pa), analysis.option_matrices(pb)):
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
        reason = str(exc) if isinstance(exc, DataError) else f"it lacks a readable {Path(getattr(exc, 'filename', None) or 'problems.parquet').name}"
        raise ConfigError(f"--compare-to {folder} is not a finished numeric run ({reason}); pass a folder `folkscope numeric` wrote",
                          parameter="compare_to", value=str(folder)) from None  # fmt: skip
    if part != "numeric":
        raise ConfigError(f"--compare-to {folder} is a {part} run, not a numeric one", parameter="compare_to", value=str(folder))
    mine = {p.id for p in problems}
    if set(ids) != mine:
        raise ConfigError(f"--compare-to {folder} holds other problems ({len(set(ids) & mine):,} of its {ids.nunique():,} are this "
                          f"run's {len(mine):,}); compare runs of the same dataset, grid, seed and templates",
                          parameter="compare_to", value=str(folder))  # fmt: skip
    return folder


def attach_comparison(folder: str | Path, reference: str | Path, *,
                      heatmap: bool = True) -> dict[str, Any]:
    """Compare run ``folder`` with the ``reference`` run of the same problems and keep the
    result in the folder (``comparison.json``, ``metrics["comparison"]``, the report).

    The differences are ``folder`` minus ``reference`` (:func:`compare_runs` with
    ``reference`` as base), e.g. a chat-form run against the base-form run of the
    same grid. Returns the re-analysed metrics.
    """
    result = compare_runs(reference, folder)
    with RunFolder(folder) as staging:
        write_json(staging / "comparison.json", result)
        return _analyse(staging, heatmap=heatmap)
