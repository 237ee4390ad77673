"""Pure metric functions on arrays for the four folkscope studies.

No model, no file I/O, no logging, no torch: arrays in, numbers (or small
tables) out, in the manner of :mod:`sklearn.metrics`. Data arguments are
positional, options keyword-only. ``*_score`` is higher-better,
``*_loss`` / ``*_error`` / ``*_distance`` lower-better. Signed measures
(``rabbi``, ``confidence_bias``, ``signed_calibration_error``, the gaps) are
best at 0; their sign says who is favoured.

Conventions shared by every function:

- Inputs are validated; a bad array raises :class:`~folkscope.errors.DataError`
  and a bad option :class:`~folkscope.errors.ConfigError`, naming the argument,
  what is allowed and the value received.
- NaN scores raise by default. ``nan_policy="omit"`` drops them explicitly and
  :func:`score_summary` / :func:`groupwise_metrics` report how many.
- An undefined value (AUC of one class, relative entropy at zero mass, an empty
  selection) is NaN with an :class:`~folkscope.errors.UndefinedMetricWarning`,
  never 0 or 0.5.
- ``sample_weight`` (survey weights) is accepted wherever a mean is taken;
  integer weights equal repeating rows.
- Randomness comes from one seeded :class:`numpy.random.Generator`
  (``random_state``).

Modules: risk scores (``_calibration``, ``_classification``, ``_curves``, ``_groups``,
``_bootstrap``, ``_recalibration``; ``_evaluation``: folktexts' flat dictionaries
with folktexts' conventions, which differ from the ones above where a rate has
no denominator), allocation (``_allocation``,
``_selection``), epidemiology (``_epidemiology``), numeric calibration
(``_numeric``, ``_randomness``).
"""

from __future__ import annotations

from folkscope.metrics._allocation import (
    RabbiTest,
    average_score_gap,
    earth_movers_distance,
    jensen_shannon_divergence,
    pointwise_relevance_score,
    rabbi,
    rabbi_test,
)
from folkscope.metrics._bootstrap import (
    BootstrapResult,
    MeanInterval,
    bootstrap_ci,
    clustered_mean_ci,
)
from folkscope.metrics._calibration import (
    brier_score_loss,
    confidence_bias,
    expected_calibration_error,
    log_loss,
    score_summary,
    signed_calibration_error,
)
from folkscope.metrics._classification import (
    accuracy_score,
    balanced_accuracy_score,
    false_negative_rate,
    false_positive_rate,
    positive_prediction_rate,
    precision_score,
    roc_auc_score,
    true_negative_rate,
    true_positive_rate,
)
from folkscope.metrics._curves import (
    calibration_curve,
    selective_accuracy_curve,
    selective_accuracy_score,
)
from folkscope.metrics._epidemiology import (
    CROSSED_RULES,
    best_reference_distance,
    distribution_distance,
    epidemiology_score,
    l1_distance,
    mean_baseline_distance,
    person_distance,
    uniform_baseline_distance,
    worst_reference_distance,
    zero_one_baseline_distance,
)
from folkscope.metrics._evaluation import (
    compute_best_threshold,
    evaluate_binary_predictions,
    evaluate_binary_predictions_fairness,
    evaluate_predictions,
)
from folkscope.metrics._evaluation_bootstrap import bootstrap_estimate, evaluate_predictions_bootstrap
from folkscope.metrics._groups import (
    GROUP_METRICS,
    GroupMetrics,
    groupwise_metrics,
    signed_calibration_error_gap,
)
from folkscope.metrics._numeric import (
    REFERENCE_BEHAVIOURS,
    BehaviourClassification,
    calibration_distance,
    classify_behaviour,
    ideal_distribution,
    mode_frequency,
    mode_probability,
    mode_stability,
    numeric_calibration_table,
    pick_higher_baseline,
    probability_mass,
    random_baseline,
    reference_behaviour,
    relative_entropy,
)
from folkscope.metrics._randomness import (
    RunsTestResult,
    matching_pennies_win_rate,
    ngram_guesses,
    runs_test,
    runs_test_pass_rate,
)
from folkscope.metrics._recalibration import IsotonicCalibrator, PlattCalibrator
from folkscope.metrics._replicates import replicate_standard_error
from folkscope.metrics._selection import (
    allocation_gaps,
    impact_ratio,
    simulate_top_k_allocation,
    top_k_selection,
)
from folkscope.metrics._thresholds import THRESHOLD_RULES, best_accuracy_threshold
from folkscope.metrics._validity import (
    PearsonResult,
    model_ranking_ndcg_score,
    predictive_validity,
    root_mean_square_bias,
)

__all__ = [
    "CROSSED_RULES",
    "GROUP_METRICS",
    "REFERENCE_BEHAVIOURS",
    "THRESHOLD_RULES",
    "BehaviourClassification",
    "BootstrapResult",
    "GroupMetrics",
    "IsotonicCalibrator",
    "MeanInterval",
    "PearsonResult",
    "PlattCalibrator",
    "RabbiTest",
    "RunsTestResult",
    "accuracy_score",
    "allocation_gaps",
    "average_score_gap",
    "balanced_accuracy_score",
    "best_accuracy_threshold",
    "best_reference_distance",
    "bootstrap_ci",
    "bootstrap_estimate",
    "brier_score_loss",
    "calibration_curve",
    "calibration_distance",
    "classify_behaviour",
    "clustered_mean_ci",
    "compute_best_threshold",
    "confidence_bias",
    "distribution_distance",
    "earth_movers_distance",
    "epidemiology_score",
    "evaluate_binary_predictions",
    "evaluate_binary_predictions_fairness",
    "evaluate_predictions",
    "evaluate_predictions_bootstrap",
    "expected_calibration_error",
    "false_negative_rate",
    "false_positive_rate",
    "groupwise_metrics",
    "ideal_distribution",
    "impact_ratio",
    "jensen_shannon_divergence",
    "l1_distance",
    "log_loss",
    "matching_pennies_win_rate",
    "mean_baseline_distance",
    "person_distance",
    "mode_frequency",
    "mode_probability",
    "mode_stability",
    "model_ranking_ndcg_score",
    "ngram_guesses",
    "numeric_calibration_table",
    "pick_higher_baseline",
    "pointwise_relevance_score",
    "positive_prediction_rate",
    "precision_score",
    "predictive_validity",
    "probability_mass",
    "rabbi",
    "rabbi_test",
    "random_baseline",
    "reference_behaviour",
    "relative_entropy",
    "replicate_standard_error",
    "roc_auc_score",
    "root_mean_square_bias",
    "runs_test",
    "runs_test_pass_rate",
    "score_summary",
    "selective_accuracy_curve",
    "selective_accuracy_score",
    "signed_calibration_error",
    "signed_calibration_error_gap",
    "simulate_top_k_allocation",
    "top_k_selection",
    "true_negative_rate",
    "true_positive_rate",
    "uniform_baseline_distance",
    "worst_reference_distance",
    "zero_one_baseline_distance",
]
