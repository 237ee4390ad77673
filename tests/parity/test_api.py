"""folktexts' public names exist in folkscope with folktexts' meaning, or are left out for a stated reason (issue 29).

The names come from folktexts 0.7.1 itself (oracle op ``public_names``):
every class and function defined in an importable ``folktexts.*`` module
whose path has no ``_`` part, counted once per name, plus the package's
other top-level names (``PROMPT_DEFAULT``): 70 names, the issue's count. The
three htcondor launcher modules need ``classad`` and do not import; their
names are not counted. A name is *found* when the same name imports from
the folkscope module listed in :data:`FOUND`. Members (methods, properties,
dataclass fields, class constants folktexts defines) of the classes found
are checked on folkscope objects; a member that exists with another meaning
counts as missing.

On main before issue 29 (e5c2f1a) 14 of the 70 names were found and
``import folkscope`` exported none of the 15 top-level ones.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

#: folktexts name -> "module:attribute" in folkscope
FOUND = {
    "PROMPT_DEFAULT": "folkscope:PROMPT_DEFAULT",
    "ACSDataset": "folkscope:ACSDataset",
    "ACSTaskMetadata": "folkscope:ACSTaskMetadata",
    "TaskMetadata": "folkscope:TaskMetadata",
    "Benchmark": "folkscope:Benchmark",
    "BenchmarkConfig": "folkscope:BenchmarkConfig",
    "LLMClassifier": "folkscope:LLMClassifier",
    "TransformersLLMClassifier": "folkscope:TransformersLLMClassifier",
    "VLLMClassifier": "folkscope:VLLMClassifier",
    "WebAPILLMClassifier": "folkscope:WebAPILLMClassifier",
    "FewShotConfig": "folkscope:FewShotConfig",
    "PromptConfig": "folkscope:PromptConfig",
    "QAInterface": "folkscope.risk:QAInterface",
    "MultipleChoiceQA": "folkscope:MultipleChoiceQA",
    "DirectNumericQA": "folkscope:DirectNumericQA",
    "ChainOfThoughtQA": "folkscope:ChainOfThoughtQA",
    "Choice": "folkscope.risk:Choice",
    "Threshold": "folkscope.risk:Threshold",
    "ColumnToText": "folkscope.tasks:ColumnToText",
    "Dataset": "folkscope.data:Dataset",
    "evaluate_predictions": "folkscope.metrics:evaluate_predictions",
    "evaluate_binary_predictions": "folkscope.metrics:evaluate_binary_predictions",
    "evaluate_binary_predictions_fairness": "folkscope.metrics:evaluate_binary_predictions_fairness",
    "compute_best_threshold": "folkscope.metrics:compute_best_threshold",
    "bootstrap_estimate": "folkscope.metrics:bootstrap_estimate",
    "evaluate_predictions_bootstrap": "folkscope.metrics:evaluate_predictions_bootstrap",
    "encode_row_prompt": "folkscope.risk:encode_row_prompt",
    "encode_row_prompt_few_shot": "folkscope.risk:encode_row_prompt_few_shot",
    "encode_row_prompt_chat": "folkscope.risk:encode_row_prompt_chat",
    "load_model_tokenizer": "folkscope.engine:load_model_tokenizer",
    "main": "folkscope.cli.main:main",
}

_BINS = "coarser bins (--variation granularity=low) are data in folkscope/tasks/resources, applied by the prompt layer"
_ENGINE = "model calls, batching, caching and reading answers belong to the engine (folkscope.engine.Engine, folkscope.readout)"
_VARY = (
    "folkscope's PromptConfig is flat: folktexts' Vary* pieces are its fields (format, connector, granularity, order, "
    "custom_prompt_prefix/suffix, show_question, system_prompt) and PromptRenderer / render_prompts renders them"
)
#: folktexts name -> why folkscope has no object of that name
OMITTED = {
    "describe_income_to_poverty_ratio_pct": "column texts are data (tasks/resources); POVPIP is rendered by its ColumnToText",
    **{
        f"transform_{c}": _BINS
        for c in ("age", "cow", "schooling", "occp", "pobp", "pobp_unsd", "relp", "wkhp", "rac1p_binary", "rac1p")
    },
    "setup_arg_parser": "the command-line parsers are generated from BenchmarkConfig's field declarations (folkscope.cli)",
    "is_bf16_compatible": "the engine picks the dtype (EngineConfig(dtype='auto'))",
    "parse_feature_importance": "feature importance is `folkscope run --feature-importance` / folkscope.risk.importance",
    "compute_feature_importance": "feature importance is folkscope.risk.importance.permutation_importance",
    **{
        name: _ENGINE
        for name in (
            "query_model_batch",
            "query_model_batch_multiple_passes",
            "decode_topk_logprobs_to_risk_estimate",
            "generate_text_batch",
            "add_pad_token",
            "load_vllm_model",
            "get_model_folder_path",
            "get_model_size_B",
        )
    },
    **{
        name: "Benchmark.plot_results and folkscope.risk.plots.make_all_plots draw these plots"
        for name in ("save_fig", "render_evaluation_plots", "render_fairness_plots")
    },
    **{
        name: _VARY
        for name in (
            "FeatureItem",
            "PromptBuilder",
            "VaryPrefix",
            "VarySuffix",
            "VaryValueMap",
            "VaryOrder",
            "VaryFeatureOrder",
            "VaryConnector",
            "VaryFormat",
            "VarySystemPrompt",
        )
    },
    "tokenizer_supports_system_prompt": "the prompt layer's folkscope.prompting.chat.supports_system_role",
    "resolve_chat_defaults": "PromptConfig.chat_system_prompt and .chat_prefill resolve folktexts' defaults",
    "apply_chat_template": "folkscope.prompting.render_chat renders a prompt through the tokenizer's template",
}


def resolve(path: str):
    module, attribute = path.split(":")
    return getattr(importlib.import_module(module), attribute)


@pytest.fixture(scope="module")
def names(folktexts) -> dict:
    return folktexts("public_names")


def test_every_folktexts_public_name_is_in_folkscope_or_left_out_for_a_reason(names):
    counted = {n for module in names["defined"].values() for n in module} | set(names["top_level"])
    assert len(counted) == 70, len(counted)
    assert not FOUND.keys() & OMITTED.keys()
    assert counted == FOUND.keys() | OMITTED.keys(), (
        f"unlisted: {sorted(counted - FOUND.keys() - OMITTED.keys())}; stale: {sorted(FOUND.keys() | OMITTED.keys() - counted)}"
    )
    missing = []
    for name, path in FOUND.items():
        try:
            resolve(path)
        except (ImportError, AttributeError) as exc:
            missing.append(f"{name} ({path}: {exc})")
    assert not missing, f"{len(FOUND) - len(missing)} of {len(counted)} folktexts names found; missing: {missing}"
    assert len(FOUND) == 31  # of 70 (14 before issue 29); the other 39 are OMITTED with their reason


def test_folktexts_top_level_names_import_from_folkscope_and_import_stays_light(names):
    exec("from folkscope import " + ", ".join(names["top_level"]), {})  # noqa: S102 - the names are folktexts' own
    code = "import sys, folkscope; print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas', 'torch', 'sklearn', 'folkscope') and m != 'folkscope')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "", f"import folkscope loaded {loaded}"


_QA = "build it with MultipleChoiceQA / DirectNumericQA / ChainOfThoughtQA.from_task(task)"
#: per folktexts class, members folkscope has under the same name with another meaning (counted as missing) -> what it is here
DIFFERENT = {
    "TaskMetadata": {
        "question": "the question's text (a str); folktexts' QA object: " + _QA,
        "target": "a Target (column, op, value); folktexts' target column is task.target.column",
    },
    "PromptConfig": {"from_dict": "reads a saved folkscope config, not folktexts' (pv, task, question)"},
    **{
        cls: {"encode_row": "always None, kept for get_params: a Python row encoder is refused (prompts are data)"}
        for cls in ("TransformersLLMClassifier", "VLLMClassifier", "WebAPILLMClassifier")
    },
}
DIFFERENT["ACSTaskMetadata"] = DIFFERENT["TaskMetadata"]
#: per folktexts class, members folkscope does not have -> where the fact lives instead
MISSING = {
    "TaskMetadata": {
        "cols_to_text": "task.column_texts",
        "get_target": "task.target_name",
        "target_threshold": "task.target.op / .value",
        "sensitive_attribute": "task.sensitive_attributes (a tuple; folktexts' is the first)",
        "sensitive_attribute_value_map": "task.column_texts[column].values",
        "multiple_choice_qa": _QA,
        "direct_numeric_qa": _QA,
        "cot_qa": _QA,
        "set_question": "tasks are immutable: qa.apply_to(task)",
        "use_cot_qa": "PromptConfig(cot_prompting=True)",
        "check_task_columns_are_available": "Dataset checks the columns it needs",
        "get_row_description": "render_prompts renders rows (folkscope.prompting)",
    },
    "LLMClassifier": {"encode_row": "prompts are data: a Python row encoder is refused"},
    "WebAPILLMClassifier": {
        "check_webAPI_deps": "a missing litellm is a MissingDependencyError when the backend is built",
        "track_cost_callback": "the engine accounts tokens and cost (folkscope.engine.usage)",
    },
    "ColumnToText": {
        "get_text": "render(value)",
        "question": "questions are the task's",
        "short_description": "description",
        "value_map": "values",
    },
    "FewShotConfig": {"compose": "composition", "show_question_in_examples": "hide_question (negated)"},
    "PromptConfig": {
        "default": "PromptConfig() is the default",
        "prefix": "custom_prompt_prefix",
        "suffix": "custom_prompt_suffix",
        "value_map": "granularity",
    },
}
MISSING["ACSTaskMetadata"] = {
    **MISSING["TaskMetadata"],
    "folktables_obj": "tasks are declared as data (tasks.json), not built from folktables objects",
    "make_folktables_task": "tasks are declared as data (tasks.json); TaskMetadata.make_task builds one",
}


@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> dict:
    """folkscope objects to look members up on: instances where attributes are set in __init__, else the class."""
    import os

    from folkscope import ACSDataset, Benchmark, BenchmarkConfig, FewShotConfig, PromptConfig, TaskMetadata
    from folkscope.engine import Engine
    from folkscope.risk import (
        ChainOfThoughtQA,
        Choice,
        DirectNumericQA,
        LLMClassifier,
        MultipleChoiceQA,
        QAInterface,
        Threshold,
        VLLMClassifier,
        WebAPILLMClassifier,
    )

    task = TaskMetadata.get_task("ACSIncome")
    engine = Engine.from_model("seeded", backend="fake", use_cache=False)
    dataset = ACSDataset.make_from_task("NISTIncome", subsampling=0.05)
    os.environ.setdefault("OPENAI_API_KEY", "sk-not-used")  # the web classifier is built, never called
    classifier = LLMClassifier(engine, task)
    # a vLLM engine cannot be built here: its classifier shares the base's attributes and stores its arguments (get_params)
    vllm = {*dir(VLLMClassifier), *vars(classifier), *inspect.signature(VLLMClassifier).parameters}
    return {
        "Benchmark": Benchmark.make_benchmark(
            "NISTIncome", model=engine, subsampling=0.05, baselines=False, n_bootstrap=0
        ),
        "BenchmarkConfig": BenchmarkConfig(),
        "Dataset": dataset,
        "ACSDataset": dataset,
        "TaskMetadata": task,
        "ACSTaskMetadata": task,
        "LLMClassifier": classifier,
        "TransformersLLMClassifier": _transformers_classifier(task),
        "VLLMClassifier": vllm,
        "WebAPILLMClassifier": WebAPILLMClassifier("openai/gpt-4o-mini", task, use_cache=False),
        "QAInterface": QAInterface("PINCP", "text"),
        "MultipleChoiceQA": MultipleChoiceQA.from_task(task),
        "DirectNumericQA": DirectNumericQA.from_task(task),
        "ChainOfThoughtQA": ChainOfThoughtQA.from_task(task),
        "Choice": Choice("Above $50,000", 1),
        "Threshold": Threshold(50000, ">"),
        "ColumnToText": task.column_texts["AGEP"],
        "FewShotConfig": FewShotConfig(n_shots=2),
        "PromptConfig": PromptConfig(),
    }


def _transformers_classifier(task):
    """A TransformersLLMClassifier over a random one-layer Llama (the default model's tokenizer; nothing is scored)."""
    pytest.importorskip("transformers")
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from folkscope.engine import ensure_default_model
    from folkscope.risk import TransformersLLMClassifier

    tokenizer = AutoTokenizer.from_pretrained(ensure_default_model())
    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
        )
    )
    return TransformersLLMClassifier(model, tokenizer, task, use_cache=False)


def test_members_of_folktexts_classes_exist_with_its_meaning(names, probes):
    total = found = 0
    problems = []
    for cls, members in sorted(names["members"].items()):
        if cls not in FOUND:
            continue
        probe = probes[cls]
        for member in members:
            total += 1
            present = member in probe if isinstance(probe, set) else hasattr(probe, member)
            if member in DIFFERENT.get(cls, {}):
                if not present:
                    problems.append(f"{cls}.{member} is gone: move it to MISSING")
            elif member in MISSING.get(cls, {}):
                if present:
                    problems.append(f"{cls}.{member} exists now: take it off MISSING")
            elif present:
                found += 1
            else:
                problems.append(f"{cls}.{member} is missing")
    assert not problems, f"{found} of {total} members found; {problems}"
    assert (found, total) == (227, 274)


ACS_TASKS = ("ACSIncome", "ACSPublicCoverage", "ACSMobility", "ACSEmployment", "ACSTravelTime")


@pytest.mark.parametrize("task", ACS_TASKS)
def test_question_objects_are_folktexts(folktexts, task):
    """MultipleChoiceQA / DirectNumericQA / ChainOfThoughtQA of a task: folktexts' column, text, options and question block."""
    from folkscope.risk import ChainOfThoughtQA, DirectNumericQA, MultipleChoiceQA
    from folkscope.tasks import get_task

    theirs = folktexts("qa_interfaces", task=task)
    for kind, cls in (
        ("multiple_choice", MultipleChoiceQA),
        ("direct_numeric", DirectNumericQA),
        ("cot", ChainOfThoughtQA),
    ):
        qa = cls.from_task(get_task(task))
        ours = {
            "column": qa.column,
            "text": qa.text,
            "prompt": qa.get_question_prompt(),
            "prompt_without_prefill": qa.get_question_prompt(with_answer_prefill=False),
            "choices": [c.text for c in getattr(qa, "choices", ())],
            "answer_keys": list(getattr(qa, "answer_keys", ())),
            "default_system_prompt": qa.default_system_prompt,
            "default_chat_prompt": qa.default_chat_prompt,
        }
        assert ours == theirs[kind], kind


@pytest.mark.parametrize("task", ACS_TASKS)
def test_encode_row_prompt_with_each_question_is_folktexts(folktexts, task):
    """encode_row_prompt(row, task, question=q) for every answer order, the numeric and the chain-of-thought question."""
    import pandas as pd
    from tests.parity.rows import draw_rows

    from folkscope.risk import ChainOfThoughtQA, DirectNumericQA, MultipleChoiceQA, encode_row_prompt
    from folkscope.tasks import get_task

    rows = draw_rows(folktexts("column_values", task=task), 4, seed=7)
    frame = pd.DataFrame(rows)
    t = get_task(task)
    mc = MultipleChoiceQA.from_task(t)
    for kind, questions in (
        ("multiple_choice", list(MultipleChoiceQA.create_answer_keys_permutations(mc))),
        ("direct_numeric", [DirectNumericQA.from_task(t)]),
        ("cot", [ChainOfThoughtQA.from_task(t)]),
    ):
        theirs = folktexts("question_prompts", task=task, rows=rows, question=kind)
        ours = [[encode_row_prompt(row, t, question=q) for q in questions] for _, row in frame.iterrows()]
        assert ours == theirs, kind


def test_dataset_methods_have_folktexts_meaning():
    from folkscope import ACSDataset
    from folkscope.errors import EmptyPopulationError

    ds = ACSDataset.make_from_task("NISTIncome", subsampling=0.1)
    assert ds.get_target_data().isin([0, 1]).all() and list(ds.get_features_data().columns) == list(ds.task.features)
    assert (
        ds.get_sensitive_attribute_data().name == "RAC1P"
        and ds.train_size == pytest.approx(0.9)
        and ds.subsampling == 0.1
    )
    X, y = ds.get_data_split("test")
    assert X.equals(ds.get_test()[0])
    first, _ = ds.sample_n_train_examples(5, reuse_examples=True)
    again, _ = ds.sample_n_train_examples(5, reuse_examples=True)
    assert first.index.equals(again.index)  # reused: the same rows every time
    draws = [set(ds.sample_n_train_examples(5)[0].index) for _ in range(3)]
    assert len({frozenset(d) for d in draws}) > 1  # not reused: new rows each call
    _, y_bal = ds.sample_n_train_examples(6, composition="balanced")
    assert sorted(y_bal.value_counts().tolist()) == [3, 3]
    _, y_comp = ds.sample_n_train_examples(3, composition=[1, 2])
    assert y_comp.value_counts().to_dict() == {1: 2, 0: 1}
    n_train = len(ds.get_train()[0])
    assert ds.filter({"SEX": 2}) is ds and (ds.data["SEX"] == 2).all() and len(ds.get_train()[0]) < n_train  # in place
    with pytest.raises(EmptyPopulationError, match="no row"):
        ds.filter({"SEX": 7})
    row_x, row_y = next(iter(ds))
    assert list(row_x.index) == list(ds.task.features) and row_y in (0, 1)


def test_task_feature_subset_and_threshold_are_folktexts():
    from folkscope import TaskMetadata
    from folkscope.errors import ConfigError
    from folkscope.risk import Threshold

    task = TaskMetadata.get_task("ACSIncome")
    sub = task.create_task_with_feature_subset(["SCHL", "AGEP"])
    assert sub.name == "ACSIncome_AGEP_SCHL" and sub.features == ("SCHL", "AGEP")
    with pytest.raises(ConfigError, match="not among them: PUMA"):
        task.create_task_with_feature_subset(["AGEP", "PUMA"])
    t = Threshold(50000, ">")
    assert str(t) == ">50000" and t.apply_to_column_name("PINCP") == "PINCP>50000"
    assert t.apply_to_column_data(50000) == 0 and t.apply_to_column_data(50001) == 1
    with pytest.raises(ConfigError, match="comparison must be one of"):
        Threshold(1, "=>")


def test_benchmark_config_saves_loads_updates_and_reads_folktexts_files(tmp_path):
    import json

    from folkscope import BenchmarkConfig
    from folkscope.errors import ConfigError

    config = BenchmarkConfig.default_config(
        numeric_risk_prompting=True, prompt_variation={"format": "bullet"}, population_filter={"SEX": 2}
    )
    assert config.variation == ("format=bullet",) and config.prompt_variation == {"format": "bullet"}
    assert config.population_filter == ("SEX=2",)
    config.save_to_disk(tmp_path / "config.json")
    assert BenchmarkConfig.load_from_disk(tmp_path / "config.json") == config
    assert config.update(seed=7).seed == 7 and config.seed == 42
    with pytest.raises(ConfigError, match="temprature"):
        config.update(temprature=1.0)
    # a folktexts config file (its save_to_disk, with the results' model and task keys) loads
    folktexts_file = {
        "numeric_risk_prompting": False,
        "cot_prompting": False,
        "enable_thinking": False,
        "few_shot_config": {
            "n_shots": 2,
            "example_order": None,
            "compose": "balanced",
            "reuse_examples": True,
            "show_question_in_examples": True,
        },
        "use_chat_template": False,
        "chat_prompt": "default",
        "system_prompt": "default",
        "batch_size": None,
        "context_size": 600,
        "correct_order_bias": True,
        "feature_subset": None,
        "population_filter": None,
        "seed": 42,
        "temperature": None,
        "prompt_variation": {"connector": "="},
        "model_name": "gemma-2b",
        "task_name": "ACSIncome",
        "task_hash": 1,
    }
    (tmp_path / "folktexts.json").write_text(json.dumps(folktexts_file))
    loaded = BenchmarkConfig.load_from_disk(tmp_path / "folktexts.json")
    assert loaded.few_shot == 2 and loaded.compose_few_shot_examples == "balanced" and loaded.reuse_few_shot_examples
    assert loaded.variation == ("connector==",) and loaded.few_shot_config.n_shots == 2
