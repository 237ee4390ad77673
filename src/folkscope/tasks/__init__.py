"""Declarative task definitions: columns to text, targets, populations, questions."""

from folkscope.tasks.columns import ColumnToText, column_set, get_column, load_code_file
from folkscope.tasks.filters import PopulationFilter, apply_filters, parse_filters
from folkscope.tasks.task import ACSTaskMetadata, Choice, Target, TaskMetadata, get_task, list_tasks

__all__ = [
    "ACSTaskMetadata",
    "Choice",
    "ColumnToText",
    "PopulationFilter",
    "Target",
    "TaskMetadata",
    "apply_filters",
    "column_set",
    "get_column",
    "get_task",
    "list_tasks",
    "load_code_file",
    "parse_filters",
]
