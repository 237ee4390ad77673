"""The fuzz half of the fault campaign (spec/reliability.md): 2,000 generated inputs per parser.

Every parser a user's text reaches (command-line flags of ``run`` and
``numeric``, population filters, ``--variation`` strings; the chain-of-thought
answer parser has its own 2,000 cases in tests/prompting/test_modes.py) must
answer with a result or one clear line: a :class:`~folkscope.errors.FolkscopeError`
(or argparse's usage error), never a traceback, and fast. Inputs mix the
grammar's own pieces (known columns, operators, keys, numbers at the edges of
their types) with arbitrary text, so they reach deep into each parser.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folkscope.errors import FolkscopeError

CAMPAIGN = settings(max_examples=2000, deadline=2000, database=None, suppress_health_check=[HealthCheck.too_slow])

#: values at the edges of what the parsers convert: huge, tiny, signed, non-finite, non-ASCII digits
EDGE_NUMBERS = st.sampled_from(
    [
        "0",
        "-0",
        "1",
        "-1",
        "1e12",
        "1e308",
        "1e309",
        "-1e309",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "0.5",
        ".5",
        "5.",
        "1_000",
        "9" * 22,
        "0x10",
        "1/2",
        "٣",
        "²",
        "１",
        "",
        " ",
        "1,2",
        "1..2",
        "2..1",
        "--1",
        "+3",
    ]
)
TEXT = st.text(max_size=24)
VALUE = st.one_of(EDGE_NUMBERS, TEXT, st.integers(-(10**25), 10**25).map(str), st.floats(allow_nan=True).map(repr))


def _one_line(exc: BaseException) -> None:
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, message


# ---------------------------------------------------------------- population filters
COLUMNS = st.sampled_from(["AGEP", "SEX", "PUMA", "WKHP", "PINCP", "OCCP", "Nope", "agep", "", " AGEP "])
OPERATORS = st.sampled_from(["=", "==", "!=", ">", ">=", "<", "<=", "=>", "~", "", " = "])
FILTER = st.one_of(
    st.builds(lambda c, o, v: f"{c}{o}{v}", COLUMNS, OPERATORS, VALUE),
    st.builds(lambda c, a, b: f"{c}={a}..{b}", COLUMNS, VALUE, VALUE),
    st.builds(lambda c, vs: f"{c}={'|'.join(vs)}", COLUMNS, st.lists(VALUE, max_size=4)),
    TEXT,
)
#: a survey frame as the data layer hands it over: nullable ints, floats with NaN and inf, text codes, blanks
FRAME = pd.DataFrame(
    {
        "AGEP": pd.array([15, 16, 35, 90, None, 40], dtype="Int16"),
        "SEX": [1, 2, 1, 2, 1, 2],
        "PUMA": ["00101", "00102", "03700", "A", None, "5"],
        "WKHP": [40.0, np.nan, 0.0, 99.0, 20.0, np.inf],
        "PINCP": [1e5, -500.0, np.nan, 0.0, 2e6, 3.5],
        "OCCP": pd.array(["1010", "9920", None, "0010", "2000", "1010"], dtype="string"),
    }
)


@CAMPAIGN
@given(st.lists(FILTER, max_size=3), st.sampled_from([None, " & ", ","]))
def test_population_filters_parse_and_apply_or_say_why(filters, joined):
    from folkscope.tasks import apply_filters, parse_filters

    spec = joined.join(filters) if joined else filters  # a list, one string joined with '&', or folktexts' comma list
    try:
        parsed = parse_filters(spec)
        mask = apply_filters(FRAME, parsed)
    except FolkscopeError as exc:
        _one_line(exc)
        return
    assert mask.dtype == bool and mask.shape == (len(FRAME),)


# ---------------------------------------------------------------- --variation strings
KEYS = st.sampled_from(
    [
        "format",
        "connector",
        "granularity",
        "order",
        "custom_prompt_prefix",
        "custom_prompt_suffix",
        "show_question",
        "Format",
        "nope",
        "",
        " format ",
    ]
)


@CAMPAIGN
@given(st.lists(st.one_of(st.builds(lambda k, v: f"{k}={v}", KEYS, VALUE), TEXT), max_size=4))
def test_variations_parse_into_a_prompt_config_or_say_why(items):
    from folkscope.risk.config import BenchmarkConfig

    try:
        config = BenchmarkConfig(variation=tuple(items))
        config.prompt_config()
    except FolkscopeError as exc:
        _one_line(exc)


# ---------------------------------------------------------------- command-line flags, up to the model
def _parser() -> argparse.ArgumentParser:
    from folkscope.cli.main import build_parser

    return build_parser()


PARSER = _parser()


def _flags(*command: str) -> list[tuple[str, bool]]:
    """(option string, takes a value) of a sub-command's flags (``"numeric", "run"``: a sub-command's sub-command)."""
    sub = PARSER
    for name in command:
        sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    out = []
    for action in sub._actions:
        if action.option_strings and not isinstance(action, argparse._HelpAction):
            out.append((action.option_strings[-1], action.nargs != 0))
    return out


#: flags that name folders are left out: the campaign must not write where a fuzzer says
_PATHS = {
    "--results-dir",
    "--data-dir",
    "--cache-dir",
    "--template-file",
    "--prompt-file",
    "--frequency-table",
    "--compare-to",
}
RUN_FLAGS = [f for f in _flags("run") if f[0] not in _PATHS]
NUMERIC_FLAGS = [f for f in _flags("numeric", "run") if f[0] not in _PATHS]


def _argv(command: str, picks: list[tuple[tuple[str, bool], str]]) -> list[str]:
    argv = command.split()
    for (flag, takes_value), value in picks:
        argv += [flag, value] if takes_value else [flag]
    return argv


def _pre_model(argv: list[str]) -> None:
    """Everything ``folkscope run|numeric`` checks before data and model load (the CLI's own order)."""
    from folkscope.prompting.config import PromptConfigWarning

    warnings.simplefilter(
        "ignore", PromptConfigWarning
    )  # "--system-prompt has no effect without ...": a warning by design
    args = PARSER.parse_args(argv)
    if args.command == "run":
        from folkscope.cli.run_cmd import config_from_args
        from folkscope.tasks.task import get_task

        _, config = config_from_args(args)
        task = get_task(args.task)
        if config.feature_subset:
            task = task.with_features(list(config.feature_subset))
        if config.population_filter:
            task = task.with_filters(list(config.population_filter))
        config.prompt_config()
    else:
        from folkscope.cli.numeric_cmd import config_from_args as numeric_config_from_args

        config = numeric_config_from_args(args)
        config.fingerprint()


@pytest.mark.parametrize(("command", "flags"), [("run", RUN_FLAGS), ("numeric run", NUMERIC_FLAGS)])
def test_command_line_flags_give_a_config_or_one_line(command, flags):
    @CAMPAIGN
    @given(st.lists(st.tuples(st.sampled_from(flags), VALUE), min_size=1, max_size=3))
    def check(picks):
        err = io.StringIO()
        try:
            with warnings.catch_warnings(), contextlib.redirect_stderr(err):
                _pre_model(_argv(command, picks))
        except SystemExit as exc:  # a usage error: one line naming the command, no usage block (issue 28, item 19)
            assert exc.code == 2 and err.getvalue().count("\n") == 1 and "usage:" not in err.getvalue(), err.getvalue()
        except FolkscopeError as exc:
            _one_line(exc)

    check()


def test_the_campaign_reaches_past_the_parsers():
    """Guard against a campaign that only ever exercises the first rejection."""
    _pre_model(["run", "--task", "NISTIncome", "--use-population-filter", "AGEP>16", "--variation", "format=bullet"])
    assert math.isfinite(len(RUN_FLAGS)) and len(RUN_FLAGS) > 20 and len(NUMERIC_FLAGS) > 10


def test_an_error_is_one_line_even_when_the_users_value_has_line_breaks():
    """Found by this campaign: --use-feature-subset '0\\n0' printed a two-line error (the name was echoed as given)."""
    from folkscope.errors import FilterSyntaxError, UnknownColumnError
    from folkscope.tasks import get_task

    with pytest.raises(UnknownColumnError) as info:
        get_task("ACSIncome").with_features(["0\n0"])
    _one_line(info.value)
    assert "0\\n0" in str(info.value)  # shown escaped, still recognisable
    assert str(FilterSyntaxError("bad filter 'A\r\nB'")) == "bad filter 'A\\r\\nB'"
