"""Every part's numeric option is bounded where it is declared (``option(low=...)``) and refused in one line by one rule."""

from __future__ import annotations

import doctest
from dataclasses import fields

import pytest

import folkscope._config as config_module
from folkscope.allocation import AllocationConfig
from folkscope.epidemiology import EpidemiologyConfig
from folkscope.errors import ConfigError
from folkscope.numeric import NumericConfig
from folkscope.risk import BenchmarkConfig

CONFIGS = (BenchmarkConfig, NumericConfig, AllocationConfig, EpidemiologyConfig)


def _bounded(cls):
    return [f for f in fields(cls) if f.metadata.get("low") is not None or f.metadata.get("high") is not None]


@pytest.mark.parametrize("cls", CONFIGS, ids=lambda c: c.__name__)
def test_every_declared_bound_is_enforced_with_one_message(cls):
    bounded = _bounded(cls)
    assert bounded, f"{cls.__name__} declares no bounds"
    for f in bounded:
        low = f.metadata["low"]
        below = [] if f.name == "few_shot" else [low - 1]  # few_shot=0 is zero-shot, as in folktexts
        for bad in (*below, -5, True, 2.5, "3"):
            with pytest.raises(ConfigError, match=f"^{f.name} must be an integer >= {low}") as info:
                cls(**{f.name: bad})
            assert info.value.parameter == f.name
        cls(**{f.name: low})  # the bound itself is allowed


def test_the_bounds_are_the_ones_the_parts_always_had():
    lows = {cls.__name__: {f.name: f.metadata["low"] for f in _bounded(cls)} for cls in CONFIGS}
    assert lows["AllocationConfig"] == {"names_per_group": 1, "rounds": 1, "pool_size": 2, "k_max": 1, "n_bootstrap": 0}
    assert lows["EpidemiologyConfig"] == {"n_samples": 1, "limit": 1, "n_resamples": 10, "refits": 2}
    assert lows["NumericConfig"] == {"pennies_games": 0, "pennies_rounds": 2, "pennies_n": 1}
    assert lows["BenchmarkConfig"]["n_bootstrap"] == 0 and lows["BenchmarkConfig"]["few_shot"] == 1


def test_an_optional_field_may_be_absent():
    assert EpidemiologyConfig(limit=None).limit is None and AllocationConfig(pool_size=None).pool_size is None
    assert BenchmarkConfig(context_size=None).context_size is None


def test_docstring_examples_run():
    assert doctest.testmod(config_module).failed == 0
