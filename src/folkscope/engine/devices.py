"""Which torch device and dtype a local model runs on, when the user leaves them to folkscope.

Shared by the transformers backend and :func:`~folkscope.engine.load_model_tokenizer`
(which loads a model for the caller to hold), so both choose alike.
"""

from __future__ import annotations

import re

from folkscope._deps import require
from folkscope.errors import ConfigError

__all__ = ["check_device", "check_dtype", "resolve_device", "resolve_dtype"]

_FEATURE = "the transformers backend"
_DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}


_DEVICE = re.compile(r"cpu|mps|cuda(:[0-9]+)?")


def check_device(device: object, *, available: bool = True) -> None:
    """A device name torch knows (checked without torch), and with ``available`` one this machine has.

    The second check imports torch only when a GPU is named (``cuda``,
    ``cuda:N``, ``mps``): it is how a command refuses ``--device cuda:5`` in
    one line before any data or model loads, rather than after.

    Examples
    --------
    >>> check_device("cpu"), check_device("auto"), check_device("cuda:1", available=False)
    (None, None, None)
    >>> check_device("gpu0", available=False)
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: device must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto', got 'gpu0'
    """
    if device is None or device == "auto":
        return
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ConfigError(
            f"device must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto', got {device!r}", parameter="device", value=device
        )
    if not available or device == "cpu":
        return
    torch = require("torch", feature=_FEATURE)
    if device == "mps":
        if not torch.backends.mps.is_available():
            raise ConfigError(
                "device 'mps' was asked for but torch sees no Apple GPU; use device='cpu'",
                parameter="device",
                value=device,
            )
        return
    if not torch.cuda.is_available():
        raise ConfigError(
            f"device {device!r} was asked for but torch sees no CUDA GPU; use device='cpu'",
            parameter="device",
            value=device,
        )
    count = torch.cuda.device_count()
    if device != "cuda" and int(device.split(":")[1]) >= count:
        raise ConfigError(
            f"device {device!r} was asked for but torch sees {count} CUDA GPU{'s' if count != 1 else ''} "
            f"(cuda:0{f' to cuda:{count - 1}' if count > 1 else ''})",
            parameter="device",
            value=device,
        )


def check_dtype(dtype: object) -> None:
    """A dtype name folkscope knows, or None/``"auto"`` (checked without torch)."""
    if dtype is not None and dtype != "auto":
        resolve_dtype(str(dtype), "cpu")


def resolve_device(device: str | None) -> str:
    """``None`` or ``"auto"``: CUDA when available, else CPU."""
    torch = require("torch", feature=_FEATURE)
    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    check_device(device)
    return device


def resolve_dtype(dtype: str | None, device: str) -> str:
    """``None``/``"auto"``: float32 on CPU, bfloat16 on GPUs that support it, else float16."""
    if dtype is None or dtype == "auto":
        if device.startswith("cuda"):
            torch = require("torch", feature=_FEATURE)
            return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
        return "float32"
    name = _DTYPES.get(str(dtype).lower().replace("torch.", ""))
    if name is None:
        raise ConfigError(
            f"dtype must be one of float32, bfloat16, float16 (or auto), got {dtype!r}", parameter="dtype", value=dtype
        )
    return name
