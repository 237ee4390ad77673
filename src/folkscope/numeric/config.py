"""What defines a numeric-calibration run: :class:`NumericConfig`, checked when built, hashed into the run folder's name."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from folkscope._config import check_declared, comma_ints, config_dict, config_fields, option
from folkscope._json import fingerprint
from folkscope.engine.config import EngineConfig
from folkscope.errors import ConfigError
from folkscope.numeric.frequencies import BUNDLED_FREQUENCIES, load_number_frequencies
from folkscope.numeric.problems import SCALES, TEMPLATE_FORMATS, NumericProblem, generate_problems, load_templates
from folkscope.numeric.templates import DATASETS, TemplateFile
from folkscope.runs import run_path

__all__ = ["PROMPT_VERSION", "NumericConfig"]

#: part of every engine cache key; bump when prompts or variants change
PROMPT_VERSION = "numeric-v1"


@dataclass(frozen=True)
class NumericConfig:
    """Everything that defines a numeric-calibration run (hashed into the folder name).

    Each field declares its flag and help (:func:`folkscope._config.option`);
    ``folkscope numeric run`` generates its flags from them. The model and how
    it answers are the contained :class:`~folkscope.engine.EngineConfig`
    (``engine``; the engine flags).
    """

    dataset: str = field(
        default="colors",
        metadata=option(
            "What to evaluate: colors, wordproblems or distributions.", choices=DATASETS, aliases=("--task",)
        ),
    )
    engine: EngineConfig = field(
        default_factory=EngineConfig,
        metadata=option("The model and how it answers: every engine setting (the engine flags).", cli=False),
    )
    chat: bool = field(
        default=False,
        metadata=option(
            "Chat form: calibration instruction as a user turn, scenario as assistant prefill.", kind="toggle"
        ),
    )
    seed: int = field(default=0, metadata=option("Seed of the number scales, intervals and --limit sample."))
    scales: tuple[str, ...] = field(
        default=tuple(SCALES), metadata=option("Number scales (small, medium, large). Comma-separated.", kind="list")
    )
    n_numbers: int = field(
        default=10, metadata=option("Numbers per scale; n_numbers**2 configurations per cell (2-10).")
    )
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
    limit: int | None = field(
        default=None,
        metadata=option("A small run: keep a seeded random sample of this many problems (default: all).", metavar="N"),
    )
    numbers: tuple[int, ...] | None = field(
        default=None,
        metadata=option(
            "Two-option datasets: exactly these numbers (one 'custom' scale, every ordered pair) instead of the "
            "scales. Comma-separated, e.g. 8,9,48,51,98,99.",
            kind="list",
            parse=comma_ints,
        ),
    )
    template_format: str = field(
        default="auto",
        metadata=option("Format of the template file: auto (detect), folkscope or original.", choices=TEMPLATE_FORMATS),
    )
    prompt_file: str | None = field(
        default=None, metadata=option("Chat prompts in the paper's original layout (with an original template file).")
    )
    frequency_table: str | None = field(
        default=BUNDLED_FREQUENCIES,
        metadata=option(
            "Number-frequency table of the frequency-effects analysis: 'bundled', a CSV path "
            "(number,frequency[,measured]) or none."
        ),
    )
    pennies_games: int = field(
        default=0,
        metadata=option("Matching-pennies games the model plays against the n-gram guesser (0: none).", low=0),
    )
    pennies_rounds: int = field(
        default=100, metadata=option("Rounds per matching-pennies game (the paper: 100).", low=2)
    )
    pennies_n: int = field(
        default=4, metadata=option("Order of the matching-pennies n-gram guesser (the paper: 4).", low=1)
    )

    def __post_init__(self) -> None:
        if not isinstance(self.engine, EngineConfig):
            raise ConfigError(f"engine must be an EngineConfig, got {type(self.engine).__name__}", parameter="engine")
        check_declared(self)  # bounds and every declared choice (dataset, template format)
        for name in ("scales", "templates", "words", "numbers"):
            value = getattr(self, name)
            if value is not None:
                if isinstance(value, str):
                    raise ConfigError(
                        f"{name} must be a list of names, got the string {value!r}", parameter=name, value=value
                    )
                object.__setattr__(self, name, tuple(value))
        if not isinstance(self.chat, bool):
            raise ConfigError(f"chat must be True or False, got {self.chat!r}", parameter="chat", value=self.chat)
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ConfigError(f"seed must be an integer, got {self.seed!r}", parameter="seed", value=self.seed)
        for name in ("template_file", "prompt_file"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, str(getattr(self, name)))
        if self.frequency_table is not None:
            table = str(self.frequency_table)
            object.__setattr__(self, "frequency_table", None if table.lower() in ("", "none", "off") else table)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples as lists; of the engine, its model and backend: :meth:`EngineConfig.answering`)."""
        return config_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NumericConfig:
        """Inverse of :meth:`to_dict`; unknown keys are refused with the known ones listed."""
        engine, rest = EngineConfig.split(data, "NumericConfig")
        return cls(engine=engine, **config_fields(cls, rest, "NumericConfig", parameter="config"))

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys, compact) of the config, the
        prompt version and the template file's content, so edited templates get a new folder."""
        tf = self.template_source()
        content: dict[str, Any] = {
            "templates": [dict(t) for t in tf.templates],
            "instructions": list(tf.instructions),
            "words": list(tf.words),
        }
        if self.frequency_table not in (None, BUNDLED_FREQUENCIES):
            content["frequency_table"] = load_number_frequencies(self.frequency_table).fingerprint()
        return fingerprint({"config": self.to_dict(), "prompt_version": PROMPT_VERSION, "template_content": content})

    def run_key(self, engine_identity: dict[str, Any]) -> str:
        """The run's fingerprint: this config's and the engine's identity (dtype, budget, backend
        settings), so answers computed two ways never share a folder."""
        return fingerprint({"config": self.fingerprint(), "engine": engine_identity})

    def run_folder(self, results_dir: str | Path, run_key: str, model_name: str) -> Path:
        """``<results_dir>/numeric-<dataset>/<model>/<chat|base>-<hash8>`` (:func:`folkscope.runs.run_path`),
        ``run_key`` being :meth:`run_key`'s (computing it reads the template file, so callers do it once) and
        ``model_name`` the engine's name of the model (``default`` resolves to ``SmolLM2-135M-Instruct``)."""
        return run_path(
            results_dir,
            subject=f"numeric-{self.dataset}",
            model=Path(model_name).name or model_name,
            variant="chat" if self.chat else "base",
            fingerprint=run_key,
        )

    def template_source(self) -> TemplateFile:
        """The template file this config reads (bundled, folkscope format or original layout)."""
        return load_templates(self.dataset, self.template_file, format=self.template_format, prompts=self.prompt_file)

    def problems(self) -> list[NumericProblem]:
        """The problems this config defines."""
        return generate_problems(
            self.dataset,
            seed=self.seed,
            scales=self.scales,
            n_numbers=self.n_numbers,
            n_intervals=self.n_intervals,
            templates=self.templates,
            words=self.words,
            template_file=self.template_file,
            limit=self.limit,
            numbers=self.numbers,
            template_format=self.template_format,
            prompt_file=self.prompt_file,
        )
