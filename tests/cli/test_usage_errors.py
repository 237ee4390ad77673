"""Usage errors of every folkscope parser are one line naming the command and its --help (issue 28, item 19).

argparse printed the 30-37-line usage block before the line that matters;
the parsers now share :class:`folkscope.cli.parser.CommandParser`.
"""

from __future__ import annotations

import argparse

import pytest

from folkscope.cli.main import build_parser, download_models_main, main, run_acs_benchmark_main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every (sub-)command path of the parser tree, e.g. ("allocation", "run")."""
    out = [path] if path else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.prog.endswith(" " + name):  # aliases (risk = run) print as their command
                    out += _commands(sub, (*path, name))
    return out


COMMANDS = _commands(build_parser())


def _usage_error(capsys, call, argv) -> str:
    with pytest.raises(SystemExit) as exc:
        call(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


def test_the_tree_is_walked():
    assert {
        ("run",),
        ("risk", "run"),
        ("numeric", "run"),
        ("allocation", "run"),
        ("epidemiology", "run"),
        ("data", "bundled"),
    } <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_an_unknown_flag_is_one_line_naming_the_command(capsys, path):
    err = _usage_error(capsys, main, [*path, "--no-such-flag"])
    prog = "folkscope " + " ".join(path)
    assert err.startswith(f"{prog}: error: ") and err.endswith(f" (see {prog} --help)\n") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("call", "argv", "line"),
    [
        (
            main,
            ["run", "--few-shot", "x"],
            "folkscope run: error: argument --few-shot: invalid int value: 'x' (see folkscope run --help)",
        ),
        (
            main,
            ["epidemiology", "run", "--mode", "x"],
            "folkscope epidemiology run: error: argument --mode: invalid choice: 'x'",
        ),
        (main, ["rn"], "folkscope: error: argument COMMAND: invalid choice: 'rn'"),
        (
            run_acs_benchmark_main,
            ["--seed", "x"],
            "run_acs_benchmark: error: argument --seed: invalid int value: 'x' (see run_acs_benchmark --help)",
        ),
        (
            run_acs_benchmark_main,
            ["--bogus"],
            "run_acs_benchmark: error: unrecognized arguments: --bogus (see run_acs_benchmark --help)",
        ),
        (
            download_models_main,
            [],
            "download_models: error: the following arguments are required: --model (see download_models --help)",
        ),
    ],
)
def test_a_bad_value_or_command_is_one_line(capsys, call, argv, line):
    err = _usage_error(capsys, call, argv)
    assert err.startswith(line) and err.count("\n") == 1 and "usage:" not in err, err


def test_a_line_break_in_the_users_value_is_shown_escaped(capsys):
    err = _usage_error(capsys, main, ["run", "--few-shot", "1\n2"])
    assert err.count("\n") == 1 and "'1\\n2'" in err, err


def test_help_is_still_the_full_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0 and "usage: folkscope run" in capsys.readouterr().out


def test_a_parsed_namespace_carries_nothing_of_the_parser():
    args = build_parser().parse_args(["epidemiology", "list"])
    assert not [name for name in vars(args) if name.startswith("_")]


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    """`folkscope tasks | head -1`: the pipe's read end is closed before the command writes a byte, so every write
    fails; the command stops with status 1 and no traceback (it printed two before)."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "folkscope.cli.main", "tasks"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 1
    assert done.stderr == ""
