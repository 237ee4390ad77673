"""Part 4: are next-token probabilities calibrated to numbers in the context?

Generate problems (:func:`generate_problems`), score the option words through
the engine (:func:`score_problems`), then compute PM, WD, RE, behaviours and
biases (:mod:`folkscope.numeric.measures`); :func:`run_numeric` does it all
and writes a run folder. See ``spec/numeric-calibration.md``.

Examples
--------
>>> from folkscope.numeric import generate_problems
>>> generate_problems("distributions", n_intervals=1, templates=["closed"])[0].options
('29', '30', '31', '32')
"""

from folkscope.numeric.analysis import rescore
from folkscope.numeric.compare import attach_comparison, compare_runs
from folkscope.numeric.config import PROMPT_VERSION, NumericConfig
from folkscope.numeric.frequencies import (
    BUNDLED_FREQUENCIES,
    NumberFrequencies,
    load_number_frequencies,
)
from folkscope.numeric.games import PenniesResult, play_matching_pennies
from folkscope.numeric.measures import (
    METRIC_COLUMNS,
    behaviour_shares,
    classify_cells,
    count_number_frequencies,
    distribution_summary,
    frequency_effect,
    heatmap_data,
    option_matrices,
    order_bias,
    paired_differences,
    problem_metrics,
    problems_frame,
    split_unscored,
    summarize_metrics,
)
from folkscope.numeric.original import load_original_templates
from folkscope.numeric.problems import (
    SCALES,
    TEMPLATE_FORMATS,
    NumericProblem,
    generate_problems,
    load_templates,
    scale_numbers,
)
from folkscope.numeric.run import NumericRun, run_numeric
from folkscope.numeric.scoring import PROBABILITY_COLUMNS, engine_prompt, score_problems, word_variants
from folkscope.numeric.templates import DATASETS, TemplateFile, detect_template_format

__all__ = [
    "BUNDLED_FREQUENCIES",
    "DATASETS",
    "METRIC_COLUMNS",
    "PROBABILITY_COLUMNS",
    "PROMPT_VERSION",
    "SCALES",
    "TEMPLATE_FORMATS",
    "NumberFrequencies",
    "NumericConfig",
    "NumericProblem",
    "NumericRun",
    "PenniesResult",
    "TemplateFile",
    "attach_comparison",
    "behaviour_shares",
    "classify_cells",
    "compare_runs",
    "count_number_frequencies",
    "detect_template_format",
    "distribution_summary",
    "frequency_effect",
    "generate_problems",
    "heatmap_data",
    "load_number_frequencies",
    "load_original_templates",
    "load_templates",
    "option_matrices",
    "order_bias",
    "paired_differences",
    "play_matching_pennies",
    "problem_metrics",
    "problems_frame",
    "rescore",
    "run_numeric",
    "scale_numbers",
    "engine_prompt",
    "score_problems",
    "split_unscored",
    "summarize_metrics",
    "word_variants",
]
