"""Part 2, allocational harms (RABBI): if a model's scores or rankings picked the top k, who would lose out?

Candidates (:mod:`~folkscope.allocation.candidates`: bundled Bloomberg
resumes, the RABBI authors' folder, ICNALE essays, a part-1 run's risk
scores) are scored by a model pointwise, pairwise or listwise
(:mod:`~folkscope.allocation.scoring`, through the prompt and readout
layers), pools of them go through top-k selection
(:mod:`~folkscope.allocation.outcomes`: selection rates, ΔDP, ΔEO, impact
ratios; RABBI, δ, JSD, EMD), and a run folder keeps it all
(:func:`run_allocation`). :func:`audit_responses` audits rankings a model
already gave, without a model; :func:`study` checks which bias metric
predicts the allocation gaps across runs.
"""

from folkscope.allocation.acs import acs_candidates
from folkscope.allocation.analysis import rescore
from folkscope.allocation.candidates import (
    CANDIDATE_COLUMNS,
    DEFAULT_REFERENCE,
    ICNALE_REFERENCE,
    RACE_GENDER_GROUPS,
    CandidateSet,
)
from folkscope.allocation.config import TASKS, AllocationConfig
from folkscope.allocation.essays import icnale_essays
from folkscope.allocation.outcomes import bias_table, draw_pools, selection_table
from folkscope.allocation.responses import (
    AUDIT_COLUMNS,
    ResponseAudit,
    ResponsesConfig,
    audit_responses,
    read_responses,
)
from folkscope.allocation.resumes import bloomberg_resumes, rabbi_resumes, resume_jobs
from folkscope.allocation.run import AllocationRun, run_allocation
from folkscope.allocation.scoring import MODES, listwise_scores, pairwise_scores, pointwise_scores
from folkscope.allocation.study import GAPS, METRIC_GAPS, StudyResult, study, study_points, write_study
from folkscope.allocation.templates import TEMPLATE_FAMILIES, TaskTemplate, load_template

__all__ = [
    "AUDIT_COLUMNS",
    "CANDIDATE_COLUMNS",
    "DEFAULT_REFERENCE",
    "GAPS",
    "ICNALE_REFERENCE",
    "METRIC_GAPS",
    "MODES",
    "RACE_GENDER_GROUPS",
    "TASKS",
    "TEMPLATE_FAMILIES",
    "AllocationConfig",
    "AllocationRun",
    "CandidateSet",
    "ResponseAudit",
    "ResponsesConfig",
    "StudyResult",
    "TaskTemplate",
    "acs_candidates",
    "audit_responses",
    "bias_table",
    "bloomberg_resumes",
    "draw_pools",
    "icnale_essays",
    "listwise_scores",
    "load_template",
    "pairwise_scores",
    "pointwise_scores",
    "rabbi_resumes",
    "read_responses",
    "rescore",
    "resume_jobs",
    "run_allocation",
    "selection_table",
    "study",
    "study_points",
    "write_study",
]
