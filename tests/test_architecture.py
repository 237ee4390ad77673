"""The layering of spec/architecture.md, checked on the source: no import cycles, no upward imports, parts apart.

Every ``import`` in the package counts, including those inside functions
(a lazy import is still an arrow: ``risk.benchmark`` importing ``report``
lazily while ``report`` imported ``risk.evaluate`` was a cycle all the same).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "folkscope"
PARTS = ("risk", "numeric", "allocation", "epidemiology")
#: the layers that drive the rest from above (the command line, test helpers, studies, results leaving through
#: export, the lm-eval bridge): nothing below them may import them
ABOVE = ("cli", "testing", "study", "export", "lmeval")
#: what each layer must never import (its own layer and those below it are fine)
FORBIDDEN = {
    "metrics": ("engine", "data", "tasks", "prompting", "readout", "runs", "report", "registry", *ABOVE, *PARTS),
    "engine": ("data", "tasks", "prompting", "readout", "runs", "report", "registry", *ABOVE, *PARTS),
    "data": ("engine", "prompting", "readout", "runs", "report", "registry", *ABOVE, *PARTS),
    "tasks": ("engine", "prompting", "readout", "runs", "report", "registry", *ABOVE, *PARTS),
    "prompting": ("readout", "runs", "report", "registry", *ABOVE, *PARTS),
    "readout": ("data", "tasks", "runs", "report", "registry", *ABOVE, *PARTS),
    "learners": ("engine", "data", "tasks", "prompting", "readout", "runs", "report", "registry", *ABOVE, *PARTS),
    "runs": ("engine", "data", "tasks", "prompting", "readout", "report", *ABOVE, *PARTS),
    "report": ("engine", "data", "tasks", "prompting", "readout", *ABOVE, *PARTS),
    "registry": ("engine", "data", "tasks", "prompting", "readout", "runs", "report", *ABOVE, *PARTS),
    **{part: (*ABOVE, *(p for p in PARTS if p != part)) for part in PARTS},
    #: results leave through it, from the command line; it reads run folders and reaches parts through the registry
    "export": ("cli", "testing", "study", *PARTS),
    #: the lm-eval bridge runs part commands through the parser it is handed, and parts through the registry
    "lmeval": ("cli", "testing", "study", "export", *PARTS),
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The folkscope modules ``name`` imports (a package's submodule, where one is named, rather than the package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            subs = [f"{target}.{a.name}" for a in node.names]
            found.update(s for s in subs if s in MODULES)
            if any(s not in MODULES for s in subs) and target in MODULES:
                found.add(target)
    found.discard(name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> str:
    return name.split(".")[1] if "." in name else ""


def test_no_import_cycles():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_upward_imports_and_parts_never_import_each_other(layer):
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if _layer(name) == layer
        for target in targets
        if _layer(target) in FORBIDDEN[layer]
    )
    assert not wrong, wrong


def test_no_module_over_about_500_lines_without_a_stated_reason():
    """House rule 1: a longer module says in its docstring why it stays whole."""
    long = []
    for name, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").count("\n")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if lines > 550 and "Why one module" not in doc:
            long.append(f"{name} ({lines} lines)")
    assert not long, long


#: names only the prompt layer (prompts) and the readout layer (variant merging) may use
BUILT_BELOW = {
    "ChatPrompt": "prompting",
    "Message": "prompting",
    "expand_variants": "readout",
    "merge_probs": "readout",
    "merge_logprobs": "readout",
    "PrefixGroupRequest": "readout",
    "NextTokenRequest": "readout",
}


@pytest.mark.parametrize("part", PARTS)
def test_parts_neither_build_prompts_nor_read_probabilities_themselves(part):
    """One prompt type, built only by the prompt layer; one readout layer that parts call."""
    wrong = []
    for name, path in MODULES.items():
        if _layer(name) != part:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            used = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if used in BUILT_BELOW:
                wrong.append(f"{name} uses {used} (the {BUILT_BELOW[used]} layer's)")
    assert not wrong, sorted(set(wrong))


# -- the floor plan: every part's package has the same modules and entry names, and one run lifecycle ---------------


def _defined(path: Path) -> set[str]:
    """Top-level functions and classes a module defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _called(path: Path) -> set[str]:
    """Names a module calls (``f(...)`` and ``x.f(...)``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            fn = node.func
            out.add(fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else "")
    return out


def test_the_registry_lists_exactly_the_parts_this_test_keeps_apart():
    from folkscope.registry import PARTS as REGISTERED

    assert tuple(REGISTERED) == PARTS


@pytest.mark.parametrize("part", PARTS)
def test_every_part_has_the_floor_plan_and_its_entry_names(part):
    from folkscope.registry import ENTRIES, FLOOR_PLAN
    from folkscope.registry import PARTS as REGISTERED

    missing = []
    for module, names in FLOOR_PLAN.items():
        path = ROOT / part / f"{module}.py"
        if not path.is_file():
            missing.append(f"{part}/{module}.py")
            continue
        missing += [f"{part}/{module}.py:{name}" for name in names if name not in _defined(path)]
    assert not missing, missing
    for entry in ENTRIES:  # what the CLI, rescore, leaderboard and compare call, found by the convention
        assert callable(REGISTERED[part].load(entry)), entry


@pytest.mark.parametrize("part", PARTS)
def test_every_part_runs_through_the_shared_lifecycle(part):
    """``run.py`` opens its folder with ``runs.open_run``; no module of a part stages folders, logs or manifests itself."""
    assert "open_run" in _called(ROOT / part / "run.py")
    own = []
    for name, path in MODULES.items():
        if _layer(name) != part:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = (
                node.func.id
                if isinstance(node.func, ast.Name)
                else node.func.attr
                if isinstance(node.func, ast.Attribute)
                else ""
            )
            if fn == "log_to_file" or (fn == "RunFolder" and any(k.arg == "fingerprint" for k in node.keywords)):
                own.append(f"{name} calls {fn}")
            if fn == "from_config" and name.endswith(".run") and part != "risk":  # owned by engine.engine_for_run
                own.append(
                    f"{name} builds its engine"
                )  # (risk: folktexts' make_benchmark builds the engine its Benchmark keeps)
    assert not own, own


# -- the grammar: every part's `run` offers the shared flags, each with its default in --help ----------------------

#: flag -> the parts whose run has no such idea, with the reason
SHARED_FLAGS = {
    "--model": {},
    "--inference-backend": {},
    "--batch-tokens": {},
    "--device": {},
    "--task": {},
    "--limit": {},
    "--chat": {},
    "--no-chat": {},
    "--seed": {},
    "--results-dir": {},
    "--logger-level": {},
    "--n-bootstrap": {"numeric": "its intervals are clustered by option pair, analytic: nothing is resampled"},
}


def _subparser(*path: str):
    import argparse

    from folkscope.cli.main import build_parser

    parser = build_parser()
    for name in path:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return parser


@pytest.mark.parametrize("part", PARTS)
def test_every_parts_run_offers_the_shared_flags_with_their_defaults(part):
    from folkscope.registry import PARTS as REGISTERED

    command = REGISTERED[part].commands[0]
    parser = _subparser(command, "run")
    formatter = parser._get_formatter()
    wrong = []
    for flag, exempt in SHARED_FLAGS.items():
        actions = [a for a in parser._actions if flag in a.option_strings]
        if part in exempt:
            assert not actions, f"{part} run has {flag} after all: drop the exemption ({exempt[part]})"
            continue
        if not actions:
            wrong.append(f"{part} run has no {flag}")
        elif "default" not in formatter._expand_help(actions[0]).lower():
            wrong.append(f"{part} run --help does not say the default of {flag}")
    assert not wrong, wrong
    _subparser(command, "list")  # every part lists what it can evaluate
