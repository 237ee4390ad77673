"""Part 1: language models as risk scores on survey prediction tasks (folktexts).

:class:`LLMClassifier` turns model probabilities into risk scores on any
engine backend; :class:`Benchmark` scores a task's test split and writes a
self-describing run folder (:func:`rescore` recomputes it without a model);
:func:`fit_baselines` fits the supervised baselines on the same split.
:class:`TransformersLLMClassifier`, :class:`VLLMClassifier` and
:class:`WebAPILLMClassifier` are folktexts' names for classifiers over a
loaded transformers model, a loaded vLLM engine or a web API. folktexts'
question objects (:mod:`folkscope.risk.qa`), :class:`Threshold` and row
encoders (:mod:`folkscope.risk.encoding`) are here too; its evaluation
functions are in :mod:`folkscope.metrics`.
"""

from folkscope.risk.analysis import rescore
from folkscope.risk.backend_classifiers import TransformersLLMClassifier, VLLMClassifier, WebAPILLMClassifier
from folkscope.risk.baselines import BASELINES, BaselineResult, fit_baselines
from folkscope.risk.classifier import FIT_METHODS, NUMERIC_READOUTS, LLMClassifier, ScoringReport
from folkscope.risk.config import BenchmarkConfig
from folkscope.risk.encoding import encode_row_prompt, encode_row_prompt_chat, encode_row_prompt_few_shot
from folkscope.risk.evaluate import calibration_data, compare_table, evaluate_scores
from folkscope.risk.evidence import evidence_sweep, importance_order
from folkscope.risk.qa import ChainOfThoughtQA, Choice, DirectNumericQA, MultipleChoiceQA, QAInterface
from folkscope.risk.run import Benchmark
from folkscope.risk.threshold import Threshold

__all__ = [
    "BASELINES",
    "BaselineResult",
    "Benchmark",
    "BenchmarkConfig",
    "ChainOfThoughtQA",
    "Choice",
    "DirectNumericQA",
    "FIT_METHODS",
    "LLMClassifier",
    "MultipleChoiceQA",
    "NUMERIC_READOUTS",
    "QAInterface",
    "ScoringReport",
    "Threshold",
    "TransformersLLMClassifier",
    "VLLMClassifier",
    "WebAPILLMClassifier",
    "calibration_data",
    "compare_table",
    "encode_row_prompt",
    "encode_row_prompt_chat",
    "encode_row_prompt_few_shot",
    "evaluate_scores",
    "evidence_sweep",
    "fit_baselines",
    "importance_order",
    "rescore",
]
