"""``--help`` states every default; a mistyped flag, choice, task or dataset gets the closest right one (issue 30).

Before, ``folkscope run --help`` stated 1 of its defaults (``--task``, which
downloads 51 state files, ``--seed`` and ``--n-bootstrap`` were hidden), and a
typo got only the list of what exists.
"""

from __future__ import annotations

import argparse
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope._names import did_you_mean
from folkscope.cli.main import main
from folkscope.tasks import list_tasks

COMMANDS = [
    ["run"],
    ["risk", "run"],
    ["numeric", "run"],
    ["allocation", "run"],
    ["epidemiology", "run"],
    ["compare"],
    ["leaderboard"],
    ["prompts"],
]


def _help(capsys, command: list[str]) -> str:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines: compare the words


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_option_with_a_default_states_it(capsys, command):
    from folkscope.cli.main import build_parser

    text = _help(capsys, command)
    parser = build_parser()
    for word in command:  # down to the sub-command's own parser
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    for action in parser._actions:
        if not action.option_strings or action.default in (None, False, [], "==SUPPRESS==") or action.nargs == 0:
            continue
        flag = action.option_strings[-1]
        entry = text.split(f" {flag} ", 1)[-1] if f" {flag} " in text else ""
        assert "default" in entry[:600].lower(), f"{' '.join(command)} --help: {flag} does not state its default"


def test_run_states_the_defaults_that_were_hidden(capsys):
    text = _help(capsys, ["run"])
    for stated in ("(default: ACSIncome)", "(default: 42)", "(default: 1000)"):
        assert stated in text


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--taks", "ACSIncome"], "unrecognized arguments: --taks ACSIncome (did you mean '--task'?)"),
        (["numeric", "run", "--datset=colors"], "(did you mean '--dataset'?)"),
        (["numeric", "run", "--dataset", "colours"], "invalid choice: 'colours' (did you mean 'colors'?)"),
        (
            ["run", "--model", "fake", "--inference-backend", "fake", "--task", "acsincom"],
            "unknown task 'acsincom' (did you mean 'ACSIncome'?)",
        ),
        (
            ["epidemiology", "run", "--model", "fake", "--inference-backend", "fake", "--tasks", "acs_income_by_sx"],
            "(did you mean 'acs_income_by_sex'?)",
        ),
    ],
)
def test_a_typo_gets_the_closest_right_name_in_one_line(capsys, argv, expected):
    try:
        code = main(argv)  # a task name is checked by the command: it returns 2
    except SystemExit as exc:  # a flag or choice by argparse: it exits 2
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1, err


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(list_tasks()), data=st.data())
def test_a_name_in_another_case_or_with_a_letter_dropped_is_found(name, data):
    known = list_tasks()
    assert did_you_mean(name.swapcase(), known) == f" (did you mean {name!r}?)"
    cut = data.draw(st.integers(0, len(name) - 1))
    hint = did_you_mean(name[:cut] + name[cut + 1 :], known)
    suggested = re.fullmatch(r" \(did you mean '(.+)'\?\)", hint)
    assert suggested and suggested.group(1) in known  # a known name, never a made-up one


@settings(max_examples=200, deadline=None)
@given(value=st.text(max_size=12), known=st.lists(st.text(min_size=1, max_size=12), max_size=6))
def test_a_suggestion_is_a_known_name_or_nothing(value, known):
    hint = did_you_mean(value, known)
    assert hint == "" or hint[len(" (did you mean ") : -len("?)")] in {repr(k) for k in known}


def test_docstring_examples_run():
    import doctest

    import folkscope._names

    assert doctest.testmod(folkscope._names).failed == 0


@pytest.mark.parametrize(
    "command",
    [["run"], ["risk", "run"], ["numeric", "run"], ["allocation", "run"], ["epidemiology", "run"]],
    ids=" ".join,
)
def test_every_command_that_runs_a_model_takes_the_logger_level(capsys, command):
    """allocation and epidemiology had no --logger-level: their INFO progress could not be shown."""
    assert "--logger-level {DEBUG,INFO,WARNING,ERROR,CRITICAL}" in _help(capsys, command)
    assert "(default: WARNING)" in _help(capsys, command)
