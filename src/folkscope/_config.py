"""What every config's ``from_dict`` checks first: a mapping, and only the dataclass's own keys.

Engine, prompt, risk and numeric configs are read back from ``config.json``
and ``manifest.json`` files a person may have edited; an unknown key is a
typo or a file from another version, and must be one clear line naming the
known keys rather than a ``TypeError`` from the constructor. This module sits
below every layer so each config shares it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from folkscope.errors import ConfigError

__all__: list[str] = []  # private helper


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
