"""Part 1: language models as risk scores on survey prediction tasks (folktexts).

:class:`LLMClassifier` turns model probabilities into risk scores on any
engine backend; :class:`Benchmark` scores a task's test split and writes a
self-describing run folder (:func:`rescore` recomputes it without a model);
:func:`fit_baselines` fits the supervised baselines on the same split.
:class:`TransformersLLMClassifier`, :class:`VLLMClassifier` and
:class:`WebAPILLMClassifier` are folktexts' names for classifiers over a
loaded transformers model, a loaded vLLM engine or a web API.
"""

from folkscope.risk.backend_classifiers import TransformersLLMClassifier, VLLMClassifier, WebAPILLMClassifier
from folkscope.risk.baselines import BASELINES, BaselineResult, fit_baselines
from folkscope.risk.benchmark import Benchmark, rescore
from folkscope.risk.classifier import NUMERIC_READOUTS, LLMClassifier, ScoringReport
from folkscope.risk.config import BenchmarkConfig
from folkscope.risk.evaluate import calibration_data, compare_table, evaluate_scores
from folkscope.risk.evidence import evidence_sweep, importance_order

__all__ = [
    "BASELINES",
    "BaselineResult",
    "Benchmark",
    "BenchmarkConfig",
    "LLMClassifier",
    "NUMERIC_READOUTS",
    "ScoringReport",
    "TransformersLLMClassifier",
    "VLLMClassifier",
    "WebAPILLMClassifier",
    "calibration_data",
    "compare_table",
    "evaluate_scores",
    "evidence_sweep",
    "fit_baselines",
    "importance_order",
    "rescore",
]
