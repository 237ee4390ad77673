"""Rows of a table to prompts, all at once: the one place that assembles survey prompts.

:class:`PromptRenderer` binds a task, a :class:`PromptConfig` and (for
few-shot) the training rows, checks they fit together, and renders whole
tables into a :class:`PromptBatch`: the shared ``prefix`` once, one
``row_text`` per row, the few-shot blocks, and per answer ordering the
options and prefill. Full prompts are formed only on request, by
element-wise concatenation of object arrays.

The default ACSIncome prompt (multiple-choice, zero-shot)::

    The following data corresponds to a survey respondent. The survey was conducted among US residents in 2018. Please answer the question based on the information provided. The data provided is enough to reach an approximate answer.

    Information:
    - The age is: 18 years old.
    - ...

    Question: What is this person's estimated yearly income?
    A. Below $50,000.
    B. Above $50,000.
    Answer:
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from folkscope.engine.requests import Prompt
from folkscope.errors import ConfigError
from folkscope.prompting.config import PromptConfig
from folkscope.prompting.features import feature_order, render_feature_block
from folkscope.prompting.fewshot import ExamplePool, draw_for_rows, shuffled_pool
from folkscope.prompting.orderings import AnswerOrdering, answer_orderings
from folkscope.prompting.templates import (
    ANSWER_PREFILL,
    COT_INSTRUCTION,
    INFO_HEADER,
    NUMERIC_ANSWER_LEAD,
    NUMERIC_PREFILL,
    QUESTION_HEADER,
    few_shot_description,
    task_description,
)
from folkscope.prompting.types import RenderedPrompt, user_turn
from folkscope.tasks.task import TaskMetadata, get_task

__all__ = ["PromptBatch", "PromptRenderer", "render_dataset", "render_prompts"]


class _SplitData(Protocol):
    task: TaskMetadata

    def get_train(self) -> tuple[pd.DataFrame, pd.Series]: ...


@dataclass(frozen=True, eq=False)
class PromptBatch:
    """Prompts of many rows, stored in their shared parts (see :class:`RenderedPrompt`).

    ``full_texts(o)[i] == batch[i].full_text(o)``; the arrays are object
    arrays aligned with ``row_ids``. ``examples`` holds, per ordering slot,
    one string (reused examples) or one string per row; it is empty when
    zero-shot.
    """

    task_name: str
    config: PromptConfig
    row_ids: np.ndarray
    labels: np.ndarray | None
    prefix: str
    row_texts: np.ndarray
    options: tuple[str, ...]
    prefill: str
    orderings: tuple[AnswerOrdering, ...]
    examples: tuple[Any, ...] = ()
    examples_shared: bool = False
    custom_suffix: str = ""

    @property
    def mode(self) -> str:
        return self.config.mode

    @property
    def n_slots(self) -> int:
        """Prompts per row: the number of orderings (1 for numeric and chain-of-thought)."""
        return len(self.options)

    @property
    def suffixes(self) -> tuple[str, ...]:
        """Per ordering: the text after each row's text (options, prefill, custom suffix), the same for every row.

        Zero-shot: ``full_texts(o)[i] == prefix + row_texts[i] + suffixes[o]``.
        """
        return tuple(opt + self.prefill + self.custom_suffix for opt in self.options)

    def __len__(self) -> int:
        return len(self.row_ids)

    def __getitem__(self, i: int) -> RenderedPrompt:
        if not -len(self) <= i < len(self):
            raise IndexError(f"row {i} out of range for {len(self)} prompts")
        examples: tuple[str, ...] = ()
        if self.examples:
            examples = tuple(str(e if self.examples_shared else e[i]) for e in self.examples)
        return RenderedPrompt(
            row_id=self.row_ids[i].item() if isinstance(self.row_ids[i], np.generic) else self.row_ids[i],
            prefix=self.prefix,
            row_text=str(self.row_texts[i]),
            options=self.options,
            prefill=self.prefill,
            orderings=self.orderings,
            examples=examples,
            examples_shared=self.examples_shared,
            label=None if self.labels is None else int(self.labels[i]),
            mode=self.mode,
            config=self.config,
            custom_suffix=self.custom_suffix,
        )

    def __iter__(self) -> Iterator[RenderedPrompt]:
        return (self[i] for i in range(len(self)))

    def _slot(self, ordering: int | AnswerOrdering | None) -> int:
        index = 0 if ordering is None else ordering.index if isinstance(ordering, AnswerOrdering) else int(ordering)
        if not 0 <= index < self.n_slots:
            raise ConfigError(
                f"ordering {index} does not exist; there are {self.n_slots}", parameter="ordering", value=index
            )
        return index

    def _head(self, o: int) -> Any:
        return self.prefix + self.examples[o] if self.examples else self.prefix

    def full_texts(self, ordering: int | AnswerOrdering | None = None) -> np.ndarray:
        """Every row's complete plain-text prompt for one ordering (object array)."""
        o = self._slot(ordering)
        tail = self.options[o] + self.prefill + self.custom_suffix
        if self.examples and not self.examples_shared:
            heads = (self.prefix + self.examples[o]).tolist()
            return np.array([f"{h}{r}{tail}" for h, r in zip(heads, self.row_texts.tolist())], dtype=object)
        head = self._head(o)
        return np.array([f"{head}{r}{tail}" for r in self.row_texts.tolist()], dtype=object)

    def user_texts(self, ordering: int | AnswerOrdering | None = None) -> np.ndarray:
        """Every row's chat user turn for one ordering (object array; see :meth:`RenderedPrompt.user_text`)."""
        o = self._slot(ordering)
        bodies = self._head(o) + self.row_texts + self.options[o]
        return np.array([user_turn(b, self.prefill, self.custom_suffix, self.config) for b in bodies], dtype=object)

    def prompts(self, ordering: int | AnswerOrdering | None = None) -> list[Prompt]:
        """Every row's engine prompt for one ordering (its full text, or a chat prompt)."""
        if not self.config.is_chat:
            return [str(t) for t in self.full_texts(ordering)]
        return [self[i].to_prompt(ordering) for i in range(len(self))]

    def answers(self, ordering: int | AnswerOrdering | None = None) -> np.ndarray | None:
        """Letter of every row's true label in one ordering (None without labels or orderings)."""
        if self.labels is None or not self.orderings:
            return None
        o = self.orderings[self._slot(ordering)]
        lookup = {label: letter for letter, label in zip(o.letters, o.labels)}
        return np.array([lookup[int(v)] for v in self.labels], dtype=object)


class PromptRenderer:
    """A task and a prompt configuration, checked together, ready to render rows.

    Parameters
    ----------
    task : TaskMetadata or str
        The task (features, question, choices, survey year).
    config : PromptConfig, optional
        Defaults to the paper's prompt.
    examples : (X, y), optional
        Training rows and labels for few-shot examples (required when
        ``config.few_shot`` is set).

    Raises
    ------
    ConfigError
        When the configuration does not fit the task or the examples
        (unknown ``order`` columns, too few training rows for the few-shot
        composition, a task without the question the mode needs).

    Examples
    --------
    >>> from folkscope.data import load_bundled
    >>> X = load_bundled("acs-income-10")
    >>> batch = PromptRenderer("ACSIncome").render(X)
    >>> print(batch.full_texts(1)[0].splitlines()[-3:])
    ['A. Above $50,000.', 'B. Below $50,000.', 'Answer:']
    """

    def __init__(
        self,
        task: TaskMetadata | str,
        config: PromptConfig | None = None,
        *,
        examples: tuple[pd.DataFrame, pd.Series | np.ndarray] | None = None,
    ) -> None:
        self.task = get_task(task)
        self.config = config if config is not None else PromptConfig()
        if not isinstance(self.config, PromptConfig):
            raise ConfigError(f"config must be a PromptConfig, got {type(self.config).__name__}", parameter="config")
        cfg, task_ = self.config, self.task
        feature_order(task_.features, cfg.order)  # unknown order columns raise now
        self.classes = tuple(sorted(c.label for c in task_.choices))
        if cfg.mode == "multiple_choice":
            if not task_.choices:
                raise ConfigError(
                    f"task {task_.name} has no answer choices for multiple-choice prompting", parameter="task"
                )
            scheme = cfg.ordering_scheme if cfg.correct_order_bias else "identity"
            self.orderings = answer_orderings(
                [c.text for c in task_.choices],
                [c.label for c in task_.choices],
                scheme=scheme,
                max_orderings=cfg.max_orderings,
            )
            question = task_.question
        else:
            self.orderings = ()
            question = task_.numeric_question
        if cfg.show_question and not question:
            raise ConfigError(f"task {task_.name} has no question text for {cfg.mode} prompting", parameter="task")
        self.question_line = f"{QUESTION_HEADER}{question}\n" if cfg.show_question else ""
        self.example_question = question
        # folktexts' layout: the custom suffix follows the answer prefill; without the question there are no
        # options either (the prompt ends "...\n\nAnswer:"); chain of thought ends on its "Reasoning:"
        self.custom_suffix = cfg.custom_prompt_suffix or ""
        if cfg.mode == "multiple_choice":
            self.options = tuple(o.options_block() if cfg.show_question else "" for o in self.orderings)
            self.prefill = ANSWER_PREFILL
        elif cfg.mode == "numeric":
            self.options = ("",)
            self.prefill = NUMERIC_PREFILL
        else:
            self.options = (f"\n{COT_INSTRUCTION}",)
            self.prefill = ""
        describe = few_shot_description if cfg.few_shot is not None else task_description
        # the description, the custom prefix on its own line(s), one blank line, then "Information:"
        custom = cfg.custom_prompt_prefix or ""
        self.prefix = (
            describe(task_.survey_year)
            + "\n"
            + (custom if custom.endswith("\n") or not custom else custom + "\n")
            + "\n"
        )
        self.pool: ExamplePool | None = None
        if cfg.few_shot is not None:
            if examples is None:
                raise ConfigError(
                    "few-shot prompting needs training rows to draw examples from; pass examples=(X_train, y_train) "
                    "or use render_dataset",
                    parameter="examples",
                )
            self.pool = ExamplePool.make(*examples)
            self.pool.check(cfg.few_shot, self.classes)
            if not cfg.few_shot.hide_question and not question:
                raise ConfigError(
                    f"task {task_.name} has no question text for its few-shot examples; set few_shot.hide_question",
                    parameter="task",
                )

    # -- pieces --------------------------------------------------------------------
    @property
    def _folktexts_examples(self) -> bool:
        """Whether solved examples read as folktexts 0.7.1 writes them (the ``folktexts`` wording of a task).

        folktexts shows every example's options in the task's own order while
        its answer letter is the label's letter in the final question's
        ordering (so in a reordered prompt the examples' answers point at the
        wrong option), and writes a numeric example's answer after the prefill
        (``Answer (between 0 and 1): 0. 1``). Other wordings show the options
        in the final question's ordering and write ``... 1.0``.
        """
        return self.task.wording == "folktexts"

    def _example_answer(self, o: int, label: int) -> str:
        if self.config.mode == "numeric":
            if self._folktexts_examples:
                return f"{NUMERIC_PREFILL} {label}"
            return f"{NUMERIC_ANSWER_LEAD} {float(label):.1f}"
        return f"{ANSWER_PREFILL} {self.orderings[o].letter_of(label)}"

    def _example_blocks(self, row_ids: np.ndarray) -> tuple[tuple[Any, ...], bool]:
        cfg, pool = self.config, self.pool
        if cfg.few_shot is None or pool is None:
            return (), False
        fs = cfg.few_shot
        reused = fs.reused(cfg.correct_order_bias)
        positions = draw_for_rows(pool, fs, self.classes, row_ids, correct_order_bias=cfg.correct_order_bias)
        used, inverse = np.unique(positions, return_inverse=True)
        inverse = inverse.reshape(positions.shape)
        info = render_feature_block(pool.X.iloc[used], self.task, cfg, head=INFO_HEADER, tail="\n")
        labels = pool.y[used]
        # as folktexts lays examples out: the custom suffix after each answer, the custom prefix again before
        # every later example and before the row; the question shown unless hide_question (not show_question)
        custom, suffix = cfg.custom_prompt_prefix or "", cfg.custom_prompt_suffix or ""
        again = (custom if custom.endswith("\n") else custom + "\n") + "\n" if custom else ""
        question_line = f"{QUESTION_HEADER}{self.example_question}\n"
        blocks = []
        for o in range(len(self.options)):
            question = ""
            if not fs.hide_question:
                shown = 0 if self._folktexts_examples else o
                question = question_line + (self.orderings[shown].options_block() if self.orderings else "")
            answers = [f"{self._example_answer(o, int(v))}\n\n{suffix}{again}" for v in self.classes]
            answers = np.array(answers, dtype=object)
            texts = (info + question + answers[np.searchsorted(self.classes, labels)]).tolist()
            joined = ["".join([texts[j] for j in row]) for row in inverse.tolist()]
            blocks.append(joined[0] if reused else np.array(joined, dtype=object))
        return tuple(blocks), reused

    # -- rendering -----------------------------------------------------------------
    def render(self, X: pd.DataFrame, y: pd.Series | np.ndarray | Sequence[int] | None = None) -> PromptBatch:
        """Render every row of ``X`` (index = row ids); ``y`` adds labels (and answer letters) to the batch."""
        if not isinstance(X, pd.DataFrame):
            raise ConfigError(f"rows must be a pandas DataFrame, got {type(X).__name__}", parameter="X")
        labels = None
        if y is not None:
            if isinstance(y, pd.Series) and not y.index.equals(X.index):
                y = y.reindex(X.index)
            labels = np.asarray(y)
            if len(labels) != len(X):
                raise ConfigError(f"{len(X)} rows but {len(labels)} labels", parameter="y")
            if pd.isna(labels).any():
                raise ConfigError("labels have blanks (rows without a label)", parameter="y")
            labels = labels.astype(np.int64)
            unknown = sorted(set(np.unique(labels).tolist()) - set(self.classes))
            if unknown:
                raise ConfigError(
                    f"labels {unknown} are not labels of the task's choices {self.classes}", parameter="y"
                )
        row_texts = render_feature_block(X, self.task, self.config, head=INFO_HEADER, tail="\n" + self.question_line)
        row_ids = X.index.to_numpy()
        examples, shared = self._example_blocks(row_ids)
        return PromptBatch(
            task_name=self.task.name,
            config=self.config,
            row_ids=row_ids,
            labels=labels,
            prefix=self.prefix,
            row_texts=row_texts,
            options=self.options,
            prefill=self.prefill,
            orderings=self.orderings,
            examples=examples,
            examples_shared=shared,
            custom_suffix=self.custom_suffix,
        )

    def render_row(
        self, row: pd.Series | Mapping[str, Any], *, row_id: Any = None, label: int | None = None
    ) -> RenderedPrompt:
        """Render one row (a Series, whose name is the row id, or a mapping of column to value)."""
        if isinstance(row, pd.Series):
            rid = row.name if row_id is None else row_id
            frame = row.to_frame().T
        else:
            rid = 0 if row_id is None else row_id
            frame = pd.DataFrame([dict(row)])
        frame.index = pd.Index([rid])
        return self.render(frame, None if label is None else [label])[0]


def render_prompts(
    task: TaskMetadata | str,
    X: pd.DataFrame,
    config: PromptConfig | None = None,
    *,
    y: pd.Series | np.ndarray | None = None,
    examples: tuple[pd.DataFrame, pd.Series | np.ndarray] | None = None,
) -> PromptBatch:
    """Render a table of rows in one call (see :class:`PromptRenderer`)."""
    return PromptRenderer(task, config, examples=examples).render(X, y)


def render_dataset(dataset: _SplitData, config: PromptConfig | None = None, *, split: str = "test") -> PromptBatch:
    """Render one split of a :class:`~folkscope.data.Dataset`; few-shot examples come from its train split
    (in a random order seeded by the few-shot seed, :func:`~folkscope.prompting.fewshot.shuffled_pool`)."""
    getter = getattr(dataset, f"get_{split}", None)
    if split not in ("train", "val", "test") or getter is None:
        raise ConfigError(f"split must be train, val or test, got {split!r}", parameter="split", value=split)
    X, y = getter()
    cfg = config if config is not None else PromptConfig()
    examples = shuffled_pool(*dataset.get_train(), seed=cfg.few_shot.seed) if cfg.few_shot is not None else None
    return PromptRenderer(dataset.task, cfg, examples=examples).render(X, y)
