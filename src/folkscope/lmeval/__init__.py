"""lm-evaluation-harness both ways: a run's questions as an lm-eval task, and lm-eval's log back as a folkscope run.

A model that runs only under lm-eval (one of its many backends) can be
scored here with every metric of a part:

1. :func:`export_task` runs a part's command once on the stand-in model,
   records every question it asks (:mod:`folkscope.engine.recording`) and
   writes them as a ``multiple_choice`` task folder for ``lm_eval --include_path``;
2. ``lm_eval ... --tasks <name> --log_samples`` computes the log-likelihood
   of every choice;
3. :func:`import_samples` reads that log (:mod:`~folkscope.lmeval.samples`),
   checks it answers every question exactly as exported, and runs the same
   command on the :mod:`replay backend <folkscope.engine.backends.replay>`.

Only questions scored by log-likelihood travel (multiple-choice letters,
option words, continuations); next-token distributions, generations and
chat prompts are refused at export, in one line.
"""

from folkscope.lmeval.replay import ImportedRun, import_samples, read_task
from folkscope.lmeval.samples import LoggedRun, parse_loglikelihood, read_samples
from folkscope.lmeval.tasks import ExportedTask, export_task, questions

__all__ = [
    "ExportedTask",
    "ImportedRun",
    "LoggedRun",
    "export_task",
    "import_samples",
    "parse_loglikelihood",
    "questions",
    "read_samples",
    "read_task",
]
