"""The examples in the docstrings of the study's modules and of the hooks it added below it run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    [
        "folkscope.study.plan",
        "folkscope.study.cells",
        "folkscope.runs.lifecycle",
        "folkscope.engine.usage",
        "folkscope.data.download",
    ],
)
def test_module_examples(name):
    module = importlib.import_module(name)
    assert doctest.testmod(module).failed == 0
