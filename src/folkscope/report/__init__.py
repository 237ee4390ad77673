"""Report layer: plots and a one-page HTML report of a run.

``import folkscope.report`` does not import matplotlib; the plotting functions
import it when called (``pip install 'folkscope[plots]'``).
"""

from __future__ import annotations

from folkscope.report.html import write_report
from folkscope.report.plots import (
    make_all_plots,
    plot_calibration,
    plot_feature_importance,
    plot_group_calibration,
    plot_roc,
    plot_score_histogram,
    plot_selective_accuracy,
)

__all__ = [
    "make_all_plots",
    "plot_calibration",
    "plot_feature_importance",
    "plot_group_calibration",
    "plot_roc",
    "plot_score_histogram",
    "plot_selective_accuracy",
    "write_report",
]
