"""What every config dataclass shares: its fields' help and flags, and the unknown-key check of ``from_dict``.

Fields declare themselves once with :func:`option` (help text, command-line
flag, flag group, how the flag parses), and :mod:`folkscope.cli.config_flags`
generates every command's flags and help from those declarations, so a new
option is one field, never a field plus a hand-written flag.

Engine, prompt, risk and numeric configs are read back from ``config.json``
and ``manifest.json`` files a person may have edited; an unknown key is a
typo or a file from another version, and must be one clear line naming the
known keys rather than a ``TypeError`` from the constructor
(:func:`config_fields`). This module sits below every layer so each config
shares it.
"""

from __future__ import annotations

import argparse
import numbers
from collections.abc import Callable, Mapping
from dataclasses import Field, fields
from typing import Any

from folkscope.errors import ConfigError

__all__: list[str] = []  # private helpers

#: how a flag turns into a field value
KINDS = ("value", "switch", "negate", "maybe", "toggle", "list", "repeat", "extend")


def option(
    doc: str,
    *,
    flag: str | None = None,
    group: str | None = None,
    kind: str = "value",
    parse: Callable[[str], Any] | None = None,
    choices: tuple[str, ...] | None = None,
    metavar: str | None = None,
    flag_help: str | None = None,
    cli: bool = True,
    aliases: tuple[str, ...] = (),
    low: float | None = None,
    high: float | None = None,
) -> dict[str, Any]:
    """Field metadata: the help text and how the field appears on the command line.

    Parameters
    ----------
    doc : str
        Help text (also the field's documentation).
    flag : str, optional
        The flag (default ``--field-name``); folktexts' names where they differ.
    group : str, optional
        Which help section the flag is listed in.
    kind : str
        ``value`` (one argument, parsed by ``parse`` or the field's type),
        ``switch`` (present: True), ``negate`` (present: False, e.g.
        ``--no-baselines``), ``maybe`` (present: True, absent: None),
        ``toggle`` (``--x`` / ``--no-x``), ``list`` (one comma-separated
        argument), ``repeat`` (the flag repeated), ``extend`` (several
        arguments, the flag repeatable).
    parse : callable, optional
        Turns one argument (or one list item) into its value; raise
        :class:`argparse.ArgumentTypeError` with the fix.
    flag_help : str, optional
        Help of the flag where it reads otherwise than the field's doc (a
        ``negate`` flag says what leaving the default out does).
    cli : bool, default True
        False: the field has no flag (it is set from another config).
    aliases : tuple of str
        More spellings of the flag: the grammar every part shares (``--limit``,
        ``--chat``, ``--n-bootstrap``, ``--task``) where a part's own or
        folktexts' name differs (``--subsampling``, ``--use-chat-template``...).
    low, high : number, optional
        The field's bounds, inclusive, checked by :func:`check_declared` when
        the config is built (an ``int`` field must also be a whole number; an
        ``X | None`` field may be None).

    Examples
    --------
    >>> option("Seed of the draws.", group="run")["flag"] is None
    True
    """
    if kind not in KINDS:
        raise ValueError(f"unknown option kind {kind!r}; one of {', '.join(KINDS)}")
    return {
        "doc": doc,
        "flag": flag,
        "group": group,
        "kind": kind,
        "parse": parse,
        "choices": choices,
        "metavar": metavar,
        "flag_help": flag_help,
        "cli": cli,
        "aliases": tuple(aliases),
        "low": low,
        "high": high,
    }


def config_dict(config: Any) -> dict[str, Any]:
    """A config as JSON: tuples as lists, and a nested engine config as what it ``answering()`` records.

    A part config contains its :class:`~folkscope.engine.EngineConfig`; its
    ``config.json`` (and fingerprint) keep only the model and backend of it,
    as before the engine moved in, so folders and hashes stay the same.
    """
    out: dict[str, Any] = {}
    for f in fields(config):
        value = getattr(config, f.name)
        if hasattr(value, "answering"):
            out.update(value.answering())
        else:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def check_declared(config: Any) -> None:
    """Check every field of ``config`` declared with bounds (:func:`option`'s ``low``/``high``) or ``choices``: one rule,
    one message.

    Each config used to write the same test inline (``isinstance(v, bool)
    or not isinstance(v, int) or v < 1``) with its own wording; the bound now
    lives with the field's help.

    Examples
    --------
    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class Demo:
    ...     rounds: int = field(default=20, metadata=option("Pools.", low=1))
    ...     limit: int | None = field(default=None, metadata=option("At most this many.", low=1))
    >>> check_declared(Demo(limit=None))
    >>> check_declared(Demo(rounds=True))
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: rounds must be an integer >= 1, got True
    >>> check_declared(Demo(limit=0))
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: limit must be an integer >= 1 or None, got 0
    >>> @dataclass
    ... class Rule:
    ...     rule: str = field(default="paper", metadata=option("Which rule.", choices=("paper", "nan")))
    >>> check_declared(Rule(rule="zero"))
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: rule must be one of paper, nan, got 'zero'
    """
    for f in fields(config):
        low, high, choices = f.metadata.get("low"), f.metadata.get("high"), f.metadata.get("choices")
        if low is None and high is None and not choices:
            continue
        value = getattr(config, f.name)
        optional = "None" in str(f.type)  # ``int | None``: absent is allowed
        if value is None and optional:
            continue
        if choices:
            if value not in choices:
                raise ConfigError(
                    f"{f.name} must be one of {', '.join(map(str, choices))}, got {value!r}",
                    parameter=f.name,
                    value=value,
                )
            continue
        whole = str(f.type).replace(" ", "").split("|")[0] == "int"
        kind = numbers.Integral if whole else numbers.Real
        ok = isinstance(value, kind) and not isinstance(value, bool)
        ok = ok and (low is None or value >= low) and (high is None or value <= high)
        if not ok:
            bound = f">= {low}" if high is None else f"<= {high}" if low is None else f"from {low} to {high}"
            what = "an integer" if whole else "a number"
            raise ConfigError(
                f"{f.name} must be {what} {bound}{' or None' if optional else ''}, got {value!r}",
                parameter=f.name,
                value=value,
            )


def flag_of(f: Field[Any]) -> str:
    """The command-line flag of a field: its declared flag, else ``--`` plus its name with dashes."""
    return str(f.metadata.get("flag") or "--" + f.name.replace("_", "-"))


def flag_named(cls: type, name: str) -> str:
    """The flag of ``cls``'s field ``name`` (for error messages that name the flag to change)."""
    return flag_of(next(f for f in fields(cls) if f.name == name))


def comma_names(text: str) -> tuple[str, ...]:
    """``"a, b,c"`` -> ``("a", "b", "c")`` (blanks dropped).

    Examples
    --------
    >>> comma_names("small, large,")
    ('small', 'large')
    """
    return tuple(s.strip() for s in text.split(",") if s.strip())


def comma_ints(text: str) -> tuple[int, ...]:
    """``"8,9,48"`` -> ``(8, 9, 48)``; anything else is one clear argparse error."""
    try:
        return tuple(int(s) for s in comma_names(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def parse_subsampling(text: str) -> float | int:
    """``0.1`` is a fraction of each split, ``500`` a row count per split; ``1`` (or ``1.0``) is all rows, as in folktexts.

    Examples
    --------
    >>> parse_subsampling("0.1"), parse_subsampling("500"), parse_subsampling("1")
    (0.1, 500, 1.0)
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a fraction like 0.1 or a row count like 500, got {text!r}"
        ) from None
    if value.is_integer() and value >= 2 and "." not in text and "e" not in text.lower():
        return int(value)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1] or a whole row count >= 2, got {text!r}")
    return value


def config_fields(cls: type, data: object, what: str, *, parameter: str | None = None) -> dict[str, Any]:
    """``data`` as a dict of ``cls``'s field values, refusing anything that is not one.

    Raises
    ------
    ConfigError
        ``data`` is not a mapping, or it has keys ``cls`` has no field for
        (``parameter`` names them, default ``what``).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class C:
    ...     seed: int = 0
    >>> config_fields(C, {"seed": 1}, "C")
    {'seed': 1}
    >>> config_fields(C, {"sede": 1}, "C")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: unknown C key(s) sede; known keys: seed
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{what} must be a mapping, got {type(data).__name__}", parameter=parameter or what)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"unknown {what} key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(known))}",
            parameter=parameter or what,
            value=unknown,
        )
    return dict(data)
