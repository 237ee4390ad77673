"""Which torch device and dtype a local model runs on, when the user leaves them to folkscope.

Shared by the transformers backend and :func:`~folkscope.engine.load_model_tokenizer`
(which loads a model for the caller to hold), so both choose alike.
"""

from __future__ import annotations

from folkscope._deps import require
from folkscope.errors import ConfigError

__all__ = ["resolve_device", "resolve_dtype"]

_FEATURE = "the transformers backend"
_DTYPES = {
    "float32": "float32", "fp32": "float32", "float": "float32",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16",
}  # fmt: skip


def resolve_device(device: str | None) -> str:
    """``None`` or ``"auto"``: CUDA when available, else CPU."""
    torch = require("torch", feature=_FEATURE)
    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, str) or device.split(":")[0] not in {"cpu", "cuda", "mps"}:
        raise ConfigError(f"device must be 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto', got {device!r}", parameter="device", value=device)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("device 'cuda' was asked for but torch sees no CUDA GPU; use device='cpu'", parameter="device", value=device)
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
