"""What defines an epidemiology run: :class:`EpidemiologyConfig`, checked when built, hashed into the run folder's name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from folkscope._config import check_declared, comma_names, config_dict, config_fields, option
from folkscope.data.surveys import DATASETS
from folkscope.engine.config import EngineConfig
from folkscope.epidemiology.elicit import LIKELIHOOD_LEVELS, LIKELIHOOD_READOUTS, MODES
from folkscope.epidemiology.tasks import Task, TaskFile, get_task, list_tasks, user_task_files
from folkscope.epidemiology.truth import BEST_REFERENCES
from folkscope.errors import ConfigError
from folkscope.metrics import CROSSED_RULES

__all__ = ["DIMENSIONS", "EpidemiologyConfig", "LEGACY_RULES", "made_with"]

#: what --dimension accepts
DIMENSIONS = ("low", "high")
#: the scoring rules of runs made before the paper's became the defaults (their config.json lacks these keys)
LEGACY_RULES = {"best_reference": "design-effect", "best_above_worst": "nan", "likelihood_levels": "all"}


def made_with(config: Mapping[str, Any]) -> dict[str, str]:
    """The scoring rules a run folder was made with, from its ``config.json``: what rescore, compare, the page and
    the leaderboard must follow (an older folder keeps the rules of its time, :data:`LEGACY_RULES`).

    >>> made_with({"best_reference": "paper"})["best_reference"], made_with({})["best_reference"]
    ('paper', 'design-effect')
    """
    return {key: str(config.get(key, legacy)) for key, legacy in LEGACY_RULES.items()}


@dataclass(frozen=True)
class EpidemiologyConfig:
    """Everything that defines an epidemiology run (hashed into its folder name)."""

    tasks: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "Task names (comma-separated); default: every task of --dataset, or the hand-written tasks of the bundled datasets "
            "(generated ones join with --dataset or --dimension).",
            kind="list",
            metavar="NAME,...",
            aliases=("--task",),
        ),
    )
    task_file: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "Your own task file(s) (comma-separated), in the format of the bundled ones; a file may name its own data "
            "('data': rows.csv or .parquet, with its 'weights' column). Without --tasks or --dataset, all their tasks run.",
            kind="list",
            metavar="PATH,...",
        ),
    )
    task_dir: str | None = field(
        default=None,
        metadata=option(
            "A folder of your own task files (every *.json in it), as --task-file.",
            metavar="PATH",
        ),
    )
    dataset: str | None = field(
        default=None,
        metadata=option(
            "Run every task of this dataset (bundled: nist-acs, anes96, randhie; from your copy, with --data-dir: nhanes, gss, "
            "yrbss, nhis, meps96, brfss; full public files, downloaded on first use: nhanes1718, nhanes2021, brfss2022, brfss2023, gss-cumulative, "
            "meps2022, nsduh2022, scf2022, acs-pums, acs-pums-2023)."
        ),
    )
    dimension: str | None = field(
        default=None,
        metadata=option(
            "Only the low-dimensional (one condition at most) or high-dimensional (2-5 conditions, generated ones included) tasks "
            "of the selection.",
            choices=DIMENSIONS,
        ),
    )
    data_dir: str | None = field(
        default=None,
        metadata=option(
            "Folder holding your copies of the datasets that are not bundled (NHANES, GSS, ...); the project's test copy is "
            "../shared/data. Full public files are read from (and downloaded to) its epidemiology/<dataset>/ folder; without "
            "it, folkscope's data folder.",
            metavar="PATH",
        ),
    )
    mode: str = field(
        default="qa",
        metadata=option(
            "qa (lettered answers, averaged over their orderings), likelihood (the 22 probability bins per answer) or sampling "
            "(answer frequencies of --n-samples generations, for models without log-probabilities).",
            choices=MODES,
        ),
    )
    n_samples: int = field(default=50, metadata=option("sampling: generations per condition (temperature 1).", low=1))
    chat: bool = field(
        default=False, metadata=option("Deliver the questions through the chat template.", kind="toggle")
    )
    likelihood_readout: str = field(
        default="argmax",
        metadata=option(
            "likelihood: the most probable bin's midpoint (the paper) or the expectation over the 22 bins.",
            choices=LIKELIHOOD_READOUTS,
        ),
    )
    likelihood_levels: str = field(
        default="paper",
        metadata=option(
            "likelihood: ask the first k-1 outcome levels and give the last 1 minus their sum (paper, the authors' code; "
            "binary tasks: one question) or ask every level and renormalise (all).",
            choices=LIKELIHOOD_LEVELS,
        ),
    )
    best_reference: str = field(
        default="paper",
        metadata=option(
            "How the best reference redraws each condition: at its raw respondent count (paper: scores compare with the "
            "paper's leaderboard; published tables: best 0) or at its Kish effective sample size (design-effect: larger on "
            "weighted surveys; published tables: the best they declare).",
            choices=BEST_REFERENCES,
        ),
    )
    best_above_worst: str = field(
        default="paper",
        metadata=option(
            "When a task's best reference is not below its worst: score 0 or 100 as the authors' code does (paper: the "
            "worst moves to best + 0.0001) or leave the score undefined (nan). Either way the task is named.",
            choices=CROSSED_RULES,
        ),
    )
    limit: int | None = field(
        default=None,
        metadata=option(
            "A small run: keep only the first N tasks of the selection (in --task order, else as `epidemiology list` shows "
            "them; default: all).",
            metavar="N",
            low=1,
        ),
    )
    n_resamples: int = field(
        default=100,
        metadata=option(
            "Bootstrap redraws of the best reference and the score interval.",
            flag="--n-bootstrap",
            aliases=("--n-resamples",),
            low=10,
        ),
    )
    refits: int = field(
        default=10,
        metadata=option("High-dimensional tasks: model refits on resampled persons for the best reference.", low=2),
    )
    quantile: float = field(
        default=0.975, metadata=option("Quantile of the redrawn distances that scores 100 (the authors' code: 0.975).")
    )
    seed: int = field(default=0, metadata=option("Seed of the orderings beyond 128 and of the bootstrap."))
    engine: EngineConfig = field(
        default_factory=EngineConfig,
        metadata=option("The model and how it answers: every engine setting (the engine flags).", cli=False),
    )

    def __post_init__(self) -> None:
        if not isinstance(self.engine, EngineConfig):
            raise ConfigError(f"engine must be an EngineConfig, got {type(self.engine).__name__}", parameter="engine")
        object.__setattr__(self, "tasks", comma_names(self.tasks) if isinstance(self.tasks, str) else tuple(self.tasks))
        files = self.task_file
        object.__setattr__(self, "task_file", comma_names(files) if isinstance(files, str) else tuple(files))
        check_declared(self)  # bounds and every declared choice (mode, readout, dimension, the paper's rules)
        if not 0.5 < float(self.quantile) < 1:
            raise ConfigError(
                f"quantile must be in (0.5, 1), got {self.quantile!r}", parameter="quantile", value=self.quantile
            )
        self.selected()  # unknown task names or datasets fail now, before any model loads

    def selected(self) -> list[Task]:
        """The tasks this run asks: ``tasks``, else every task of ``dataset``, else those of the user's task files,
        else the bundled ones; ``dimension`` filters, ``limit`` keeps the first ones.

        The default is the hand-written tasks of the bundled datasets
        (:data:`~folkscope.data.surveys.DATASETS`), so a plain run
        works offline without ``--data-dir`` and stays small; generated tasks
        (hundreds of cells each) join when ``--dataset`` or ``--dimension``
        is given, tasks on your own copies (NHANES, GSS, ...) or on published
        tables (BLS) when named by ``--tasks`` or ``--dataset``.
        """
        user = self.user_files()
        if self.tasks:
            chosen = [get_task(name, extra=user) for name in self.tasks]
            if self.dataset is not None and any(t.dataset != self.dataset for t in chosen):
                raise ConfigError(
                    "--tasks and --dataset disagree; give one of them", parameter="dataset", value=self.dataset
                )
            if self.dimension is not None and any(t.dimension != self.dimension for t in chosen):
                raise ConfigError(
                    f"--tasks names tasks that are not {self.dimension}-dimensional; drop --dimension or those tasks",
                    parameter="dimension",
                    value=self.dimension,
                )
            return chosen[: self.limit]
        if self.dataset is not None:
            chosen = list_tasks(dataset=self.dataset, extra=user)
        elif user:  # all of the user's tasks; a name the bundled files use too is refused (list_tasks)
            theirs = {t.name for f in user for t in f.tasks}
            chosen = [t for t in list_tasks(extra=user) if t.name in theirs]
        elif self.dimension is not None:
            chosen = [t for t in list_tasks() if t.dataset in DATASETS]
        else:
            chosen = [t for t in list_tasks() if t.dataset in DATASETS and not t.generated]
        if self.dimension is not None:
            chosen = [t for t in chosen if t.dimension == self.dimension]
            if not chosen:
                raise ConfigError(
                    f"no {self.dimension}-dimensional tasks{f' of dataset {self.dataset!r}' if self.dataset else ''}",
                    parameter="dimension",
                    value=self.dimension,
                )
        return chosen[: self.limit]

    def user_files(self) -> list[TaskFile]:
        """The task files of ``--task-file`` and ``--task-dir`` (checked when the config is built)."""
        if not self.task_file and self.task_dir is None:
            return []
        return user_task_files(self.task_file, self.task_dir)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples as lists; of the engine, its model and backend: :meth:`EngineConfig.answering`)."""
        return config_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpidemiologyConfig:
        """Inverse of :meth:`to_dict`; unknown keys are refused with the known ones listed."""
        engine, rest = EngineConfig.split(data, "EpidemiologyConfig")
        return cls(engine=engine, **config_fields(cls, rest, "EpidemiologyConfig", parameter="config"))
