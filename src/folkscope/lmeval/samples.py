"""Read lm-evaluation-harness's ``--log_samples`` output: every (context, continuation) it scored and the log-likelihood.

lm-eval writes, per task, ``<output>/<model>/samples_<task>_<time>.jsonl``
(one JSON object per document: ``arguments`` maps ``gen_args_<i>`` to
``{"arg_0": context, "arg_1": continuation}``, ``filtered_resps[i]`` is
``[log-likelihood, is_greedy]`` with both written as strings) and beside it
``results_<time>.json`` (the model's name, the few-shot count, the chat
template and system instruction it used). Only what folkscope needs is read,
and every value is checked: a log-likelihood must be a finite number
``<= 0``; anything else is refused with the file and line, never read as a
number it is not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope.errors import DataError

__all__ = ["LoggedRun", "find_samples", "parse_loglikelihood", "read_run", "read_samples"]

#: slack for a log-likelihood a hair above 0 (float32 sums of log-softmax of a near-certain token)
_ABOVE_ZERO = 1e-4


@dataclass(frozen=True)
class LoggedRun:
    """One task's log of one lm-eval run.

    Attributes
    ----------
    samples : Path
        The ``samples_<task>_<time>.jsonl`` file.
    answers : dict
        ``(context, continuation) -> log-likelihood`` of every request logged.
    model : str or None
        The model's name from ``results_<time>.json`` (a path's last part), None without it.
    settings : dict
        What the results file says the run used that changes the contexts:
        ``num_fewshot``, ``chat_template``, ``system_instruction``, ``max_length``
        (where prompts were cut; missing keys absent).
    """

    samples: Path
    answers: dict[tuple[str, str], float]
    model: str | None
    settings: dict[str, Any]


def parse_loglikelihood(value: Any) -> float:
    """A logged log-likelihood as a float: a finite number ``<= 0`` (lm-eval writes it as a string).

    >>> parse_loglikelihood("-6.4512481689453125")
    -6.4512481689453125
    >>> parse_loglikelihood("nan")
    Traceback (most recent call last):
    ...
    ValueError: not a finite log-likelihood <= 0: 'nan'
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"not a log-likelihood: {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"not a log-likelihood: {value!r}") from None
    if not math.isfinite(number) or number > _ABOVE_ZERO:
        raise ValueError(f"not a finite log-likelihood <= 0: {value!r}")
    return min(number, 0.0)


def _pairs(sample: Mapping[str, Any]) -> list[tuple[str, str, float]]:
    arguments, resps = sample.get("arguments"), sample.get("filtered_resps")
    if not isinstance(arguments, Mapping) or not isinstance(resps, list):
        raise ValueError("no 'arguments' object and 'filtered_resps' list (run lm_eval with --log_samples)")
    keys = sorted(arguments, key=lambda k: int(k.rsplit("_", 1)[-1]) if k.rsplit("_", 1)[-1].isdigit() else -1)
    if len(keys) != len(resps) or any(not k.startswith("gen_args_") or not k[9:].isdigit() for k in keys):
        raise ValueError(f"{len(keys)} requests in 'arguments' but {len(resps)} in 'filtered_resps'")
    out = []
    for key, resp in zip(keys, resps):
        args = arguments[key]
        if (
            not isinstance(args, Mapping)
            or not isinstance(args.get("arg_0"), str)
            or not isinstance(args.get("arg_1"), str)
        ):
            raise ValueError(f"{key} is not a (context, continuation) pair: a generation task's log?")
        if not isinstance(resp, list) or not resp:
            raise ValueError(f"filtered_resps for {key} is not [log-likelihood, is_greedy]")
        out.append((args["arg_0"], args["arg_1"], parse_loglikelihood(resp[0])))
    return out


def read_samples(path: str | Path) -> dict[tuple[str, str], float]:
    """Every (context, continuation) of a samples file and its log-likelihood.

    Raises
    ------
    DataError
        A line that is not a logged log-likelihood request, or the same pair
        logged twice with different values; the message names the file and line.
    """
    path = Path(path)
    answers: dict[tuple[str, str], float] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                sample = json.loads(line)
                if not isinstance(sample, dict):
                    raise ValueError("not a JSON object")
                pairs = _pairs(sample)
            except ValueError as exc:
                raise DataError(f"{path}:{number}: not an lm-eval log-likelihood sample ({exc})") from None
            for context, continuation, value in pairs:
                known = answers.setdefault((context, continuation), value)
                if known != value:
                    raise DataError(
                        f"{path}:{number}: the same context and continuation were logged with two log-likelihoods "
                        f"({known} and {value}); pass one run's samples file"
                    )
    if not answers:
        raise DataError(f"{path} holds no samples; run lm_eval with --log_samples")
    return answers


def _results_of(samples: Path) -> Mapping[str, Any] | None:
    """The ``results_<time>.json`` written with a samples file (same folder, same time stamp), if any."""
    stamp = samples.stem.rsplit("_", 1)[-1]
    path = samples.with_name(f"results_{stamp}.json")
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise DataError(f"{path} is not readable JSON; pass --model-name to name the model") from None
    return data if isinstance(data, dict) else None


def read_run(samples: str | Path, task: str) -> LoggedRun:
    """The log of ``task`` in a samples file, with the model's name and context settings from its results file."""
    path = Path(samples)
    results = _results_of(path) or {}
    settings: dict[str, Any] = {}
    shots = (results.get("n-shot") or {}).get(task) if isinstance(results.get("n-shot"), dict) else None
    if shots is not None:
        settings["num_fewshot"] = shots
    for key in ("chat_template", "system_instruction", "max_length"):
        if key in results:
            settings[key] = results[key]
    name = results.get("model_name")
    model = Path(str(name).rstrip("/")).name if isinstance(name, str) and name.strip("/") else None
    return LoggedRun(path, read_samples(path), model, settings)


def find_samples(paths: Iterable[str | Path], task: str) -> list[Path]:
    """The samples files of ``task`` among ``paths`` (files, or lm-eval output folders searched recursively)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            prefix = f"samples_{task}_"  # then lm-eval's time stamp, which has no '_' (another task's name may)
            found.extend(p for p in sorted(path.rglob(f"{prefix}*.jsonl")) if "_" not in p.stem[len(prefix) :])
        elif path.is_file():
            found.append(path)
        else:
            raise DataError(f"{path} does not exist; pass lm_eval's --output_path folder or a samples_*.jsonl file")
    return found
