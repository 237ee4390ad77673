"""Where a run folder lives: ``<results>/<subject>/<model>/<variant>-<fingerprint[:8]>/``.

One layout for every part, so a results folder reads the same whatever wrote
it and a leaderboard can walk it: the *subject* is what was asked (a risk
task such as ``ACSIncome``; ``numeric-colors`` for a numeric-calibration
dataset), the *model* the model's name, the *variant* the prompt setting
(``mc-zeroshot-...``; ``chat`` or ``base``), and the fingerprint prefix keeps
two configurations apart. A rerun of the same configuration lands in the
same folder, which is how a run resumes.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from folkscope._names import slug

__all__ = ["run_path", "safe_name"]

#: hex digits of the fingerprint in a folder name
FINGERPRINT_CHARS = 8


def safe_name(text: str, *, fallback: str = "run") -> str:
    """``text`` as one portable path component: runs of other characters become ``-``.

    Examples
    --------
    >>> safe_name("meta-llama/Llama-3 8B")
    'meta-llama-Llama-3-8B'
    >>> safe_name("../..", fallback="model")
    'model'
    """
    return slug(text, fallback=fallback)


def run_path(root: str | PathLike[str], *, subject: str, model: str, variant: str, fingerprint: str) -> Path:
    """The run folder of one configuration under ``root``.

    Examples
    --------
    >>> run_path("results", subject="ACSIncome", model="gemma-2b", variant="mc-zeroshot", fingerprint="1a2b3c4d5e6f")
    PosixPath('results/ACSIncome/gemma-2b/mc-zeroshot-1a2b3c4d')
    """
    return (
        Path(root)
        / safe_name(subject, fallback="task")
        / safe_name(model, fallback="model")
        / f"{safe_name(variant)}-{fingerprint[:FINGERPRINT_CHARS]}"
    )
