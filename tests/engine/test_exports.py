"""Public names are listed in __all__, and importing the engine stays light."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

MODULES = [
    "folkscope.engine",
    "folkscope.engine.requests",
    "folkscope.engine.cache",
    "folkscope.engine.batching",
    "folkscope.engine.backoff",
    "folkscope.engine.tokens",
    "folkscope.engine.progress",
    "folkscope.engine.runner",
    "folkscope.engine.backends",
    "folkscope.engine.backends.base",
    "folkscope.engine.backends.fake",
    "folkscope.engine.backends.hf",
    "folkscope.testing",
    "folkscope.testing.faults",
    "folkscope.testing.models",
    "folkscope.testing.responder",
    "folkscope.testing.sources",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_lists_every_public_name(name):
    module = importlib.import_module(name)
    public = {
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and getattr(obj, "__module__", name) == name
        and (inspect.isclass(obj) or inspect.isfunction(obj))
    }
    assert public <= set(module.__all__), f"missing from __all__: {sorted(public - set(module.__all__))}"
    assert all(hasattr(module, n) for n in module.__all__)


@pytest.mark.parametrize(
    "name", [m for m in MODULES if m not in ("folkscope.engine.backends.hf", "folkscope.testing.models")]
)
def test_docstring_examples_run(name):
    import doctest

    failures, _ = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert failures == 0


def test_engine_package_reexports_models_and_engine_api():
    import folkscope.engine as engine

    for n in [
        "resolve_model",
        "ResolvedModel",
        "ensure_default_model",
        "Engine",
        "ScoreRequest",
        "PrefixGroupRequest",
        "NextTokenRequest",
        "GenerateRequest",
        "ResultCache",
        "expand_variants",
    ]:
        assert n in engine.__all__


def test_import_engine_does_not_import_torch_or_transformers():
    code = (
        "import sys\n"
        "import folkscope.engine\n"
        "from folkscope.engine import Engine, ScoreRequest\n"
        "from folkscope.engine.backends.fake import FakeBackend\n"
        "Engine(FakeBackend(), cache=None).score([ScoreRequest('q', ('a',))])\n"
        "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_missing_torch_gives_the_pip_extra(monkeypatch):
    from folkscope.engine import devices
    from folkscope.errors import MissingDependencyError

    real = importlib.import_module

    def blocked(name, *args, **kwargs):
        if name.split(".")[0] == "torch":
            raise ImportError("No module named 'torch'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", blocked)
    with pytest.raises(MissingDependencyError, match=r"folkscope\[hf\]"):
        devices.resolve_device(None)
