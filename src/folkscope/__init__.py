"""folkscope: evaluate language models as statistical instruments on real population data.

``import folkscope`` is light: it never imports torch, transformers, vllm or
litellm. Heavy pieces load when the feature that needs them is used.

folktexts' fifteen top-level names are here too, so ``from folkscope import
Benchmark, TransformersLLMClassifier`` works where ``from folktexts import
...`` did; each loads its module on first use (module ``__getattr__``), so
the import stays light.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("folkscope")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

#: folktexts' top-level name -> (module, attribute) where folkscope defines it
_FOLKTEXTS_NAMES: dict[str, tuple[str, str]] = {
    "ACSDataset": ("folkscope.data.dataset", "ACSDataset"),
    "ACSTaskMetadata": ("folkscope.tasks.task", "ACSTaskMetadata"),
    "TaskMetadata": ("folkscope.tasks.task", "TaskMetadata"),
    "Benchmark": ("folkscope.risk.run", "Benchmark"),
    "BenchmarkConfig": ("folkscope.risk.config", "BenchmarkConfig"),
    "LLMClassifier": ("folkscope.risk.classifier", "LLMClassifier"),
    "TransformersLLMClassifier": ("folkscope.risk.backend_classifiers", "TransformersLLMClassifier"),
    "VLLMClassifier": ("folkscope.risk.backend_classifiers", "VLLMClassifier"),
    "WebAPILLMClassifier": ("folkscope.risk.backend_classifiers", "WebAPILLMClassifier"),
    "MultipleChoiceQA": ("folkscope.risk.qa", "MultipleChoiceQA"),
    "DirectNumericQA": ("folkscope.risk.qa", "DirectNumericQA"),
    "ChainOfThoughtQA": ("folkscope.risk.qa", "ChainOfThoughtQA"),
    "PromptConfig": ("folkscope.prompting.config", "PromptConfig"),
    "FewShotConfig": ("folkscope.prompting.config", "FewShotConfig"),
    # folktexts' sentinel for "the question mode's default system prompt / chat prefill"
    "PROMPT_DEFAULT": ("folkscope.prompting.config", "DEFAULT"),
}

__all__ = ["__version__", *sorted(_FOLKTEXTS_NAMES)]


def __getattr__(name: str) -> Any:
    """Load a folktexts name's module on first use and keep the name here."""
    if name not in _FOLKTEXTS_NAMES:
        raise AttributeError(f"module 'folkscope' has no attribute {name!r}")
    module, attribute = _FOLKTEXTS_NAMES[name]
    value = getattr(import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FOLKTEXTS_NAMES})
