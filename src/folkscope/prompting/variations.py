"""``--variation key=value`` strings: parsing and writing back.

Keys (folktexts' "Configuring prompts"): ``format`` (textbullet, bullet,
comma, text), ``connector`` (any text), ``granularity`` (original, low),
``order`` (comma-separated columns), ``custom_prompt_prefix``,
``custom_prompt_suffix`` (any text) and ``show_question`` (true/false).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from folkscope.errors import ConfigError

__all__ = ["FORMATS", "GRANULARITIES", "VARIATION_KEYS", "format_variations", "parse_variations"]

#: the ``format`` variation's values: how a row's features are laid out
FORMATS = ("textbullet", "bullet", "comma", "text")
#: the ``granularity`` variation's values: the codebook's labels or coarse bins
GRANULARITIES = ("original", "low")
#: the keys ``--variation key=value`` accepts
VARIATION_KEYS = (
    "format",
    "connector",
    "granularity",
    "order",
    "custom_prompt_prefix",
    "custom_prompt_suffix",
    "show_question",
)
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
COLUMN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _parse_bool(key: str, text: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ConfigError(f"variation {key} must be true or false, got {text!r}", parameter=f"variation.{key}", value=text)


def _parse_variation_value(key: str, text: str) -> Any:
    if key == "format":
        if text not in FORMATS:
            raise ConfigError(
                f"variation format must be one of {', '.join(FORMATS)}, got {text!r}",
                parameter="variation.format",
                value=text,
            )
        return text
    if key == "granularity":
        if text not in GRANULARITIES:
            raise ConfigError(
                f"variation granularity must be one of {', '.join(GRANULARITIES)}, got {text!r}",
                parameter="variation.granularity",
                value=text,
            )
        return text
    if key == "order":
        names = tuple(p.strip() for p in text.split(","))
        if not text.strip() or not all(COLUMN_NAME.match(n) for n in names):
            raise ConfigError(
                f"variation order must be comma-separated column names like 'AGEP,SCHL', got {text!r}",
                parameter="variation.order",
                value=text,
            )
        return names
    if key == "show_question":
        return _parse_bool(key, text)
    if key == "connector":
        if not text.strip() or text != text.strip() or "\n" in text or "\r" in text:
            raise ConfigError(
                f"variation connector must be non-empty text without surrounding spaces, got {text!r}",
                parameter="variation.connector",
                value=text,
            )
        return text
    return text  # custom_prompt_prefix / custom_prompt_suffix: any text


def parse_variations(items: Iterable[str] | None) -> dict[str, Any]:
    """Parse ``--variation`` strings (``key=value``) into typed PromptConfig fields.

    The key ends at the first ``=``, so ``connector==`` sets the connector to
    ``=``. Keys may appear once each.

    Raises
    ------
    ConfigError
        For a string without ``=``, an unknown key, a repeated key or a value
        the key does not allow.

    Examples
    --------
    >>> parse_variations(["format=bullet", "connector==", "order=AGEP,SCHL", "show_question=false"])
    {'format': 'bullet', 'connector': '=', 'order': ('AGEP', 'SCHL'), 'show_question': False}
    """
    out: dict[str, Any] = {}
    if items is None:
        return out
    if isinstance(items, str):
        items = [items]
    for item in items:
        if not isinstance(item, str) or "=" not in item:
            raise ConfigError(
                f"a variation must look like key=value (keys: {', '.join(VARIATION_KEYS)}), got {item!r}",
                parameter="variation",
                value=item,
            )
        key, value = item.split("=", 1)
        key = key.strip()
        if key not in VARIATION_KEYS:
            raise ConfigError(
                f"unknown variation key {key!r}; known keys: {', '.join(VARIATION_KEYS)}",
                parameter="variation",
                value=key,
            )
        if key in out:
            raise ConfigError(f"variation {key} is given twice", parameter="variation", value=key)
        out[key] = _parse_variation_value(key, value)
    return out


def format_variations(values: Mapping[str, Any]) -> list[str]:
    """Write typed variation values back as ``key=value`` strings (inverse of :func:`parse_variations`)."""
    out = []
    for key, value in values.items():
        if key not in VARIATION_KEYS:
            raise ConfigError(f"unknown variation key {key!r}", parameter="variation", value=key)
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (tuple, list)):
            text = ",".join(value)
        else:
            text = str(value)
        out.append(f"{key}={text}")
    return out
