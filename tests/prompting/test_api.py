"""Public names and import weight of the prompt layer."""

from __future__ import annotations

import subprocess
import sys

import pytest

import folkscope.prompting as prompting


def test_all_lists_every_public_name_once():
    assert len(prompting.__all__) == len(set(prompting.__all__))
    for name in prompting.__all__:
        assert hasattr(prompting, name), name
    modules = (
        "chat",
        "config",
        "export",
        "features",
        "fewshot",
        "orderings",
        "renderer",
        "screening",
        "shapes",
        "templates",
        "types",
        "variations",
    )
    for module_name in modules:
        module = getattr(prompting, module_name)
        for name in module.__all__:
            assert name in prompting.__all__, f"{module_name}.{name} is not re-exported"


def test_no_public_name_is_missing_from_all():
    import importlib
    import types

    # the package re-exports everything folkscope-made it holds; the CLI module lists what it defines
    for module_name, owner in (
        ("folkscope.prompting", "folkscope"),
        ("folkscope.cli.prompts_cmd", "folkscope.cli.prompts_cmd"),
    ):
        module = importlib.import_module(module_name)
        public = {
            n
            for n, v in vars(module).items()
            if not n.startswith("_")
            and not isinstance(v, types.ModuleType)
            and getattr(v, "__module__", "").startswith(owner)
        }
        assert public <= set(module.__all__), public - set(module.__all__)


def test_import_does_not_load_heavy_dependencies():
    code = (
        "import sys, folkscope.prompting, folkscope.cli.prompts_cmd;"
        "heavy = [m for m in ('transformers', 'torch', 'datasets', 'tokenizers', 'vllm') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("name", ["chat", "shapes", "screening", "types", "renderer", "orderings"])
def test_docstring_examples_run(name):
    import doctest
    import importlib

    failures, _ = doctest.testmod(importlib.import_module(f"folkscope.prompting.{name}"), optionflags=doctest.ELLIPSIS)
    assert failures == 0
