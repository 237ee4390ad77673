"""Flags generated from config fields: every field has its flag in every command that builds that config, with its help."""

from __future__ import annotations

import argparse
import doctest
import warnings
from dataclasses import fields

import pytest

import folkscope.cli.config_flags as config_flags
from folkscope._config import flag_of
from folkscope.cli.main import build_parser
from folkscope.engine import EngineConfig
from folkscope.numeric.config import NumericConfig
from folkscope.risk import BenchmarkConfig


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in command.split():
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


@pytest.mark.parametrize(
    ("command", "configs"),
    [
        ("run", (BenchmarkConfig, EngineConfig)),
        ("evidence", (BenchmarkConfig, EngineConfig)),
        ("numeric run", (NumericConfig, EngineConfig)),
    ],
)
def test_every_field_of_a_commands_configs_is_a_flag_with_the_fields_help(command, configs):
    help_text = " ".join(_subparser(command).format_help().split())
    for cls in configs:
        for f in fields(cls):
            if not f.metadata.get("cli", True):
                continue
            assert flag_of(f) in help_text, f"{command}: {cls.__name__}.{f.name} has no flag"
            words = " ".join(str(f.metadata.get("flag_help") or f.metadata["doc"]).split())[:40]
            assert words in help_text, f"{command}: the help of {flag_of(f)} is not {cls.__name__}.{f.name}'s doc"


@pytest.mark.parametrize(
    ("command", "cls"), [("run", BenchmarkConfig), ("numeric run", NumericConfig), ("run", EngineConfig)]
)
def test_no_flags_give_the_configs_own_defaults(command, cls):
    args = build_parser().parse_args(command.split())
    values = config_flags.config_values(args, cls)
    defaults = {f.name: f.default for f in fields(cls) if f.name in values}
    assert values == defaults


def test_flag_kinds_reach_the_config():
    args = build_parser().parse_args(
        [
            "run",
            "--dont-correct-order-bias",
            "--no-baselines",
            "--use-feature-subset",
            "AGEP, SEX",
            "--use-population-filter",
            "SEX=2",
            "--use-population-filter",
            "AGEP=18..35",
            "--variation",
            "format=bullet",
            "connector==",
            "--subsampling",
            "0.5",
            "--few-shot",
            "2",
            "--numeric-readout",
            "expected",
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = BenchmarkConfig(**config_flags.config_values(args, BenchmarkConfig))
    assert (config.correct_order_bias, config.baselines) == (False, False)
    assert config.feature_subset == ("AGEP", "SEX") and config.population_filter == ("SEX=2", "AGEP=18..35")
    assert config.variation == ("format=bullet", "connector==") and config.subsampling == 0.5
    assert config.few_shot == 2 and config.numeric_readout == "expected"
    numeric = build_parser().parse_args(["numeric", "run", "--chat", "--numbers", "8,9,48", "--scales", "small,large"])
    values = config_flags.config_values(numeric, NumericConfig)
    assert values["chat"] is True and values["numbers"] == (8, 9, 48) and values["scales"] == ("small", "large")


@pytest.mark.parametrize(
    "argv",
    [["numeric", "run", "--numbers", "8,x"], ["run", "--numeric-readout", "mean"], ["run", "--subsampling", "0"]],
)
def test_a_bad_flag_value_is_argparses_one_line_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err


def test_docstring_examples_run():
    assert doctest.testmod(config_flags).failed == 0
