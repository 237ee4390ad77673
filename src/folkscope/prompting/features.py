"""The feature block: a table's rows as short sentences, rendered column by column.

Rendering is vectorised. For each column the *distinct* values are rendered
once (:meth:`ColumnToText.render`) and turned into their finished line
(bullet, label, connector, value, punctuation); rows then gather their line
by integer code (numpy fancy indexing), and each row's block is one
``str.join`` of its gathered lines. No field is formatted per row.

Formats (``connector="is:"``), as folktexts 0.7.1 lays them out::

    textbullet   - The age is: 42 years old.        (one line per feature)
    bullet       - age is: 42 years old             (one line per feature)
    comma        age is: 42 years old, sex is: Male (one line)
    text         The age is: 42 years old. The sex is: Male.   (one paragraph)

Label and value are joined as ``<label> <connector> <value>``, except the
connector ``:``, which attaches to the label (``age: 42 years old``). The
block ends with one line break, whatever the last value ends with (folktexts
strips trailing commas, spaces and line breaks before adding it). A column
whose values are statements (:attr:`~folkscope.tasks.columns.ColumnToText.statement`)
shows the statement as its line in the textbullet and text formats.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError, UnknownColumnError
from folkscope.prompting.config import PromptConfig
from folkscope.tasks.task import TaskMetadata

__all__ = ["feature_order", "join_label", "render_feature_block"]


def feature_order(features: Sequence[str], order: Sequence[str]) -> tuple[str, ...]:
    """Features with the ``order`` columns first and the rest after, in their original order.

    Examples
    --------
    >>> feature_order(["AGEP", "COW", "SCHL", "SEX"], ["SCHL", "AGEP"])
    ('SCHL', 'AGEP', 'COW', 'SEX')
    """
    unknown = [c for c in order if c not in features]
    if unknown:
        raise ConfigError(
            f"variation order names column(s) {', '.join(unknown)} that are not features of the task; "
            f"features: {', '.join(features)}",
            parameter="order",
            value=unknown,
        )
    return (*order, *(f for f in features if f not in order))


def join_label(label: str, connector: str) -> str:
    """``label`` followed by the connector and the space before the value.

    Examples
    --------
    >>> join_label("The age", "is:"), join_label("age", "="), join_label("age", ":"), join_label("age", ",")
    ('The age is: ', 'age = ', 'age: ', 'age , ')
    """
    return f"{label}: " if connector == ":" else f"{label} {connector} "


#: per format: text before and after each feature's ``<label> <connector> <value>``, then before and after a
#: statement that stands for the whole line (None: the format shows statements as values)
_LAYOUT = {
    "textbullet": ("- The ", ".\n", "- ", ".\n"),
    "bullet": ("- ", "\n", None, None),
    "comma": ("", ", ", None, None),
    "text": ("The ", ". ", "", ". "),
}
#: what folktexts strips from the end of a block before its closing line break
_TRAILING = ", \n"


def _pieces(
    description: str, values: np.ndarray, fmt: str, connector: str, last: bool, statements: np.ndarray
) -> np.ndarray:
    """The finished text of one column for each of its distinct values.

    ``statements`` marks the values that are whole statements: in the
    textbullet and text formats they stand for the line (without label and
    connector). The last column's texts end the block, so folktexts' strip
    of trailing ``", \\n"`` and its closing line break apply to them.
    """
    before, after, s_before, s_after = _LAYOUT[fmt]
    head = join_label(description, connector)
    out = [
        f"{s_before}{v}{s_after}" if is_statement and s_before is not None else f"{before}{head}{v}{after}"
        for v, is_statement in zip(values, statements)
    ]
    if last:
        out = [piece.rstrip(_TRAILING) + "\n" for piece in out]
    return np.array(out, dtype=object)


def render_feature_block(
    X: pd.DataFrame, task: TaskMetadata, config: PromptConfig, *, head: str = "", tail: str = ""
) -> np.ndarray:
    """The feature block of every row of ``X``, as an object array of strings.

    Parameters
    ----------
    X : pandas.DataFrame, shape (n_rows, >= n_features)
        Rows holding at least the task's features (raw survey codes).
    task : TaskMetadata
        Which features, and their text mappings.
    config : PromptConfig
        ``format``, ``connector``, ``granularity`` and ``order``.
    head, tail : str
        Text placed before and after each block (folded into the first and
        last columns' distinct values, so they cost nothing per row).

    Returns
    -------
    numpy.ndarray of object, shape (n_rows,)
        Each block ends with a line break.
    """
    columns = feature_order(task.features, config.order)
    missing = [c for c in columns if c not in X.columns]
    if missing:
        raise UnknownColumnError(
            f"the rows lack feature column(s) {', '.join(missing)} of task {task.name}",
            parameter="X",
            value=missing,
        )
    gathered: list[list[str]] = []
    last = len(columns) - 1
    for j, name in enumerate(columns):
        col = task.column_to_text(name)
        codes, uniques = pd.factorize(X[name], use_na_sentinel=False)
        distinct = pd.Series(uniques)
        texts = col.render(distinct, granularity=config.granularity)  # type: ignore[arg-type]
        statements = col.statements(distinct, granularity=config.granularity)  # type: ignore[arg-type]
        pieces = _pieces(col.description, texts.to_numpy(), config.format, config.connector, j == last, statements)
        if j == 0 and head:
            pieces = head + pieces
        if j == last and tail:
            pieces = pieces + tail
        gathered.append(pieces[codes].tolist() if len(pieces) else [])
    # one join per row copies each character once (summing column arrays would copy the
    # growing prefix once per column)
    return np.array(["".join(parts) for parts in zip(*gathered)], dtype=object)
