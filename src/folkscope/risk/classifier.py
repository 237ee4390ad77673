"""Language models as risk scores: ``predict_proba`` over survey rows, on any engine backend.

Three ways to read a risk score, chosen by the prompt configuration:

multiple-choice (default)
    The next-token probabilities of the answer letters, each summed over its
    usual tokenizations (``"A"`` and ``" A"``), renormalised over the letters:
    ``r = P(positive letter) / (P(A) + P(B))``. With order-bias correction the
    row is scored under every ordering of the choices and the scores are
    averaged. The orderings of a row share everything up to the options, and
    that shared text is sent as one prefix group, so the engine runs it once.
numeric
    The answer is prefilled with ``"0."`` and the digits that follow are read
    from the next-token distribution over ``0``-``9`` (renormalised). The
    paper's reading (``numeric_readout="greedy"``) takes the most likely digit
    twice: ``r = 0.d1d2``. ``"expected"`` is the exact two-digit expectation
    ``sum_d1 p(d1) (d1/10 + sum_d2 p(d2|d1) d2/100)``.
chain-of-thought
    The model writes free text that should end in ``Probability: X%``;
    unparseable answers give NaN, are counted in :attr:`LLMClassifier.last_report`
    and are never replaced by 0.5.

Scores that cannot be computed are NaN and counted; every number that reaches
a metric is real.

Context size: as folktexts' transformers classifier, a prompt longer than
``context_size`` tokens (600 by default) is cut to its last ``context_size``
tokens, so the model sees the end of the features and the question but not
the start of the description. The rows so cut are counted in
:attr:`LLMClassifier.last_report`, logged and reported, never silent;
``context_size=None`` sends every prompt whole. Local models (transformers,
vLLM) cut; a web API takes the whole prompt, as in folktexts.
"""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from folkscope.engine import Engine, GenerateRequest, GenerationSettings
from folkscope.errors import ConfigError, DataError
from folkscope.metrics._thresholds import check_threshold_rule, predict_positive
from folkscope.prompting import PromptBatch, PromptConfig, PromptRenderer, fit_chat_config
from folkscope.readout import DIGIT_READOUTS, parse_probability, read_rendered, read_two_digits
from folkscope.tasks.task import TaskMetadata, get_task

__all__ = ["DEFAULT_CONTEXT_SIZE", "FIT_METHODS", "LLMClassifier", "NUMERIC_READOUTS", "ScoringReport"]

#: how a numeric-risk prompt's two digits are read (``numeric_readout=``): folktexts' greedy digits or their expectation
NUMERIC_READOUTS = DIGIT_READOUTS
#: How :meth:`LLMClassifier.fit` picks the threshold: folktexts' ROC rule or folkscope's accuracy rule
FIT_METHODS = ("roc", "accuracy")
#: folktexts' column of risk scores in a predictions CSV
SCORE_COL_NAME, LABEL_COL_NAME = "risk_score", "label"
#: folktexts' default: prompts are cut to their last 600 tokens
DEFAULT_CONTEXT_SIZE = 600
log = logging.getLogger(__name__)


@dataclass
class ScoringReport:
    """What happened while scoring: counts that metrics must not hide."""

    rows: int = 0
    nan_scores: int = 0
    unparseable: int = 0
    orderings: int = 0
    min_letter_mass: float = float("nan")
    context_size: int | None = None
    truncated_prompts: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "nan_scores": self.nan_scores,
            "unparseable_generations": self.unparseable,
            "orderings_per_row": self.orderings,
            "min_answer_mass": None if np.isnan(self.min_letter_mass) else self.min_letter_mass,
            "context_size": self.context_size,
            "truncated_prompts": self.truncated_prompts,
            "notes": list(self.notes),
        }


class LLMClassifier(ClassifierMixin, BaseEstimator):
    """A language model as a binary risk score: a scikit-learn classifier, as in folktexts.

    ``predict_proba(X)`` has shape (n_rows, 2): P(label = 0) and the risk
    score P(label = 1) (:meth:`compute_risk_estimates_for_dataframe` gives
    the scores alone); ``predict`` thresholds with ``score >= threshold``;
    ``fit`` learns only the threshold. ``get_params``, ``set_params``,
    ``score`` and :func:`sklearn.base.clone` work; a clone shares the loaded
    model (read-only) instead of copying its weights.

    Parameters
    ----------
    engine : Engine
        Any backend (transformers, vLLM, web API, fake); the classifier never
        talks to a model itself.
    task : TaskMetadata or str
        The prediction task.
    prompt_config : PromptConfig, optional
        How rows become prompts (default: the paper's multiple-choice prompt
        with order-bias correction, or its numeric prompt for a task from
        ``get_task(name, use_numeric_qa=True)``).
    threshold : float, default 0.5
        Decision threshold of :meth:`predict`; :meth:`fit` learns it.
    threshold_rule : {">=", ">"}, default ">="
        :meth:`predict` gives 1 where ``score >= threshold`` (folktexts), or
        ``score > threshold``.
    examples : (X, y), optional
        Training rows for few-shot prompts.
    numeric_readout : {"greedy", "expected"}
        How numeric answers are read (see the module docstring).
    max_new_tokens : int, default 512
        Generation budget of chain-of-thought answers.
    temperature : float, optional
        Sampling temperature of chain-of-thought answers (0: greedy; None:
        folktexts' default, greedy or 1.0 in thinking mode). Each row samples
        from its own seeded stream, so a rerun gives the same text.
    seed : int, default 42
        Seed of those streams.
    context_size : int or None, default 600
        Longest prompt in tokens; a longer one is cut to its last
        ``context_size`` tokens, as folktexts does, and counted
        (:attr:`last_report`). None sends every prompt whole.

    Examples
    --------
    >>> from folkscope.engine import Engine
    >>> from folkscope.data import load_bundled
    >>> engine = Engine.from_model("demo", backend="fake", use_cache=False)
    >>> clf = LLMClassifier(engine, "ACSIncome")
    >>> proba = clf.predict_proba(load_bundled("acs-income-10").iloc[:, :10])
    >>> proba.shape, bool(((proba >= 0) & (proba <= 1)).all()), bool(np.allclose(proba.sum(axis=1), 1))
    ((10, 2), True, True)
    """

    #: folktexts' inference options and their defaults (batch_size None: the engine batches by a token budget)
    DEFAULT_INFERENCE_KWARGS: dict[str, Any] = {"context_size": DEFAULT_CONTEXT_SIZE, "batch_size": None}

    def __init__(
        self,
        engine: Engine,
        task: TaskMetadata | str,
        *,
        prompt_config: PromptConfig | None = None,
        threshold: float = 0.5,
        threshold_rule: str = ">=",
        examples: tuple[pd.DataFrame, pd.Series] | None = None,
        numeric_readout: str = "greedy",
        max_new_tokens: int = 512,
        temperature: float | None = None,
        seed: int = 42,
        context_size: int | None = DEFAULT_CONTEXT_SIZE,
    ) -> None:
        if numeric_readout not in NUMERIC_READOUTS:
            raise ConfigError(
                f"numeric_readout must be one of {', '.join(NUMERIC_READOUTS)}, got {numeric_readout!r}",
                parameter="numeric_readout",
                value=numeric_readout,
            )
        _check_threshold(threshold, threshold_rule)
        # scikit-learn reads every constructor argument back from the attribute of its name (get_params);
        # task and prompt_config hold what they resolve to, which builds the same classifier again
        self.engine = engine
        self.task = get_task(task)
        self.prompt_config = prompt_config or PromptConfig(numeric_risk_prompting=self.task.use_numeric_qa)
        self.threshold = float(threshold)
        self.threshold_rule = threshold_rule
        self.examples = examples
        self.numeric_readout = numeric_readout
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = temperature
        # None: folktexts' default, greedy, or 1.0 in thinking mode (thinking models should not run greedy)
        thinking = 1.0 if self.prompt_config.enable_thinking else 0.0
        self._generation_temperature = thinking if temperature is None else float(temperature)
        # checked now, not at the first row
        GenerationSettings(max_new_tokens=self.max_new_tokens, temperature=self._generation_temperature)
        self.seed = int(seed)
        if context_size is not None and (
            isinstance(context_size, bool) or not isinstance(context_size, int) or context_size < 1
        ):
            raise ConfigError(
                f"context_size must be a positive number of tokens or None, got {context_size!r}",
                parameter="context_size",
                value=context_size,
            )
        self.context_size = context_size
        # a chat template without a system role: folktexts' default system prompt is left out, a given one refused
        self.renderer = PromptRenderer(
            self.task, fit_chat_config(self.prompt_config, engine.tokenizer), examples=examples
        )
        self.last_report = ScoringReport()
        self.last_details: pd.DataFrame | None = None
        self.classes_ = np.array([0, 1])
        self._threshold_fitted_on = 0

    # -- scikit-learn interface ----------------------------------------------------
    def predict_proba(
        self,
        data: pd.DataFrame,
        predictions_save_path: str | Path | None = None,
        labels: pd.Series | np.ndarray | None = None,
    ) -> np.ndarray:
        """Class probabilities of every row, shape (n_rows, 2): ``[1 - risk, risk]``; NaN where no score could be read.

        Parameters
        ----------
        data : pandas.DataFrame
        predictions_save_path : path, optional
            folktexts' CSV of predictions (index, ``risk_score``, ``label``):
            read instead of scoring when it exists and lists exactly these
            rows, else written after scoring.
        labels : array-like, optional
            Written beside the scores in that CSV.
        """
        if predictions_save_path is not None:
            scores = _read_predictions(predictions_save_path, data)
            if scores is None:
                scores = self.compute_risk_estimates_for_dataframe(data)
                _write_predictions(predictions_save_path, data, scores, labels)
        else:
            if labels is not None:
                raise ConfigError(
                    "labels= is written beside the scores in predictions_save_path=; pass that path too",
                    parameter="labels",
                )
            scores = self.compute_risk_estimates_for_dataframe(data)
        return np.column_stack([1.0 - scores, scores])

    def compute_risk_estimates_for_dataframe(self, df: pd.DataFrame) -> np.ndarray:
        """Risk score P(label = 1) of every row, shape (n_rows,); NaN where none could be read."""
        self.last_report = ScoringReport()
        batch = self.renderer.render(df)
        self._count_cut(batch)
        mode = self.prompt_config.mode
        if mode == "multiple_choice":
            scores, details = self._multiple_choice(batch)
        elif mode == "numeric":
            scores, details = self._numeric(batch)
        else:
            scores, details = self._chain_of_thought(batch)
        self.last_details = details.set_index(pd.Index(batch.row_ids, name="row_id"))
        self.last_report.rows = len(scores)
        self.last_report.nan_scores = int(np.isnan(scores).sum())
        return scores

    def predict(
        self,
        data: pd.DataFrame,
        predictions_save_path: str | Path | None = None,
        labels: pd.Series | np.ndarray | None = None,
    ) -> np.ndarray:
        """0/1 predictions ``risk >= threshold`` (``>`` with ``threshold_rule=">"``).

        Raises
        ------
        DataError
            A row without a score: it has no label to give (its probabilities
            are NaN in :meth:`predict_proba`).
        """
        scores = self.predict_proba(data, predictions_save_path, labels)[:, 1]
        missing = int(np.isnan(scores).sum())
        if missing:
            raise DataError(
                f"{missing} of {len(scores)} rows have no risk score ({'; '.join(self.last_report.notes) or 'NaN'}), so "
                "predict cannot label them; use predict_proba, whose NaN rows say which"
            )
        return predict_positive(scores, self.threshold, self.threshold_rule).astype(int)

    def fit(
        self,
        X: pd.DataFrame,
        y: pd.Series | np.ndarray,
        *,
        false_pos_cost: float = 1.0,
        false_neg_cost: float = 1.0,
        method: str = "roc",
    ) -> LLMClassifier:
        """Fit only the decision threshold on ``(X, y)``; the model is never trained.

        Parameters
        ----------
        X, y
            Rows and their 0/1 labels; rows without a score are left out.
        false_pos_cost, false_neg_cost : float
            ``method="roc"``: the costs weighed (folktexts' arguments).
        method : {"roc", "accuracy"}
            ``"roc"`` (folktexts): the ROC-curve score that minimises
            ``false_pos_cost * FPR + false_neg_cost * FNR``
            (:func:`~folkscope.metrics.compute_best_threshold`).
            ``"accuracy"``: the accuracy-maximising threshold nearest 0.5
            (:func:`~folkscope.metrics.best_accuracy_threshold`), folkscope's
            rule before issue 29.

        Raises
        ------
        DataError
            The scored rows hold a single class: no threshold separates them.
        """
        from folkscope.metrics import best_accuracy_threshold, compute_best_threshold

        if method not in FIT_METHODS:
            raise ConfigError(
                f"method must be one of {', '.join(FIT_METHODS)}, got {method!r}", parameter="method", value=method
            )
        scores = self.predict_proba(X)[:, 1]
        keep = ~np.isnan(scores)
        labels, kept = np.asarray(y)[keep], scores[keep]
        if len(np.unique(labels)) < 2:
            raise DataError(
                f"fitting the threshold needs scored rows of both labels; the {int(keep.sum())} scored rows hold "
                f"{'no' if len(labels) == 0 else 'one'} class: use more rows (--fit-threshold N)"
            )
        if method == "roc":
            fitted = compute_best_threshold(labels, kept, false_pos_cost=false_pos_cost, false_neg_cost=false_neg_cost)
            self.threshold = float(min(fitted, 1.0))  # inf (no row positive) is clipped to 1, as folktexts does
        else:
            self.threshold = float(best_accuracy_threshold(labels, kept, threshold_rule=self.threshold_rule))
        self._threshold_fitted_on = len(labels)
        return self

    def __sklearn_clone__(self) -> LLMClassifier:
        """A new classifier with these parameters; the engine (or loaded model) is shared, not deep-copied."""
        return type(self)(**self.get_params(deep=False))

    def set_params(self, **params: Any) -> LLMClassifier:
        """Change parameters (scikit-learn's ``set_params``); the classifier is rebuilt from them, so every check applies."""
        current = self.get_params(deep=False)
        unknown = sorted(set(params) - set(current))
        if unknown:
            raise ConfigError(
                f"unknown parameter(s) {', '.join(unknown)} of {type(self).__name__}; known: {', '.join(sorted(current))}",
                parameter=unknown[0],
            )
        self.__init__(**{**current, **params})  # type: ignore[misc]
        return self

    # -- folktexts' names ----------------------------------------------------------
    @property
    def model_name(self) -> str:
        """The model's name, as in run folders."""
        model = self.engine.identity()["backend"].get("model") or {}
        return str(model.get("name") or self.engine.identity()["backend"].get("name", "model"))

    @property
    def correct_order_bias(self) -> bool:
        """Whether multiple-choice scores average over every ordering of the answers."""
        return bool(self.prompt_config.correct_order_bias)

    @property
    def inference_kwargs(self) -> dict[str, Any]:
        """folktexts' inference options: ``context_size`` (``batch_size`` where a subclass takes it)."""
        return {"context_size": self.context_size, "batch_size": getattr(self, "batch_size", None)}

    def set_inference_kwargs(self, **kwargs: Any) -> None:
        """Change ``context_size`` or ``batch_size`` (folktexts' inference options)."""
        self.set_params(**kwargs)

    def compute_risk_estimates_for_dataset(self, dataset: Any) -> dict[str, np.ndarray]:
        """Risk scores of a dataset's train, test and (when it has rows) val splits."""
        splits = {"train": dataset.get_train()[0], "test": dataset.get_test()[0]}
        val = dataset.get_val()
        if val is not None and len(val[0]):
            splits["val"] = val[0]
        return {name: self.compute_risk_estimates_for_dataframe(X) for name, X in splits.items()}

    # -- checks --------------------------------------------------------------------
    def _count_cut(self, batch: PromptBatch) -> None:
        """Count (and say) the rows whose prompt is longer than the context size: the engine cuts those to their last tokens.

        A row counts when any prompt it sends is over: any answer ordering
        (multiple choice), or the prompt continued with its first digit
        (numeric: one token longer). Where the backend takes whole prompts
        (a web API, the fake model by default) nothing is cut and the
        report's ``context_size`` is None.
        """
        limit = self.context_size if self.engine.cuts_prompts else None
        self.last_report.context_size = limit
        if limit is None or len(batch) == 0:
            return
        mode = self.prompt_config.mode
        slots = range(max(1, len(batch.orderings))) if mode == "multiple_choice" else range(1)
        lengths = np.max([self.engine.count_tokens(batch.prompts(o)) for o in slots], axis=0) + (mode == "numeric")
        over = lengths > limit
        if not over.any():
            return
        self.last_report.truncated_prompts = int(over.sum())
        note = (
            f"{int(over.sum())} of {len(batch)} rows had prompts longer than the context size ({limit} tokens; longest "
            f"{int(lengths.max())}): cut to their last {limit} tokens, as folktexts does, so the model did not see the "
            "start of the description; --context-size sets the limit"
        )
        self.last_report.notes.append(note)
        log.warning("%s", note)

    # -- the three readings --------------------------------------------------------
    def _multiple_choice(self, batch: PromptBatch) -> tuple[np.ndarray, pd.DataFrame]:
        orderings = batch.orderings
        self.last_report.orderings = len(orderings)
        # orderings of a row share all text up to the options: one prefix group
        readout = read_rendered(self.engine, batch, context_size=self.context_size)
        first = orderings[0]
        positive = first.permutation[first.labels.index(1)]  # the option whose label is 1
        per_ordering = readout.per_ordering[:, :, positive]
        mass = np.nan_to_num(readout.mass, nan=0.0)  # an unscored ordering put no usable mass on the letters
        if len(batch):
            self.last_report.min_letter_mass = float(np.nanmin(mass))
        details = pd.DataFrame({f"score_ordering_{o}": per_ordering[:, o] for o in range(len(orderings))})
        details["answer_mass"] = mass.mean(axis=1)
        return per_ordering.mean(axis=1), details

    def _numeric(self, batch: PromptBatch) -> tuple[np.ndarray, pd.DataFrame]:
        readout = read_two_digits(
            self.engine, batch.prompts(0), how=self.numeric_readout, context_size=self.context_size
        )
        first_ok, second_ok = readout.first_ok, readout.second_ok
        for what, missing in (("first", int((~first_ok).sum())), ("second", int((first_ok & ~second_ok).sum()))):
            if missing:
                self.last_report.notes.append(
                    f"{missing} rows had no usable probabilities for the {what} digit of the numeric answer; scored NaN"
                )
        details = pd.DataFrame(
            {
                "first_digit": readout.first_digit,
                "first_digit_prob": np.where(first_ok, np.nan_to_num(readout.first, nan=0.0).max(axis=1), np.nan),
            }
        )
        return readout.values, details

    def _chain_of_thought(self, batch: PromptBatch) -> tuple[np.ndarray, pd.DataFrame]:
        def settings(
            row_id: object,
        ) -> GenerationSettings:  # per row id: a sample depends on neither batch nor subsample
            seed = (
                (self.seed * 1_000_003 + zlib.crc32(str(row_id).encode())) % 2**63
                if self._generation_temperature > 0
                else 0
            )
            return GenerationSettings(
                max_new_tokens=self.max_new_tokens, temperature=self._generation_temperature, seed=seed
            )

        requests = [
            GenerateRequest(p, settings(batch[i].row_id), self.context_size) for i, p in enumerate(batch.prompts(0))
        ]
        texts = [
            r.text for r in self.engine.generate(requests, unit="rows", description="generating (chain of thought)")
        ]
        strip = self.prompt_config.enable_thinking
        parsed = [parse_probability(t, strip_think=strip) for t in texts]
        scores = np.array([np.nan if v is None else v for v in parsed], dtype=float)
        self.last_report.unparseable = int(sum(v is None for v in parsed))
        if self.last_report.unparseable:
            self.last_report.notes.append(
                f"{self.last_report.unparseable} chain-of-thought answers had no parseable 'Probability: X%'"
            )
        return scores, pd.DataFrame({"generation": texts})


def _check_threshold(threshold: object, rule: object) -> None:
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.floating))
        or not 0.0 <= float(threshold) <= 1.0
    ):
        raise ConfigError(f"threshold must be in [0, 1], got {threshold!r}", parameter="threshold", value=threshold)
    check_threshold_rule(rule)


def _read_predictions(path: str | Path, data: pd.DataFrame) -> np.ndarray | None:
    """Scores of a folktexts predictions CSV when it lists exactly ``data``'s rows, in order; else None (scored anew)."""
    path = Path(path).with_suffix(".csv")
    if not path.is_file():
        return None
    try:
        saved = pd.read_csv(path, index_col=0)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        log.warning("predictions file %s is unreadable (%s); scoring the rows again", path, exc)
        return None
    if SCORE_COL_NAME not in saved.columns or list(saved.index.astype(str)) != list(data.index.astype(str)):
        log.warning("predictions file %s does not list these rows; scoring them again and replacing it", path)
        return None
    return saved[SCORE_COL_NAME].to_numpy(dtype=float)


def _write_predictions(path: str | Path, data: pd.DataFrame, scores: np.ndarray, labels: Any) -> None:
    """folktexts' predictions CSV: the rows' index, ``risk_score`` and ``label`` (written whole or not at all)."""
    from folkscope._io import atomic_write

    frame = pd.DataFrame({SCORE_COL_NAME: scores}, index=data.index)
    frame[LABEL_COL_NAME] = None if labels is None else np.asarray(labels)
    atomic_write(Path(path).with_suffix(".csv"), lambda fh: fh.write(frame.to_csv().encode("utf-8")))
