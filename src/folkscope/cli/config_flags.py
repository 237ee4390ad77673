"""Command-line flags generated from config fields: one mapping from flags to each config.

A config dataclass declares each field once with :func:`folkscope._config.option`
(help, flag, group, how it parses). :func:`add_config_flags` adds the flags
of a config's fields to a parser, with that help, and :func:`config_values`
reads them back as the config's keyword arguments. ``run``, ``prompts``,
``evidence`` and ``numeric`` (and the parts to come) build their configs
this way; none lists an option by hand.

Examples
--------
>>> import argparse
>>> from dataclasses import dataclass, field
>>> from folkscope._config import option
>>> @dataclass(frozen=True)
... class Demo:
...     seed: int = field(default=0, metadata=option("Seed."))
...     baselines: bool = field(default=True, metadata=option("Fit baselines.", flag="--no-baselines", kind="negate"))
>>> parser = argparse.ArgumentParser()
>>> add_config_flags(parser, Demo)
>>> config_values(parser.parse_args(["--seed", "3", "--no-baselines"]), Demo)
{'seed': 3, 'baselines': False}
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Mapping
from dataclasses import MISSING, Field, fields
from typing import Any

from folkscope._config import comma_names, flag_of

__all__ = ["add_config_flags", "config_values", "flag_fields"]

_TYPES = {"int": int, "float": float, "str": str}


def _dest(f: Field[Any]) -> str:
    return flag_of(f).lstrip("-").replace("-", "_")


def _scalar_type(f: Field[Any]) -> Any:
    """The argparse type of a one-value field from its annotation (``int | None`` -> int)."""
    base = str(f.type).replace(" ", "").split("|")[0]
    return _TYPES.get(base, str)


def flag_fields(cls: type, *, only: Collection[str] | None = None, skip: Collection[str] = ()) -> list[Field[Any]]:
    """The fields of ``cls`` that have a flag, in declaration order (``only``/``skip``: by field name or group)."""
    out = []
    for f in fields(cls):
        if not f.metadata.get("cli", False) or f.name in skip or f.metadata.get("group") in skip:
            continue
        if only is not None and f.name not in only and f.metadata.get("group") not in only:
            continue
        out.append(f)
    return out


def add_config_flags(
    target: Any,
    cls: type,
    *,
    groups: Mapping[str, Any] | None = None,
    only: Collection[str] | None = None,
    skip: Collection[str] = (),
) -> None:
    """Add a flag for every declared field of ``cls`` to ``target`` (a parser or group).

    ``groups`` maps a field's group name to the argument group it is listed
    in; fields of other groups go to ``target``.
    """
    for f in flag_fields(cls, only=only, skip=skip):
        meta = f.metadata
        where = (groups or {}).get(meta.get("group"), target)
        doc = str(meta.get("flag_help") or meta["doc"]).replace("%", "%%")  # argparse %-formats help strings
        kind = meta["kind"]
        extra: dict[str, Any] = {"dest": _dest(f), "help": doc}
        if meta.get("metavar"):
            extra["metavar"] = meta["metavar"]
        flags = (flag_of(f), *meta.get("aliases", ()))
        if kind in ("switch", "negate"):
            where.add_argument(*flags, action="store_true", **extra)
        elif kind == "maybe":
            where.add_argument(*flags, action="store_const", const=True, default=None, **extra)
        elif kind == "toggle":
            where.add_argument(*flags, action=argparse.BooleanOptionalAction, default=f.default, **extra)
        elif kind == "repeat":
            where.add_argument(*flags, action="append", default=None, type=meta.get("parse") or str, **extra)
        elif kind == "extend":
            where.add_argument(*flags, nargs="*", action="extend", default=None, type=meta.get("parse") or str, **extra)
        else:
            default = None if kind == "list" or f.default is MISSING else f.default
            parse = meta.get("parse") or (comma_names if kind == "list" else _scalar_type(f))
            where.add_argument(*flags, type=parse, default=default, choices=meta.get("choices"), **extra)


def config_values(
    args: argparse.Namespace, cls: type, *, only: Collection[str] | None = None, skip: Collection[str] = ()
) -> dict[str, Any]:
    """The declared fields' values from parsed flags, as keyword arguments of ``cls``."""
    values: dict[str, Any] = {}
    for f in flag_fields(cls, only=only, skip=skip):
        raw = getattr(args, _dest(f))
        kind = f.metadata["kind"]
        if kind == "negate":
            values[f.name] = not raw
        elif kind == "switch":
            values[f.name] = bool(raw)
        elif kind == "list":
            values[f.name] = f.default if raw is None else tuple(raw)
        elif kind in ("repeat", "extend"):
            values[f.name] = tuple(raw) if raw else f.default
        else:
            values[f.name] = raw
    return values
