"""An allocation run's answer in one line of plain text: the page's headline and the terminal's last word.

Said once, from the metrics alone (no HTML, no I/O): who the top 1 of each
pool would leave out, against the four-fifths rule, and the best-supported
rank bias.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from folkscope.allocation.outcomes import FOUR_FIFTHS, headline_bias, interval_text

__all__ = ["answer"]


def answer(metrics: Mapping[str, Any]) -> str:
    """The least-picked group at k = 1 and its impact ratio, then the strongest evidence of rank bias.

    Parameters
    ----------
    metrics : mapping
        The run's ``metrics.json``: ``min_impact_ratio_k1``, ``n_pools``,
        ``bias`` (records), ``reference``, or ``nothing_scored``.

    Returns
    -------
    str
        One or two sentences, plain text.

    Examples
    --------
    >>> answer({"n_pools": 6, "reference": "White men", "bias": [],
    ...         "min_impact_ratio_k1": {"group": "Black women", "value": 0.5, "selected": 1, "n": 6}})
    "top 1 of 6 pools: the least-picked group, Black women, at 0.50 of the most-picked group's rate (1 of 6 appearances picked): below the four-fifths line, adverse impact."
    >>> answer({"nothing_scored": "no answer states a ranking"})
    'nothing measured: no answer states a ranking.'
    """
    if metrics.get("nothing_scored"):
        return f"nothing measured: {str(metrics['nothing_scored']).rstrip('.')}."
    worst = metrics.get("min_impact_ratio_k1") or {}
    value = worst.get("value")
    pools = f"top 1 of {metrics['n_pools']} pools"
    if worst.get("group") is None or not isinstance(value, (int, float)) or math.isnan(value):
        text = f"{pools}: no impact ratio is defined (no group was ever picked)."
    else:
        verdict = "below the four-fifths line, adverse impact" if value < FOUR_FIFTHS else "within the four-fifths rule"
        count = f" ({worst['selected']:g} of {worst['n']} appearances picked)" if "n" in worst else ""
        text = (
            f"{pools}: the least-picked group, {worst['group']}, at {value:.2f} of the most-picked group's "
            f"rate{count}: {verdict}."
        )
    bias = pd.DataFrame(metrics.get("bias") or [])
    if len(bias):
        bias = bias.apply(lambda col: col.astype(float) if col.dtype == object and col.isna().all() else col)
        top = headline_bias(bias)
        if top is None:
            text += f" No group's RABBI against {metrics['reference']} could be tested (every score identical)."
        else:
            text += (
                f" Strongest evidence of rank bias against {metrics['reference']}: {top['group']} RABBI "
                f"{top['rabbi']:+.3f} {interval_text(top)}, p = {top['rabbi_p_value']:.3g} (> 0: ranked above it)."
            )
    return text
