"""Small validators shared by the prompt configs (each raises ConfigError naming the parameter)."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence

from folkscope.errors import ConfigError

__all__ = ["check_bool", "check_int", "check_text", "format_slots", "int_tuple"]


def check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false, got {value!r}", parameter=name, value=value)


def check_text(name: str, value: object, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {type(value).__name__} {value!r}", parameter=name, value=value)


def check_int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}", parameter=name, value=value)


def int_tuple(name: str, value: object) -> tuple[int, ...]:
    """A comma-separated string or a sequence of integers, as a tuple of ints."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        try:
            return tuple(int(p) for p in parts)
        except ValueError:
            raise ConfigError(
                f"{name} must be comma-separated integers like '2,2', got {value!r}", parameter=name, value=value
            ) from None
    if isinstance(value, Sequence) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    raise ConfigError(f"{name} must be a sequence of integers, got {value!r}", parameter=name, value=value)


def format_slots(text: str, where: str, *, error: Callable[[str], Exception] | None = None) -> list[str]:
    """The ``{slot}`` names of a template, read the way ``str.format`` will read them.

    Only plain names are slots. A stray brace, a positional ``{}``, an
    attribute or index (``{candidate.name}``, ``{candidate[0]}``), a
    conversion or a format spec is refused here, naming ``where``, rather
    than failing (with a traceback, after the model loaded) when prompts are
    filled. Every template a user writes (allocation's screening templates,
    epidemiology's questions, numeric templates) is read by this one
    function; ``error`` makes the exception of the caller's kind of file
    (default: :class:`ConfigError` on parameter ``template``).

    Examples
    --------
    >>> format_slots("Resume:\\n{candidate} {{literal}}", "pointwise")
    ['candidate']
    >>> format_slots("{candidate.name}", "pointwise")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: pointwise: slot {candidate.name} is not allowed; write plain slots such as {candidate}, and {{ or }} for a literal brace
    """
    fail = error or (lambda message: ConfigError(message, parameter="template", value=text))
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise fail(f"{where}: {exc}; write {{{{ or }}}} for a literal brace") from None
    slots = []
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            plain = re.match(r"[A-Za-z_][A-Za-z0-9_]*", name)
            raise fail(
                f"{where}: slot {shown} is not allowed; write plain slots such as {{{plain.group() if plain else 'name'}}}, "
                "and {{ or }} for a literal brace"
            )
        slots.append(name)
    return slots
