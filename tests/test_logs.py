"""The terminal and the run log: folkscope's warnings as sentences, third-party noise only in the log."""

from __future__ import annotations

import doctest
import logging
import os
import warnings

import pytest

import folkscope.logs as logs
from folkscope.errors import ConfigError
from folkscope.paths import check_writable_dir
from folkscope.prompting.config import PromptConfigWarning


@pytest.fixture()
def cli_logging():
    """configure_cli as a command would call it, undone afterwards (handlers, levels, adopted loggers)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    own_level = logging.getLogger("folkscope").level
    with warnings.catch_warnings():  # restores showwarning too
        warnings.simplefilter("always")
        yield logs.configure_cli
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)
    logging.getLogger("folkscope").setLevel(own_level)
    logs._CONFIGURED = False


def third_party_warning() -> None:
    warnings.warn_explicit(
        "past_key_values is deprecated and will be removed in version 5.40.0",
        FutureWarning,
        "/site-packages/torch/nn/modules/module.py",
        1750,
        module="torch.nn.modules.module",
    )


def test_own_warnings_read_as_sentences_and_third_party_ones_stay_off_the_terminal(cli_logging, capsys, tmp_path):
    cli_logging("WARNING")
    with logs.log_to_file(tmp_path / "run.log") as path:
        warnings.warn(
            "enable_thinking implies chain-of-thought prompting; turning cot_prompting on",
            PromptConfigWarning,
            stacklevel=1,
        )
        third_party_warning()
        logging.getLogger("transformers.modeling_utils").warning("some weights were not initialised")
    err = capsys.readouterr().err
    assert err == "folkscope: warning: enable_thinking implies chain-of-thought prompting; turning cot_prompting on\n"
    logged = path.read_text()
    assert "FutureWarning: past_key_values is deprecated" in logged and "module.py:1750" in logged
    assert "some weights were not initialised" in logged and "turning cot_prompting on" in logged


def test_debug_level_shows_third_party_warnings_on_the_terminal(cli_logging, capsys):
    cli_logging("DEBUG")
    third_party_warning()
    assert "DEBUG py.warnings: FutureWarning: past_key_values is deprecated" in capsys.readouterr().err


def test_third_party_errors_still_reach_the_terminal(cli_logging, capsys):
    cli_logging("WARNING")
    logging.getLogger("LiteLLM").error("provider down")
    assert "ERROR LiteLLM: provider down" in capsys.readouterr().err


def test_transformers_own_handler_is_replaced_by_ours(cli_logging, capfd, tmp_path):
    transformers = pytest.importorskip("transformers")
    from folkscope._deps import require

    cli_logging("WARNING")
    require("transformers", feature="this test")
    with logs.log_to_file(tmp_path / "run.log") as path:
        transformers.utils.logging.get_logger("transformers.generation.utils").warning(
            "`past_key_values` are deprecated"
        )
    assert "deprecated" not in capfd.readouterr().err
    assert "`past_key_values` are deprecated" in path.read_text()
    transformers.utils.logging.enable_default_handler()  # leave transformers as other tests expect it
    transformers.utils.logging.disable_propagation()


def test_run_log_appends_across_resumed_runs(tmp_path):
    for attempt in ("first", "second"):
        with logs.log_to_file(tmp_path / "run.log"):
            logging.getLogger("folkscope.test").info("%s attempt", attempt)
    assert (tmp_path / "run.log").read_text().count("attempt") == 2


def test_a_file_in_the_way_is_one_clear_error(tmp_path):
    (tmp_path / "results").write_text("not a folder")
    with pytest.raises(ConfigError, match=r"results is a file, not a folder; pass another --results-dir"):
        check_writable_dir(tmp_path / "results" / "deeper")


def unwritable_folder(tmp_path):
    """A folder this process cannot write: chmod for a normal user; root ignores modes, so /sys there."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir(mode=0o500)
        return folder
    try:
        check_writable_dir("/sys")
    except ConfigError:
        return "/sys"
    pytest.skip("no folder here refuses root")


def test_an_unwritable_folder_is_one_clear_error_and_nothing_is_created(tmp_path):
    folder = unwritable_folder(tmp_path)
    with pytest.raises(ConfigError, match=r"is not writable \(permission denied\); pass another --results-dir"):
        check_writable_dir(f"{folder}/results/run")
    assert not os.path.exists(f"{folder}/results")


def test_a_new_folder_under_a_writable_one_passes_without_being_created(tmp_path):
    assert check_writable_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists()


def test_docstring_examples_run():
    assert doctest.testmod(logs, optionflags=doctest.ELLIPSIS).failed == 0
