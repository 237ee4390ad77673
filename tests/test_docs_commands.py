"""Every command and Python example in README.md and docs/*.md works as written (issue 32).

How the pages write examples (docs/README.md's convention, checked here):

- Shell examples are ```console blocks. A line starting with ``$ `` is a
  command (a trailing `` \\`` continues it on the next line); the lines after
  it, up to the next ``$ ``, are what it prints: real output, trimmed with
  ``...``, never compared word for word. Only a ``report:`` or ``answer:`` line
  of the sample must have its counterpart in what the command really prints.
- A command runs for real unless its trailing comment starts with a tag:

  ``# long: about 40 min on the default model``
      too slow for the suite;
  ``# needs internet: ...``, ``# needs a GPU: ...``, ``# needs OPENAI_API_KEY: ...``,
  ``# needs your data: ...`` (any ``# needs <what>:``)
      cannot run offline on a CPU without the reader's own files.

  Those are parsed by folkscope's own parser and, where the command builds a
  config (``config_from_args``), the config is built: every check that runs
  before data or a model loads (not for ``# needs your <files>:``, whose files
  the config would look for). Programs other than folkscope's are checked
  for existence (the script, the module, the pip extras they name).
  ``# setup: ...`` marks a command that installs or tests the project
  (``scripts/quickstart.sh``, ``scripts/test.sh``, ``pip install``): the
  scripts and extras it names must exist; it is not run from here.
- ```python blocks of one page run in order, as one script, in a fresh Python
  process; a block whose first line is ``# long: ...`` or ``# needs ...: ...``
  is only compiled.
- ```bash, ```sh and ```shell blocks are refused, so every shell example says
  which lines are commands.

The commands run in one temporary working folder, README first, then docs/ in
name order, as a reader would run them: a later example may read the run
folders an earlier one wrote. They run offline, with ``FOLKSCOPE_HOME`` a fresh
folder whose ``models`` is the suite's converted default model
(:func:`folkscope.paths.models_home`, converted once per machine as in
``tests/engine/test_default_model.py``), so every answer is computed, not read
from an earlier cache. Every relative link and every repository path in
backticks must name a file that exists.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: a command's trailing tag: long, needs <what>, setup
TAG = re.compile(r"\s#\s*(long|needs [^:#]+|setup)\s*:")
#: sample-output lines whose label the real output must also have
KEY_LABELS = ("report", "answer")
#: seconds one documented command may take before the test says to mark it long
COMMAND_TIMEOUT = 420
FOLKSCOPE_PROGRAMS = {"folkscope": [], "run_acs_benchmark": ["run"], "download_models": ["download-models"]}
SHELL_BUILTINS = {"export", "cd", "unset", "source", "."}


@dataclasses.dataclass(frozen=True)
class Command:
    page: str
    line: int
    text: str  # the command with its continuations joined, tag comment included
    tag: str | None  # None (run it), 'long', 'needs ...', 'setup'
    sample: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


@dataclasses.dataclass(frozen=True)
class PythonBlock:
    page: str
    line: int
    code: str

    @property
    def tag(self) -> str | None:
        first = self.code.lstrip().splitlines()[0] if self.code.strip() else ""
        m = re.match(r"#\s*(long|needs [^:#]+)\s*:", first)
        return m.group(1) if m else None


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _blocks(path: Path) -> list[tuple[str, int, list[str]]]:
    """Fenced blocks of a page: (language, line of the first body line, body lines)."""
    out: list[tuple[str, int, list[str]]] = []
    lang: str | None = None
    body: list[str] = []
    start = 0
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^\s*```(\S*)", line)
        if fence and lang is None:
            lang, body, start = fence.group(1).lower(), [], i + 1
        elif fence and line.strip() == "```":
            out.append((lang or "", start, body))
            lang = None
        elif lang is not None:
            body.append(line)
    return out


def _commands(path: Path) -> list[Command]:
    out: list[Command] = []
    for lang, start, body in _blocks(path):
        if lang != "console":
            continue
        i = 0
        while i < len(body):
            line = body[i]
            if not line.startswith("$ "):
                i += 1
                continue
            first = start + i
            text = line[2:]
            while text.rstrip().endswith("\\") and i + 1 < len(body):
                i += 1
                text = text.rstrip()[:-1] + " " + body[i].strip()
            i += 1
            sample = []
            while i < len(body) and not body[i].startswith("$ "):
                sample.append(body[i])
                i += 1
            tag = TAG.search(text)
            out.append(Command(_rel(path), first, text.strip(), tag.group(1) if tag else None, tuple(sample)))
    return out


def _python_blocks(path: Path) -> list[PythonBlock]:
    return [PythonBlock(_rel(path), start, "\n".join(body)) for lang, start, body in _blocks(path) if lang == "python"]


COMMANDS = [c for page in PAGES for c in _commands(page)]
PYTHON_PAGES = [page for page in PAGES if _python_blocks(page)]


# ----------------------------------------------------------------------------- the pages' shape


def test_pages_hold_commands_of_every_kind():
    assert (ROOT / "docs").is_dir(), "docs/ is missing"
    assert any(c.tag is None for c in COMMANDS), "no command runs for real"
    assert any(c.tag == "long" for c in COMMANDS), "no long command is checked"
    assert any(c.page == "README.md" and c.tag == "setup" for c in COMMANDS), "README lost its two first commands"


def test_readme_commands_1_and_2_are_the_scripts_ci_runs():
    # .ci/run says CI runs "README command 2"; scripts/quickstart.sh says it is README command 1
    setup = [c.text.split("#")[0].strip() for c in COMMANDS if c.page == "README.md" and c.tag == "setup"]
    assert setup[:2] == ["bash scripts/quickstart.sh", "bash scripts/test.sh"], setup
    assert "README command 2" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "README command 1" in (ROOT / "scripts" / "quickstart.sh").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_shell_examples_are_console_blocks(page):
    wrong = [(line, lang) for lang, line, _ in _blocks(page) if lang in {"bash", "sh", "shell", "zsh"}]
    assert not wrong, (
        f"{_rel(page)}: write shell examples as ```console blocks with '$ ' commands (line, fence): {wrong}"
    )


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_relative_links_name_files_that_exist(page):
    text = page.read_text(encoding="utf-8")
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^(https?:|mailto:|#)", target):
            continue
        file = (page.parent / target.split("#")[0]).resolve()
        if not file.exists():
            missing.append(target)
    assert not missing, f"{_rel(page)} links to files that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_repository_paths_in_backticks_exist(page):
    text = page.read_text(encoding="utf-8")
    paths = re.findall(r"`((?:src|tests|scripts|benchmarks|docs|\.ci)/[^`\s]*)`", text)
    missing = sorted({p for p in paths if not re.search(r"[*<>{}]", p) and not (ROOT / p).exists()})
    assert not missing, f"{_rel(page)} names repository paths that do not exist: {missing}"


# ----------------------------------------------------------------------------- commands


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """One working folder and offline environment for every documented command, as a reader's shell."""
    from folkscope.paths import models_home

    base = tmp_path_factory.mktemp("docs")
    home = base / "folkscope-home"
    home.mkdir()
    models = models_home()
    models.mkdir(parents=True, exist_ok=True)
    (home / "models").symlink_to(models, target_is_directory=True)
    work = base / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PYTEST_"))}
    env.update(
        FOLKSCOPE_HOME=str(home),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return work, env


def _argv(text: str) -> list[list[str]]:
    """The programs a command line calls, each as its argument list (env assignments and `&` dropped)."""
    words = shlex.split(text, comments=True)
    calls: list[list[str]] = [[]]
    for word in words:
        if word in {"&&", ";", "||", "|"}:
            calls.append([])
        elif word != "&":
            calls[-1].append(word)
    out = []
    for call in calls:
        while call and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", call[0]):
            call = call[1:]
        if call:
            out.append(call)
    return out


def _pyproject_extras() -> set[str]:
    # tomllib is 3.11+; the section's keys are all this needs
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([A-Za-z0-9_-]+)\s*=", section, flags=re.M))


def _check_statically(argv: list[str], tag: str) -> None:
    """What can be checked of a command without running it: folkscope's parser and config, or that its files exist."""
    program = Path(argv[0]).name
    if program in FOLKSCOPE_PROGRAMS:
        # `# needs your ...:` names files the reader brings, which the config would check for
        _parse_folkscope([*FOLKSCOPE_PROGRAMS[program], *argv[1:]], build_config=not tag.startswith("needs your"))
    elif program in {"bash", "sh"}:
        assert (ROOT / argv[1]).is_file(), f"no script {argv[1]}"
    elif re.match(r"^python(3(\.\d+)?)?$", program):
        if argv[1] == "-m" and argv[2] == "pip":
            _check_pip(argv[3:])
        elif argv[1] == "-m":
            assert importlib.util.find_spec(argv[2]) is not None, f"no module {argv[2]}"
        else:
            assert (ROOT / argv[1]).is_file(), f"no file {argv[1]}"
    elif program == "pip":
        _check_pip(argv[1:])
    elif program not in SHELL_BUILTINS:
        assert shutil.which(program) or (ROOT / argv[0]).exists(), f"no program {argv[0]}"


def _check_pip(args: list[str]) -> None:
    for arg in args:
        m = re.match(r"^(?:\.|folkscope)\[([^\]]+)\]$", arg)
        if m:
            unknown = set(m.group(1).split(",")) - _pyproject_extras()
            assert not unknown, f"pip extras {sorted(unknown)} are not in pyproject.toml"


def _parse_folkscope(argv: list[str], *, build_config: bool = True) -> None:
    """Parse with folkscope's own parser and build the command's config, as its run does before loading anything."""
    import contextlib
    import io

    from folkscope.cli.main import build_parser

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:
            raise AssertionError(f"folkscope {' '.join(argv)}: exit {exc.code}: {err.getvalue().strip()}") from None
    if not build_config:
        return
    module = sys.modules[args.func.__module__]
    # the command builds a config only where its function does (`allocation run`, not `allocation responses`)
    if hasattr(module, "config_from_args") and "config_from_args" in args.func.__code__.co_names:
        module.config_from_args(args)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.id)
def test_documented_command(command, workdir):
    if command.tag is not None:
        for argv in _argv(command.text):
            _check_statically(argv, command.tag)
        return
    work, env = workdir
    started = time.monotonic()
    try:
        done = subprocess.run(
            ["bash", "-c", command.text],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command.id}: `{command.text}` ran over {COMMAND_TIMEOUT} s; mark it '# long: ...'")
    took = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == 0, (
        f"{command.id}: `{command.text}` exited {done.returncode} after {took:.0f} s:\n{output[-3000:]}"
    )
    assert "Traceback (most recent call last)" not in output, f"{command.id}: a traceback:\n{output[-3000:]}"
    printed = {line.split(":", 1)[0].strip() for line in output.splitlines() if ":" in line}
    for label in KEY_LABELS:
        if any(line.startswith(f"{label}:") for line in command.sample):
            assert label in printed, f"{command.id}: the sample shows a '{label}:' line; the command printed none"


# ----------------------------------------------------------------------------- Python examples


@pytest.mark.slow
@pytest.mark.parametrize("page", PYTHON_PAGES, ids=_rel)
def test_python_examples(page, workdir):
    blocks = _python_blocks(page)
    script = []
    for block in blocks:
        compile(block.code, f"{block.page}:{block.line}", "exec")
        if block.tag is None:
            script.append(f"# --- {block.page}:{block.line}\n{block.code}\n")
    if not script:
        return
    work, env = workdir
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{_rel(page)}'s Python examples failed:\n{done.stderr[-3000:]}"
