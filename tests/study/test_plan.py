"""Study plans: read from TOML or YAML, every mistake one line naming where it is, cells exactly the grid asked for."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folkscope.cli.main import build_parser, main
from folkscope.study import PlanError, bundled_plans, expand, load_plan
from folkscope.study.cells import check_cells

PARSER = build_parser()

SMALL = """
name = "small"
[[models]]
model = "fake"
inference_backend = "fake"
[[models]]
model = "fake"
label = "second"
inference_backend = "fake"
[risk]
tasks = ["NISTIncome", "NISTEmployment"]
options = { subsampling = 0.1, no_baselines = true }
vary = { numeric_risk_prompting = [false, true], n_bootstrap = [10, 20] }
variants = [{}, { chat = true }]
[numeric]
tasks = ["distributions"]
options = { limit = 4 }
"""


def write(tmp_path, text, name="plan.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cells_are_models_times_tasks_times_vary_times_variants(tmp_path):
    plan = load_plan(write(tmp_path, SMALL))
    cells = expand(plan, tmp_path / "results", PARSER)
    assert plan.n_cells == len(cells) == 2 * 2 * (2 * 2) * 2 + 2 * 1
    assert len({c.id for c in cells}) == len(cells)  # every cell its own name in the ledger
    first = cells[0]
    assert first.argv[:4] == ("risk", "run", "--task", "NISTIncome")
    assert "--no-baselines" in first.argv and "--numeric-risk-prompting" not in first.argv
    chat = next(c for c in cells if c.settings.get("chat") and c.settings["numeric_risk_prompting"])
    assert "--chat" in chat.argv and "--numeric-risk-prompting" in chat.argv
    assert [c.index for c in cells] == list(range(len(cells)))
    check_cells(cells, plan, PARSER)  # the commands' own checks accept every cell


def test_yaml_and_toml_plans_give_the_same_cells(tmp_path):
    pytest.importorskip("yaml")
    yaml_text = """
name: small
models:
  - {model: fake, inference_backend: fake}
  - {model: fake, label: second, inference_backend: fake}
risk:
  tasks: [NISTIncome, NISTEmployment]
  options: {subsampling: 0.1, no_baselines: true}
  vary: {numeric_risk_prompting: [false, true], n_bootstrap: [10, 20]}
  variants: [{}, {chat: true}]
numeric:
  tasks: [distributions]
  options: {limit: 4}
"""
    a = expand(load_plan(write(tmp_path, SMALL)), "r", PARSER)
    b = expand(load_plan(write(tmp_path, yaml_text, "plan.yaml")), "r", PARSER)
    assert [c.argv for c in a] == [c.argv for c in b]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\n', "no models"),
        ('[[models]]\nmodel = "fake"\n[risk]\n', "`name` is missing"),
        ('name = "a b"\n[[models]]\nmodel = "fake"\n[risk]\n', "not a plain folder name"),
        ('name = "x"\n[[models]]\nmodel = "fake"\n', "no part to run"),
        ('name = "x"\nmodel = 1\n[[models]]\nmodel = "fake"\n[risk]\n', "unknown key 'model' in the top level"),
        ('name = "x"\n[[models]]\nmodel = "fake"\n[risk]\ntask = ["A"]\n', "did you mean 'tasks'"),
        ('name = "x"\n[[models]]\nlabel = "y"\n[risk]\n', "has no `model`"),
        ('name = "x"\n[[models]]\nmodel = "fake"\nparts = ["risks"]\n[risk]\n', "`parts` must list some of"),
        ('name = "x"\n[[models]]\nmodel = "f"\n[[models]]\nmodel = "f"\n[risk]\n', "two models are labelled 'f'"),
        ('name = "x"\n[[models]]\nmodel = "fake"\n[risk]\ntasks = "NISTIncome"\n', "non-empty list"),
        ('name = "x"\n[[models]]\nmodel = "fake"\n[risk]\nvary = { chat = true }\n', "vary.chat must be"),
        ('name = "x"\n[[models]]\nmodel = "fake"\n[risk]\noptions = { task = "A" }\n', "list tasks in `tasks`"),
        (
            'name = "x"\n[[models]]\nmodel = "fake"\n[risk]\nvariants = [{}, {}]\n',
            "settings of vary/variants are the same",
        ),
        ('name = "x"\n[[models]\n', "not valid TOML"),
    ],
)
def test_a_malformed_plan_is_one_line_naming_the_file_and_the_fix(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(PlanError, match=message) as info:
        load_plan(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("options = { subsamplin = 0.1 }", "folkscope risk run has no --subsamplin (did you mean 'subsampling'?)"),
        ("options = { no_baselines = 1 }", "no_baselines is a switch; write no_baselines = true or false"),
        ("options = { subsampling = 2.0 }", "cell risk | NISTIncome | fake | defaults: "),
        ("options = { seed = 'x' }", "argument --seed: invalid int value: 'x'"),
    ],
)
def test_a_cell_the_command_would_refuse_is_refused_before_anything_runs(tmp_path, capsys, section, message):
    plan = write(
        tmp_path,
        f'name = "x"\n[[models]]\nmodel = "fake"\ninference_backend = "fake"\n[risk]\ntasks = ["NISTIncome"]\n{section}\n',
    )
    assert main(["study", "run", str(plan), "--results-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "r").exists()  # nothing was written


def test_an_unknown_plan_names_the_bundled_ones(tmp_path):
    with pytest.raises(PlanError, match=r"did you mean 'demo'\?.*bundled plans: "):
        load_plan("dmeo")


#: the bundled plans and their cell counts (the papers' grids: see each plan's comments for where they come from)
BUNDLED_CELLS = {
    "demo": 12,
    "folktexts": 17 * 5 * 2,  # 17 models x 5 ACS tasks x multiple-choice / numeric risk prompting
    "rabbi-resumes": 10 * 4 * 2,  # 10 chat models x 4 jobs x pointwise / pairwise
    "rabbi-essays": 10 * 2 * 2,  # 10 chat models x 2 ICNALE topics x pointwise / pairwise
    "epidemiology": 6 * 7 * 2,  # 6 instruct models x 7 datasets' low-dimensional tasks x QA / likelihood
    "numeric-calibration": 20 * 3,  # 8 base/chat pairs + 4 OpenAI models x 3 datasets
}


@pytest.mark.parametrize("name", sorted(BUNDLED_CELLS))
def test_every_bundled_plan_is_valid_and_has_its_papers_cell_count(name):
    plan = load_plan(name)
    cells = expand(plan, "results", PARSER)
    check_cells(cells, plan, PARSER)
    assert len(cells) == BUNDLED_CELLS[name]


def test_the_bundled_plans_are_exactly_the_pinned_ones():
    assert sorted(bundled_plans()) == sorted(BUNDLED_CELLS)


_keys = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12)
_values = st.one_of(st.booleans(), st.integers(-3, 3), st.text(string.ascii_letters, max_size=5))
_tables = st.dictionaries(
    _keys, st.one_of(_values, st.lists(_values, max_size=3), st.dictionaries(_keys, _values, max_size=2)), max_size=4
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(top=_tables, model=_tables, part=_tables)
def test_any_plan_is_read_or_refused_in_one_line_never_a_traceback(tmp_path, top, model, part):
    """Oracle: a plan either loads and expands into cells whose every flag the command knows, or is one PlanError."""
    import tomllib  # noqa: F401 - the writer below only needs the reader's grammar

    raw = {"name": "p", **top, "models": [{"model": "fake", **model}], "risk": part}
    path = tmp_path / "plan.yaml"
    yaml = pytest.importorskip("yaml")
    path.write_text(yaml.safe_dump(raw))
    try:
        plan = load_plan(path)
        cells = expand(plan, "r", PARSER)
    except PlanError as exc:
        assert "\n" not in str(exc)
        return
    for cell in cells:
        assert cell.argv[:2] == ("risk", "run") and cell.argv[-2:] == ("--results-dir", "r")
