"""The numpydoc examples of the numeric modules run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "folkscope.numeric",
        "folkscope.numeric.problems",
        "folkscope.numeric.original",
        "folkscope.numeric.scoring",
        "folkscope.numeric.analysis",
        "folkscope.numeric.frequencies",
    ],
)
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
