"""Part 3, epidemiology: does the model know P(outcome | condition) in real surveys?

Tasks are data files (:mod:`~folkscope.epidemiology.tasks`; bundled: the
NIST ACS 2019 excerpt, statsmodels' ANES 1996 and RAND HIE tables), the
truth is the survey's weighted distribution per condition
(:mod:`~folkscope.epidemiology.truth`), the model's is elicited by QA or
likelihood prompting through the prompt and readout layers
(:mod:`~folkscope.epidemiology.elicit`), and a run scores each task 0-100
between a uniform guess and the survey's own sampling noise
(:func:`run_epidemiology`). High-dimensional tasks can also be generated
from a dataset's phrase table (:mod:`~folkscope.epidemiology.phrases`), and
a task's truth can be a published table of proportions instead of microdata
(:mod:`~folkscope.epidemiology.aggregate`).
"""

from folkscope.data.surveys import DATASETS, load_dataset
from folkscope.epidemiology.analysis import rescore, score_table
from folkscope.epidemiology.config import EpidemiologyConfig
from folkscope.epidemiology.elicit import LIKELIHOOD_READOUTS, MAX_ORDERINGS, MODES, elicit
from folkscope.epidemiology.run import EpidemiologyRun, run_epidemiology
from folkscope.epidemiology.tasks import (
    Level,
    Task,
    TaskFile,
    Variable,
    get_task,
    list_tasks,
    load_task_file,
    task_files,
    user_task_files,
)
from folkscope.epidemiology.truth import References, Truth, references, task_truth

__all__ = [
    "DATASETS",
    "LIKELIHOOD_READOUTS",
    "MAX_ORDERINGS",
    "MODES",
    "EpidemiologyConfig",
    "EpidemiologyRun",
    "Level",
    "References",
    "Task",
    "TaskFile",
    "Truth",
    "Variable",
    "elicit",
    "get_task",
    "list_tasks",
    "load_dataset",
    "load_task_file",
    "references",
    "rescore",
    "run_epidemiology",
    "score_table",
    "task_files",
    "task_truth",
    "user_task_files",
]
