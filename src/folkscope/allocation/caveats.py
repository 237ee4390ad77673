"""Part 2's caveats: answers the model gave that rank nothing, and groups too small to measure.

An allocation run scores candidates from the model's answers; an answer
that could not be read leaves its candidates unscored (listwise, pointwise)
or gives a pair no points (pairwise), and a run where no answer could be
read measures nothing. Groups smaller than the bias minimums
(:data:`folkscope.allocation.outcomes.MIN_INTERVAL_MEMBERS`,
``MIN_DISTRIBUTION_MEMBERS``) have NaN intervals or distances.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from folkscope.runs import Caveat

__all__ = ["run_caveats"]


def _small_groups(bias: list[Mapping[str, Any]], note: str) -> list[str]:
    return [str(row["group"]) for row in bias if row.get(note)]


def run_caveats(metrics: Mapping[str, Any]) -> list[Caveat]:
    """The caveats of an allocation run, from its ``metrics.json`` contents.

    >>> run_caveats({"n_pools": 8, "unparseable_pools": 3, "bias": [{"group": "A", "interval_note": "no interval: 4 vs 30"}],
    ...              "bias_minimums": {"interval": 10, "distribution_distance": 30}})[0].message
    "3 of 8 pools' answers state no ranking: their candidates are unscored and left out of every number."
    """
    if metrics.get("nothing_scored"):
        return [Caveat("nothing-scored", f"Nothing measured: {metrics['nothing_scored']}.")]
    caveats = []
    n_pools = metrics.get("n_pools")
    if metrics.get("unparseable_pools"):
        caveats.append(
            Caveat(
                "unparsed-answers",
                f"{metrics['unparseable_pools']} of {n_pools} pools' answers state no ranking: "
                "their candidates are unscored and left out of every number.",
            )
        )
    if metrics.get("unscored_candidates"):
        caveats.append(
            Caveat(
                "unparsed-answers",
                f"{metrics['unscored_candidates']} of {metrics.get('n_candidates')} candidates "
                "have no usable label probabilities and are left out of every number.",
            )
        )
    unread = (metrics.get("pairwise") or {}).get("unread")
    if unread:  # 0, or NaN without pairs: nothing to say
        if unread == unread:
            caveats.append(
                Caveat(
                    "unparsed-answers",
                    f"{unread:.0%} of the pairwise answers name neither candidate: "
                    + (
                        "those answers give no points, so scores rest on the others."
                        if metrics.get("pairwise_points") == "authors"
                        else "their pairs split the point evenly, as if the model could not choose."
                    ),
                )
            )
    bias = list(metrics.get("bias") or [])
    minimums = metrics.get("bias_minimums") or {}
    for note, what, key in (
        ("interval_note", "a RABBI interval", "interval"),
        ("distance_note", "a distribution distance (JSD, EMD)", "distribution_distance"),
    ):
        small = _small_groups(bias, note)
        if small:
            caveats.append(
                Caveat(
                    "small-groups",
                    f"{len(small)} of the {len(bias)} groups compared with {metrics.get('reference')} "
                    f"({', '.join(small[:4])}{', ...' if len(small) > 4 else ''}), or the reference "
                    f"itself, have too few scored members for {what} (fewer than "
                    f"{minimums.get(key, '?')}): those values are n/a.",
                )
            )
    return caveats
