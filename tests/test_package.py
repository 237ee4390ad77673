"""Package-level contracts: light import, complete public lists, the error tree, the CLI's error line."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import types

import pytest

import folkscope.errors as errors
from folkscope.cli.main import main

HEAVY = ("torch", "transformers", "vllm", "litellm", "lightgbm", "matplotlib")


@pytest.mark.parametrize(
    "module",
    [
        "folkscope",
        "folkscope.tasks",
        "folkscope.data",
        "folkscope.engine",
        "folkscope.prompting",
        "folkscope.readout",
        "folkscope.metrics",
        "folkscope.report",
        "folkscope.risk",
        "folkscope.numeric",
        "folkscope.allocation",
        "folkscope.epidemiology",
        "folkscope.testing",
        "folkscope.runs",
        "folkscope.registry",
        "folkscope.cli.main",
    ],
)
def test_import_does_not_load_heavy_dependencies(module):
    code = f"import sys, {module}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"importing {module} loaded {out.stdout.strip()}"


@pytest.mark.parametrize(
    "module",
    [
        "folkscope.errors",
        "folkscope.tasks",
        "folkscope.data",
        "folkscope.engine",
        "folkscope.prompting",
        "folkscope.readout",
        "folkscope.metrics",
        "folkscope.report",
        "folkscope.risk",
        "folkscope.numeric",
        "folkscope.allocation",
        "folkscope.epidemiology",
        "folkscope.testing",
        "folkscope.runs",
        "folkscope.registry",
    ],
)
def test_all_lists_every_public_name(module):
    mod = importlib.import_module(module)
    public = {
        n
        for n, v in vars(mod).items()
        if not n.startswith("_")
        and not isinstance(v, types.ModuleType)
        and getattr(v, "__module__", "").startswith("folkscope")
    }
    assert public <= set(mod.__all__), f"{module} exports names missing from __all__: {public - set(mod.__all__)}"
    for name in mod.__all__:
        assert hasattr(mod, name)


def test_the_engine_never_imports_the_testing_package():
    """folkscope.testing builds on the engine (fakes, servers, random models); the engine never needs it."""
    code = (
        "import importlib, pkgutil, sys, folkscope.engine\n"
        "for info in pkgutil.walk_packages(folkscope.engine.__path__, 'folkscope.engine.'):\n"
        "    importlib.import_module(info.name)\n"
        "print(','.join(m for m in sys.modules if m.startswith('folkscope.testing')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"the engine imported {out.stdout.strip()}"


def test_errors_refine_builtins():
    assert issubclass(errors.ConfigError, ValueError)
    assert issubclass(errors.UnknownTaskError, KeyError) and issubclass(errors.UnknownTaskError, errors.ConfigError)
    assert issubclass(errors.DownloadError, OSError) and issubclass(errors.IntegrityError, errors.DownloadError)
    assert issubclass(errors.MissingDependencyError, ImportError)
    assert issubclass(errors.EmptyPopulationError, errors.DataError)
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, (errors.FolkscopeError, Warning))
    # KeyError subclasses print their message, not its repr
    assert str(errors.UnknownTaskError("no task 'x'")) == "no task 'x'"


def test_missing_extra_names_the_pip_line():
    from folkscope._deps import require

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    with pytest.raises(errors.MissingDependencyError, match=r"pip install 'folkscope\[vllm\]'"):
        require("vllm", feature="vLLM scoring")


def test_cli_prints_one_line_errors_and_exits_non_zero(capsys):
    code = main(["prompts", "--task", "NoSuchTask", "--output", "-"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("folkscope: error: unknown task 'NoSuchTask'")
    assert "Traceback" not in err


def test_cli_lists_tasks_and_bundled_data(capsys):
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert "ACSIncome" in out and "NISTIncome" in out and "PINCP>50000" in out
    assert main(["data", "bundled"]) == 0
    assert "nist-national" in capsys.readouterr().out
