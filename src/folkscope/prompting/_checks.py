"""Small validators shared by the prompt configs (each raises ConfigError naming the parameter)."""

from __future__ import annotations

from collections.abc import Sequence

from folkscope.errors import ConfigError

__all__ = ["check_bool", "check_int", "check_text", "int_tuple"]


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
