"""Public names and import weight of the readout layer."""

from __future__ import annotations

import doctest
import importlib

import pytest

import folkscope.readout as readout


def test_all_lists_every_public_name_of_its_modules_once():
    assert len(readout.__all__) == len(set(readout.__all__))
    for module_name in ("choices", "digits", "generation", "rankings", "statements"):
        module = getattr(readout, module_name)
        for name in module.__all__:
            assert name in readout.__all__, f"{module_name}.{name} is not re-exported"
    for name in readout.__all__:
        assert hasattr(readout, name), name


@pytest.mark.parametrize("name", ["choices", "digits", "generation", "rankings", "statements"])
def test_docstring_examples_run(name):
    failures, _ = doctest.testmod(importlib.import_module(f"folkscope.readout.{name}"), optionflags=doctest.ELLIPSIS)
    assert failures == 0
