"""What defines an allocation run: :class:`AllocationConfig`, checked when built, hashed into the run folder's name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from folkscope._config import check_declared, config_dict, config_fields, option
from folkscope.allocation.outcomes import PAIR_DELTAS
from folkscope.allocation.scoring import MODES, PAIR_ANSWERS, PAIR_POINTS
from folkscope.allocation.templates import load_template
from folkscope.engine.config import EngineConfig
from folkscope.errors import ConfigError

__all__ = ["TASKS", "AllocationConfig"]

#: candidate sources: bundled Bloomberg resumes, the RABBI authors' folder, ICNALE essays, a part-1 run
TASKS = ("resumes", "rabbi-resumes", "essays", "acs")


@dataclass(frozen=True)
class AllocationConfig:
    """Everything that defines an allocation run (hashed into its folder name)."""

    task: str = field(
        default="resumes",
        metadata=option(
            "Candidates: 'resumes' (bundled Bloomberg hiring-audit resumes, offline), 'rabbi-resumes' (the RABBI authors' "
            "folder, --data), 'essays' (your ICNALE copy, --data) or 'acs' (a part-1 run folder's risk scores, --data).",
            choices=TASKS,
        ),
    )
    subtask: str | None = field(
        default=None,
        metadata=option(
            "Resume tasks: the job (software engineer, HR specialist, retail, financial analyst; default software engineer); "
            "essays: the topic (default all)."
        ),
    )
    data: str | None = field(
        default=None,
        metadata=option(
            "The folder the task reads: the RABBI resume_screening folder, the ICNALE folder, or a part-1 run folder.",
            metavar="PATH",
        ),
    )
    mode: str = field(
        default="pointwise",
        metadata=option(
            "How the model scores candidates: pointwise (Yes/No or grade probabilities), pairwise (every pair, both orders) "
            "or listwise (a stated ranking of the pool).",
            choices=MODES,
        ),
    )
    pairwise_answer: str = field(
        default="generated",
        metadata=option(
            "Pairwise runs: how each prompt's answer is read. 'generated' (default, the paper): a short answer is "
            "generated and the letter it names parsed, an answer naming neither counted as unread; 'probability': "
            "the most probable of A/B/C (backends with log-probabilities).",
            choices=PAIR_ANSWERS,
        ),
    )
    pairwise_points: str = field(
        default="paper",
        metadata=option(
            "Pairwise runs: the point rule. 'paper' (section 3.2): 1 for a candidate named in both orders, 0.5 each "
            "when the orders disagree, 0.25 each per tie answer; 'authors' (their code): per prompt 0.5 to the "
            "candidate named, 0.25 each on a tie, 0 for an unread answer.",
            choices=PAIR_POINTS,
        ),
    )
    pairwise_delta: str = field(
        default="paper",
        metadata=option(
            "Pairwise runs: the baseline δ. 'paper' (section 4.3): the share of compared (group, reference) pairs "
            "whose group member is named in both orders; 'score-gap': the gap of the mean pairwise scores.",
            choices=PAIR_DELTAS,
        ),
    )
    engine: EngineConfig = field(
        default_factory=EngineConfig,
        metadata=option("The model and how it answers: every engine setting (the engine flags).", cli=False),
    )
    chat: bool = field(
        default=True,
        metadata=option("Deliver prompts through the chat template (--no-chat for base models).", kind="toggle"),
    )
    names_per_group: int = field(
        default=4, metadata=option("Resume tasks: names drawn per group (each a candidate).", low=1)
    )
    rounds: int = field(
        default=20,
        metadata=option(
            "Selection rounds (pools drawn); fewer make a small run.", aliases=("--limit",), metavar="N", low=1
        ),
    )
    pool_size: int | None = field(
        default=None,
        metadata=option(
            "Candidates per pool, drawn at random (default: one per group, the resume-screening design).", low=2
        ),
    )
    k_max: int = field(
        default=5,
        metadata=option("Report top-k selection for k = 1..K (K below the pool size).", flag="--k", metavar="K", low=1),
    )
    reference: str | None = field(
        default=None,
        metadata=option(
            "Reference group of RABBI and the gaps (default: 'White men' for resumes, 'L1 English speakers' for essays, "
            "else the most frequent group).",
            metavar="GROUP",
        ),
    )
    group_columns: tuple[str, ...] = field(
        default=("RAC1P", "SEX"),
        metadata=option("acs: the part-1 run's columns whose values form the groups (comma-separated).", kind="list"),
    )
    n_bootstrap: int = field(
        default=1000, metadata=option("Bootstrap resamples of the RABBI interval (0: none).", low=0)
    )
    seed: int = field(default=0, metadata=option("Seed of the names drawn, the pools and the bootstrap."))
    template_file: str | None = field(
        default=None,
        metadata=option("Your own prompt wording: a JSON file shaped like the bundled templates.json.", metavar="PATH"),
    )

    def __post_init__(self) -> None:
        if not isinstance(self.engine, EngineConfig):
            raise ConfigError(f"engine must be an EngineConfig, got {type(self.engine).__name__}", parameter="engine")
        check_declared(self)  # bounds and every declared choice (task, mode, the paper's pairwise rules)
        if self.task in ("rabbi-resumes", "essays", "acs") and not self.data:
            raise ConfigError(f"task {self.task} reads your copy of its data: add --data PATH", parameter="data")
        if self.task == "acs" and self.mode != "pointwise":
            raise ConfigError(
                "task acs allocates by a part-1 run's risk scores, which are pointwise; drop --mode", parameter="mode"
            )
        object.__setattr__(self, "group_columns", tuple(self.group_columns))
        if self.template_file is not None:  # the whole wording checked now, not when the first prompt is filled
            if not isinstance(self.template_file, str) or not self.template_file.strip():
                raise ConfigError(
                    f"template_file must be a path, got {self.template_file!r}",
                    parameter="template_file",
                    value=self.template_file,
                )
            load_template(self.family, self.template_file)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples as lists; of the engine, its model and backend: :meth:`EngineConfig.answering`)."""
        return config_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AllocationConfig:
        """Inverse of :meth:`to_dict`; unknown keys are refused with the known ones listed."""
        engine, rest = EngineConfig.split(data, "AllocationConfig")
        return cls(engine=engine, **config_fields(cls, rest, "AllocationConfig", parameter="config"))

    @property
    def family(self) -> str:
        """The prompt wording the task uses (resume tasks share one)."""
        return "essays" if self.task == "essays" else "resumes"
