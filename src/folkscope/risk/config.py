"""One configuration object per risk-score run, serialisable and hashed into the run folder name.

Why one module: one dataclass whose 34 fields each declare their flag, help and
bounds; the CLI, the prompt layer and the run's fingerprint all read them from
here.

:class:`BenchmarkConfig` keeps folktexts' flat option names (so
``BenchmarkConfig(cot_prompting=True, enable_thinking=True)`` works as it does
there) and adds folkscope's own; :meth:`BenchmarkConfig.prompt_config` turns
the prompt options into a :class:`~folkscope.prompting.PromptConfig`, which
validates every combination before any model is loaded. Field docs are the
CLI help.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from folkscope._config import check_declared, config_fields, option, parse_subsampling
from folkscope._json import fingerprint, parse_data, read_text_file, write_json
from folkscope.errors import ConfigError
from folkscope.metrics import THRESHOLD_RULES
from folkscope.prompting import FewShotConfig, PromptConfig
from folkscope.prompting.config import DRAWS, PromptConfigWarning
from folkscope.prompting.variations import parse_variations
from folkscope.risk.classifier import FIT_METHODS, NUMERIC_READOUTS
from folkscope.tasks.task import WORDINGS

__all__ = ["INFERENCE", "PROMPTS", "RUN", "BenchmarkConfig", "from_folktexts_fields", "prompt_config_of"]


#: the command-line sections a field's flag is listed in
RUN, INFERENCE, PROMPTS = "run", "inference", "prompts"


def prompt_config_of(flat: Mapping[str, Any], *, seed: int = 42, warn_implied: bool = False) -> PromptConfig:
    """The nested :class:`PromptConfig` (and its :class:`FewShotConfig`) of folktexts' flat prompt options.

    The one mapping from the flat names (``few_shot``, ``reuse_few_shot_examples``,
    ``compose_few_shot_examples``, ``dont_correct_order_bias``'s field
    ``correct_order_bias``, ``variation``, ...) to the prompt layer's
    configuration; absent names take :class:`BenchmarkConfig`'s defaults.
    ``warn_implied``: ``enable_thinking`` alone warns that it implies
    chain-of-thought, as folktexts' command line does (a config built in
    Python states it once and stays quiet).

    Examples
    --------
    >>> prompt_config_of({"few_shot": 2, "reuse_few_shot_examples": True}).few_shot.n_shots
    2
    """
    defaults = {f.name: f.default for f in fields(BenchmarkConfig)}
    get = lambda name: flat.get(name, defaults[name])  # noqa: E731
    few_shot = None
    if get("few_shot"):
        few_shot = FewShotConfig(
            n_shots=get("few_shot"),
            reuse_examples=get("reuse_few_shot_examples"),
            composition=get("compose_few_shot_examples"),
            example_order=get("example_order"),
            hide_question=get("few_shot_hide_question"),
            seed=seed,
            draw=get("few_shot_draw"),
        )
    base = PromptConfig(
        numeric_risk_prompting=get("numeric_risk_prompting"),
        cot_prompting=get("cot_prompting") or (get("enable_thinking") and not warn_implied),
        enable_thinking=get("enable_thinking"),
        use_chat_template=get("use_chat_template"),
        system_prompt=get("system_prompt"),
        chat_prompt=get("chat_prompt"),
        few_shot=few_shot,
        correct_order_bias=get("correct_order_bias"),
    )
    variation = get("variation")
    return base.with_variations(parse_variations(variation)) if variation else base


def _context_size(text: str) -> int | None:
    """``--context-size``: a number of tokens, or ``none`` to send every prompt whole.

    Examples
    --------
    >>> _context_size("600"), _context_size("None")
    (600, None)
    """
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens like 600, or 'none', got {text!r}") from None


@dataclass(frozen=True)
class BenchmarkConfig:
    """Every option of a risk-score benchmark run (folktexts names where they exist).

    Each field declares its flag and help (:func:`folkscope._config.option`);
    ``folkscope run``, ``run_acs_benchmark``, ``evidence`` and ``prompts``
    generate their flags from these declarations.
    """

    numeric_risk_prompting: bool = field(
        default=False,
        metadata=option(
            "Ask for the probability as a number (answer prefilled with '0.').", group=PROMPTS, kind="switch"
        ),
    )
    cot_prompting: bool = field(
        default=False,
        metadata=option("Chain-of-thought: reason, then end with 'Probability: X%'.", group=PROMPTS, kind="switch"),
    )
    enable_thinking: bool = field(
        default=False,
        metadata=option(
            "Thinking mode for tokenizers that support it; strips the <think> block.", group=PROMPTS, kind="switch"
        ),
    )
    few_shot: int | None = field(
        default=None,
        metadata=option("Number of in-context examples (None or 0: zero-shot).", low=1, group=PROMPTS, metavar="N"),
    )
    reuse_few_shot_examples: bool = field(
        default=False, metadata=option("Show the same examples before every row.", group=PROMPTS, kind="switch")
    )
    compose_few_shot_examples: str = field(
        default="random",
        metadata=option(
            "random, balanced, or per-class counts like '2,2'.", group=PROMPTS, metavar="random|balanced|C0,C1"
        ),
    )
    example_order: str | None = field(
        default=None,
        metadata=option("Permutation of the example indices, e.g. '2,0,1'.", group=PROMPTS, metavar="I,J,..."),
    )
    few_shot_hide_question: bool = field(
        default=False, metadata=option("Examples show only the answer, not the question.", group=PROMPTS, kind="switch")
    )
    few_shot_draw: str = field(
        default="folktexts",
        metadata=option(
            "Which training rows are examples: 'folktexts' (the first rows, reused for every row when order bias is "
            "corrected or --reuse-few-shot-examples is set) or 'seeded' (folkscope's seeded draws: one shared draw "
            "with --reuse-few-shot-examples, else one per row).",
            group=PROMPTS,
            choices=DRAWS,
        ),
    )
    variation: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "Prompt variations as key=value pairs (keys: format, connector, granularity, order, custom_prompt_prefix, "
            "custom_prompt_suffix, show_question), e.g. --variation format=bullet connector==",
            group=PROMPTS,
            kind="extend",
            metavar="KEY=VALUE",
        ),
    )
    use_chat_template: bool = field(
        default=False,
        metadata=option(
            "Format prompts with the tokenizer's chat template (--chat, as in every part).",
            group=PROMPTS,
            kind="toggle",
            aliases=("--chat",),
        ),
    )
    system_prompt: str | None = field(
        default="default",
        metadata=option(
            "System prompt text (chat template only; default: folktexts' for the question mode).", group=PROMPTS
        ),
    )
    chat_prompt: str | None = field(
        default="default",
        metadata=option(
            "Assistant prefill text (chat template only; default: folktexts' for the question mode).", group=PROMPTS
        ),
    )
    correct_order_bias: bool = field(
        default=True,
        metadata=option(
            "Average scores over every ordering of the answer choices.",
            group=PROMPTS,
            kind="negate",
            flag="--dont-correct-order-bias",
            flag_help="ask each question in the task's own answer order only (no averaging over orderings)",
        ),
    )
    numeric_readout: str = field(
        default="greedy",
        metadata=option(
            "Numeric answers: 'greedy' (paper: two greedy digits) or 'expected'.",
            group=INFERENCE,
            choices=NUMERIC_READOUTS,
        ),
    )
    max_new_tokens: int = field(
        default=512, metadata=option("Generation budget of chain-of-thought answers.", group=INFERENCE)
    )
    temperature: float | None = field(
        default=None,
        metadata=option(
            "Sampling temperature of chain-of-thought answers (None: greedy, or 1.0 with --enable-thinking, as in "
            "folktexts). Multiple-choice and numeric scores read untempered probabilities, so it does not apply there.",
            group=INFERENCE,
        ),
    )
    context_size: int | None = field(
        default=600,
        metadata=option(
            "Longest prompt in tokens: longer ones are cut to their last N tokens and counted, as folktexts does "
            "(default 600; 'none': whole prompts).",
            low=1,
            group=INFERENCE,
            metavar="N|none",
            parse=_context_size,
        ),
    )
    batch_size: int | None = field(
        default=None,
        metadata=option(
            "folktexts' rows per batch. Web APIs: requests in flight at once (unless --max-api-concurrency is given). "
            "Local backends batch by a token budget (--batch-tokens) instead; it is recorded, not part of the run's identity.",
            low=1,
            group=INFERENCE,
        ),
    )
    threshold_rule: str = field(
        default=">=",
        metadata=option(
            "How a score becomes a prediction: '>=' (folktexts: score >= threshold) or '>' (strictly above).",
            group=RUN,
            choices=THRESHOLD_RULES,
        ),
    )
    threshold_fit: str = field(
        default="roc",
        metadata=option(
            "--fit-threshold's rule: 'roc' (folktexts: the ROC point minimising FPR + FNR) or 'accuracy' "
            "(the accuracy-maximising threshold nearest 0.5).",
            group=RUN,
            choices=FIT_METHODS,
        ),
    )
    fit_threshold: int | None = field(
        default=None, metadata=option("Fit the decision threshold on this many training rows.", low=1, group=RUN)
    )
    recalibrate: int | None = field(
        default=None,
        metadata=option(
            "Fit Platt and isotonic recalibration on this many training rows; reported beside the raw scores.",
            low=1,
            group=RUN,
            metavar="N",
        ),
    )
    feature_importance: bool = field(
        default=False,
        metadata=option(
            "Permutation importance on the test rows: the drop in AUC when each feature is shuffled.",
            group=RUN,
            kind="switch",
        ),
    )
    importance_repeats: int = field(
        default=3,
        metadata=option(
            "Permutation importance: shuffles per feature (mean and sd are reported).", low=1, group=RUN, metavar="N"
        ),
    )
    importance_rows: int | None = field(
        default=None,
        metadata=option(
            "Permutation importance: score at most this many test rows (a seeded sample; None: all).",
            low=1,
            group=RUN,
            metavar="N",
        ),
    )
    subsampling: float | int | None = field(
        default=None,
        metadata=option(
            "A small run: a fraction of each split (0.1), or a row count per split (500, --limit as in "
            "every part); 1.0 or none: all rows (the default).",
            group=RUN,
            parse=parse_subsampling,
            aliases=("--limit",),
        ),
    )
    seed: int = field(
        default=42, metadata=option("Seed of splits, subsampling, few-shot draws and bootstrap.", group=RUN)
    )
    feature_subset: tuple[str, ...] | None = field(
        default=None,
        metadata=option(
            "Features shown instead of the task's (comma-separated).",
            group=RUN,
            kind="list",
            flag="--use-feature-subset",
        ),
    )
    population_filter: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "Extra population filters such as 'SEX=2', 'AGEP=18..35' or folktexts' 'SEX=2,RAC1P=1' (repeatable).",
            group=RUN,
            kind="repeat",
            flag="--use-population-filter",
            metavar="FILTER",
        ),
    )
    sce_pairs: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "Group pairs compared by ΔSCE = SCE(A) - SCE(B), as COLUMN=A,B with codes or labels (e.g. 'SEX=2,1' or "
            "'RAC1P=White alone,Black or African American alone'); default: a column's two groups when it has two.",
            group=RUN,
            kind="repeat",
            flag="--sce-pair",
            metavar="COL=A,B",
        ),
    )
    n_bootstrap: int = field(
        default=1000, metadata=option("Bootstrap resamples for metric confidence intervals.", low=0, group=RUN)
    )
    baselines: bool = field(
        default=True,
        metadata=option(
            "Fit logistic regression and GBM baselines on the same split.",
            group=RUN,
            kind="negate",
            flag="--no-baselines",
            flag_help="skip the logistic-regression and GBM baselines",
        ),
    )
    wording: str = field(
        default="folktexts",
        metadata=option(
            "ACS tasks: 'folktexts' (folktexts 0.7.1's prompts, byte for byte, quirks included), 'folkscope' "
            "(the same with folktexts' inconsistencies corrected) or 'codebook' (Census labels).",
            group=RUN,
            choices=WORDINGS,
        ),
    )

    def __post_init__(self) -> None:
        if self.few_shot == 0 and not isinstance(self.few_shot, bool):
            object.__setattr__(self, "few_shot", None)  # zero examples is zero-shot, in run as in prompts
        check_declared(self)  # bounds and every declared choice (draw, readout, threshold rule and fit, wording)
        sub = self.subsampling
        is_fraction = isinstance(sub, float) and 0 < sub <= 1
        is_count = isinstance(sub, int) and not isinstance(sub, bool) and sub >= 1
        if sub is not None and not (is_fraction or is_count):
            raise ConfigError(
                f"subsampling must be a fraction in (0, 1] or a row count >= 1, got {sub!r}",
                parameter="subsampling",
                value=sub,
            )
        temp = self.temperature
        if temp is not None and (
            isinstance(temp, bool) or not isinstance(temp, (int, float)) or not 0 <= temp < float("inf")
        ):
            raise ConfigError(
                f"temperature must be a number >= 0 or None, got {temp!r}", parameter="temperature", value=temp
            )
        if temp is not None and not (self.cot_prompting or self.enable_thinking):
            warnings.warn(
                f"temperature={temp} is ignored: only chain-of-thought answers are sampled; multiple-choice and numeric "
                "scores read the model's untempered next-token probabilities (as in folktexts)",
                PromptConfigWarning,
                stacklevel=3,
            )
            object.__setattr__(self, "temperature", None)  # the same numbers share one run folder
        object.__setattr__(self, "sce_pairs", tuple(self.sce_pairs))
        self.group_pairs()  # the pair syntax is checked now; the groups when the task is known
        object.__setattr__(self, "variation", tuple(self.variation))
        if self.population_filter is None:  # folktexts' "no filter"
            object.__setattr__(self, "population_filter", ())
        elif isinstance(self.population_filter, Mapping):  # folktexts' {"column": value}
            object.__setattr__(self, "population_filter", tuple(f"{k}={v}" for k, v in self.population_filter.items()))
        elif isinstance(self.population_filter, str):
            object.__setattr__(self, "population_filter", (self.population_filter,))
        object.__setattr__(self, "population_filter", tuple(self.population_filter))
        if self.feature_subset is not None:
            object.__setattr__(self, "feature_subset", tuple(self.feature_subset))
        self.prompt_config()  # every prompt option and combination is checked now, before any model loads

    def group_pairs(self) -> dict[str, tuple[str, str]]:
        """``sce_pairs`` as ``{column: (A, B)}`` (codes stay text here; the evaluation matches codes or labels).

        Examples
        --------
        >>> BenchmarkConfig(sce_pairs=("SEX=2,1",)).group_pairs()
        {'SEX': ('2', '1')}
        """
        out: dict[str, tuple[str, str]] = {}
        for spec in self.sce_pairs:
            column, sep, rest = str(spec).partition("=")
            groups = [g.strip() for g in rest.split(",")]
            if not sep or not column.strip() or len(groups) != 2 or not all(groups) or groups[0] == groups[1]:
                raise ConfigError(
                    f"--sce-pair {spec!r}: expected COLUMN=A,B with two different groups, e.g. 'SEX=2,1'",
                    parameter="sce_pairs",
                    value=spec,
                )
            if column.strip() in out:
                raise ConfigError(f"--sce-pair names column {column.strip()} twice", parameter="sce_pairs", value=spec)
            out[column.strip()] = (groups[0], groups[1])
        return out

    def prompt_config(self) -> PromptConfig:
        """The prompt options as a validated :class:`PromptConfig` (see :func:`prompt_config_of`)."""
        return prompt_config_of(asdict(self), seed=self.seed)

    @property
    def generation_temperature(self) -> float:
        """The temperature chain-of-thought answers are sampled at: folktexts' default unless ``temperature`` is set."""
        if self.temperature is not None:
            return float(self.temperature)
        return 1.0 if self.enable_thinking else 0.0

    @property
    def few_shot_config(self) -> FewShotConfig | None:
        """folktexts' view of the few-shot options: one :class:`FewShotConfig`, or None for zero-shot."""
        return self.prompt_config().few_shot

    @property
    def prompt_variation(self) -> dict[str, Any] | None:
        """folktexts' view of ``variation``: the ``--variation`` pairs as a dict, or None without any."""
        return dict(parse_variations(self.variation)) if self.variation else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (tuples become lists)."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BenchmarkConfig:
        """Inverse of :meth:`to_dict`; unknown keys raise :class:`ConfigError`."""
        kwargs = config_fields(cls, data, "BenchmarkConfig", parameter="config")
        for name in ("variation", "population_filter", "feature_subset", "sce_pairs"):
            if isinstance(kwargs.get(name), list):
                kwargs[name] = tuple(kwargs[name])
        return cls(**kwargs)

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys, compact)."""
        return fingerprint(self.to_dict())

    # -- folktexts' names ----------------------------------------------------------
    @classmethod
    def default_config(cls, **changes: Any) -> BenchmarkConfig:
        """The default configuration with ``changes`` (folktexts' field names accepted, see :meth:`update`)."""
        return cls().update(**changes)

    def update(self, **changes: Any) -> BenchmarkConfig:
        """A copy with ``changes``; folktexts' names are translated (see :func:`from_folktexts_fields`).

        Unlike folktexts, which logs and drops an unknown name, an unknown name
        is refused in one line: a misspelt option must not silently run the
        default.
        """
        return BenchmarkConfig.from_dict({**self.to_dict(), **from_folktexts_fields(changes)})

    def save_to_disk(self, path: str | Path) -> None:
        """Write the configuration as JSON (whole or not at all)."""
        write_json(Path(path), self.to_dict())

    @classmethod
    def load_from_disk(cls, path: str | Path) -> BenchmarkConfig:
        """Read a configuration written by :meth:`save_to_disk`, or folktexts' (its names are translated).

        Keys of a folktexts results file that are not options (``model_name``,
        ``task_hash``, ...) are left out, as folktexts does; any other unknown
        key is a one-line error.
        """
        path = Path(path)
        data = parse_data(
            read_text_file(path, "benchmark config", error=ConfigError),
            f"benchmark config {path.name}",
            error=ConfigError,
        )
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"{path} holds {type(data).__name__}, not a configuration object", parameter="path", value=str(path)
            )
        return cls.from_dict(from_folktexts_fields({k: v for k, v in data.items() if k not in _FOLKTEXTS_RECORD_KEYS}))


#: keys folktexts writes beside the options in a results file's "config" (Benchmark.configs_dict)
_FOLKTEXTS_RECORD_KEYS = frozenset(
    {"model_name", "model_hash", "task_name", "task_hash", "dataset_name", "dataset_subsampling", "dataset_hash"}
)


def from_folktexts_fields(changes: Mapping[str, Any]) -> dict[str, Any]:
    """folktexts 0.7.1's BenchmarkConfig names as folkscope's fields.

    ``few_shot_config`` (a FewShotConfig or its dict, folktexts' or
    folkscope's field names) becomes ``few_shot`` and its companions,
    ``prompt_variation`` (a dict) becomes ``variation``, and the old flat
    ``balance_few_shot_examples`` becomes ``compose_few_shot_examples``;
    every other name passes through.

    Examples
    --------
    >>> from_folktexts_fields({"few_shot_config": {"n_shots": 2, "compose": "balanced"}, "prompt_variation": {"format": "bullet"}})
    {'few_shot': 2, 'reuse_few_shot_examples': False, 'compose_few_shot_examples': 'balanced', 'example_order': None, 'few_shot_hide_question': False, 'variation': ['format=bullet']}
    """
    out = dict(changes)
    shots = out.pop("few_shot_config", None)
    if shots is not None:
        fields_ = shots if isinstance(shots, Mapping) else {f.name: getattr(shots, f.name) for f in fields(shots)}
        order = fields_.get("example_order")
        out.update(
            {
                "few_shot": fields_["n_shots"],
                "reuse_few_shot_examples": bool(fields_.get("reuse_examples", False)),
                "compose_few_shot_examples": _composition(fields_.get("compose", fields_.get("composition", "random"))),
                "example_order": None
                if order is None
                else order
                if isinstance(order, str)
                else ",".join(map(str, order)),
                "few_shot_hide_question": bool(
                    fields_.get("hide_question", not fields_.get("show_question_in_examples", True))
                ),
            }
        )
    if out.pop("balance_few_shot_examples", False):
        out["compose_few_shot_examples"] = "balanced"
    variation = out.pop("prompt_variation", None)
    if variation:
        out["variation"] = [
            f"{k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}" for k, v in variation.items()
        ]
    return out


def _composition(value: Any) -> str:
    return value if isinstance(value, str) else ",".join(map(str, value))
