"""One grammar for four parts: ``folkscope <part> run|list``, the same flag names for the same ideas, ``data list``.

The architecture test checks that every part's ``run`` offers the shared
flags with their defaults in ``--help``; this checks that each shared
spelling reaches the part's config as its own spelling does.
"""

from __future__ import annotations

import pytest

from folkscope.cli.main import build_parser, main


def _args(*argv: str):
    return build_parser().parse_args(list(argv))


def test_risk_run_is_folkscope_run():
    def flat(ns):
        return {k: v for k, v in vars(ns).items() if k not in ("command", "risk_command", "func")}

    argv = ["--task", "NISTIncome", "--limit", "0.1", "--chat", "--seed", "3"]
    assert flat(_args("risk", "run", *argv)) == flat(_args("run", *argv))


@pytest.mark.parametrize(
    ("argv", "own"),
    [
        (["risk", "run", "--limit", "50"], ["risk", "run", "--subsampling", "50"]),
        (["risk", "run", "--chat"], ["risk", "run", "--use-chat-template"]),
        (["numeric", "run", "--task", "wordproblems"], ["numeric", "run", "--dataset", "wordproblems"]),
        (["allocation", "run", "--limit", "3"], ["allocation", "run", "--rounds", "3"]),
        (["epidemiology", "run", "--task", "anes-vote"], ["epidemiology", "run", "--tasks", "anes-vote"]),
        (["epidemiology", "run", "--n-bootstrap", "50"], ["epidemiology", "run", "--n-resamples", "50"]),
    ],
)
def test_the_shared_spelling_means_what_the_parts_own_does(argv, own):
    shared, mine = vars(_args(*argv)), vars(_args(*own))
    assert shared == mine


def test_chat_is_on_or_off_in_every_part():
    assert _args("risk", "run", "--no-chat").use_chat_template is False
    assert _args("risk", "run", "--chat").use_chat_template is True
    assert _args("allocation", "run", "--no-chat").chat is False
    assert _args("epidemiology", "run", "--chat").chat is True


def test_epidemiology_limit_keeps_the_first_tasks_of_the_selection():
    from folkscope.epidemiology import EpidemiologyConfig

    everything = EpidemiologyConfig().selected()
    assert [t.name for t in EpidemiologyConfig(limit=2).selected()] == [t.name for t in everything[:2]]
    named = EpidemiologyConfig(tasks=(everything[2].name, everything[0].name), limit=1).selected()
    assert [t.name for t in named] == [everything[2].name]  # in the order asked
    with pytest.raises(Exception, match="limit must be an integer >= 1"):
        EpidemiologyConfig(limit=0)


def test_every_part_lists_what_it_can_evaluate(capsys):
    from folkscope.allocation import TASKS
    from folkscope.numeric.templates import DATASETS
    from folkscope.tasks import list_tasks

    assert main(["numeric", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(DATASETS) and "165,000 problems by default" in lines[0]
    assert main(["allocation", "list"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == list(TASKS)
    assert main(["risk", "list"]) == 0
    risk = capsys.readouterr().out
    assert main(["tasks"]) == 0 and capsys.readouterr().out == risk
    assert all(name in risk for name in list_tasks())
    assert main(["epidemiology", "list"]) == 0 and "anes" in capsys.readouterr().out


def test_data_list_names_every_dataset_of_every_part_and_where_it_comes_from(capsys):
    from folkscope.data.bundled import BUNDLED
    from folkscope.data.public_datasets import PUBLIC_DATASETS
    from folkscope.data.surveys import DATASETS
    from folkscope.data.user_data import USER_DATASETS

    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    shipped, downloaded, yours = (
        out.split("shipped with folkscope")[1].split("downloaded on first use")[0],
        out.split("downloaded on first use")[1].split("read from your copy")[0],
        out.split("read from your copy")[1],
    )
    assert all(f"  {name} " in shipped for name in [*BUNDLED, *DATASETS, "resumes"])
    assert all(f"  {name} " in downloaded for name in PUBLIC_DATASETS)
    assert all(f"  {name} " in yours for name in [*USER_DATASETS, "rabbi-resumes", "essays"])


@pytest.mark.parametrize("part", ["risk", "numeric", "allocation", "epidemiology"])
def test_a_part_without_a_subcommand_shows_its_help(part, capsys):
    assert main([part]) == 2
    assert "run" in capsys.readouterr().out


def test_flags_before_the_subcommand_get_one_line_saying_where_run_goes(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["numeric", "--model", "fk", "--limit", "2"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert "invalid choice: 'fk' (the subcommand comes first: folkscope numeric run ...)" in err
