"""The public surface: __all__ complete, docstrings runnable, no heavy imports."""

from __future__ import annotations

import doctest
import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
import types

import pytest

import folkscope.metrics as metrics

PRIVATE_MODULES = sorted(m.name for m in pkgutil.iter_modules(metrics.__path__) if m.name.startswith("_"))


def test_all_is_complete_and_resolvable():
    exported = set(metrics.__all__)
    assert len(exported) == len(metrics.__all__), "duplicates in __all__"
    for name in metrics.__all__:
        assert hasattr(metrics, name), name
    public = {
        n
        for n, v in vars(metrics).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType) and n != "annotations"
    }
    assert public == exported


@pytest.mark.parametrize("module", PRIVATE_MODULES)
def test_every_module_export_is_reexported(module):
    mod = importlib.import_module(f"folkscope.metrics.{module}")
    assert set(mod.__all__) <= set(metrics.__all__)
    for name in mod.__all__:
        assert getattr(metrics, name) is getattr(mod, name)


def test_every_module_is_small():
    for module in PRIVATE_MODULES:
        path = importlib.import_module(f"folkscope.metrics.{module}").__file__
        with open(path, encoding="utf-8") as fh:
            assert sum(1 for _ in fh) < 400, module


@pytest.mark.parametrize("name", [n for n in metrics.__all__ if inspect.isfunction(getattr(metrics, n))])
def test_functions_have_keyword_only_options_and_examples(name):
    fn = getattr(metrics, name)
    doc = inspect.getdoc(fn) or ""
    assert ">>>" in doc, f"{name} has no runnable example"
    params = list(inspect.signature(fn).parameters.values())
    # options (anything with a default) are keyword-only, data arguments positional;
    # folktexts' evaluation functions keep folktexts' signatures, so its scripts call them unchanged
    folktexts_signature = fn.__module__ in ("folkscope.metrics._evaluation", "folkscope.metrics._evaluation_bootstrap")
    for p in params:
        if p.default is not inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD and not folktexts_signature:
            assert name in {"random_baseline", "clustered_mean_ci"} and p.name in {"n_options", "clusters"}, (
                f"{name}({p.name}=...) should be keyword-only"
            )


@pytest.mark.parametrize("module", PRIVATE_MODULES)
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"folkscope.metrics.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0


def test_import_does_not_load_heavy_dependencies():
    blocked = ["torch", "transformers", "vllm", "litellm", "lightgbm", "matplotlib"]
    code = f"""
import importlib.abc, sys
BLOCKED = {blocked!r}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("blocked for this test: " + name)
        return None
sys.meta_path.insert(0, Block())
import folkscope.metrics as m
m.roc_auc_score([0, 1], [0.2, 0.8])
m.groupwise_metrics([0, 1, 0, 1], [0.2, 0.8, 0.3, 0.6], ["a", "a", "b", "b"])
m.rabbi_test([1.0, 2.0], [0.5, 3.0])
m.IsotonicCalibrator().fit([0.1, 0.9], [0, 1])
loaded = sorted(n for n in sys.modules if n.split(".")[0] in BLOCKED)
assert not loaded, loaded
print("ok")
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_plain_import_leaves_torch_unloaded():
    code = "import sys, folkscope.metrics; print(sorted(n for n in ('torch', 'transformers') if n in sys.modules))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
