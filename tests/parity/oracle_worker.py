"""folktexts 0.7.1 answering questions for the parity tests, in a process of its own.

Run by :mod:`tests.parity.conftest` as ``python oracle_worker.py`` with the
folktexts install (``.oracle``, see ``tests/parity/oracle.txt``) on
``PYTHONPATH``. It reads one JSON request per line on stdin,
``{"op": name, "args": {...}}``, and writes one JSON line back,
``{"ok": result}`` or ``{"error": "Type: message"}``.

Why a process of its own: folktexts must never be imported into the test
process (its module-level logging and warnings would run under folkscope's
warnings-as-errors, and an accidental import of it from folkscope code would
go unnoticed). The worker shares the test venv's torch and transformers, so
scores computed on both sides run the same kernels.

Each op is a small adapter that calls folktexts' own public functions; the
adapters only translate JSON to folktexts' arguments and back, so what the
tests compare against is folktexts' behaviour, not a re-statement of it.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
import warnings
from collections.abc import Callable
from typing import Any

warnings.simplefilter("ignore")  # folktexts' own deprecation noise is not what is tested
logging.disable(logging.WARNING)  # folktexts logs every unknown code it renders as N/A

OPS: dict[str, Callable[..., Any]] = {}


def op(fn: Callable[..., Any]) -> Callable[..., Any]:
    OPS[fn.__name__] = fn
    return fn


def _task(name: str, question: str = "multiple_choice") -> Any:
    """folktexts' task object, switched to the question kind asked for.

    folktexts keeps one task object per name, and ``get_task(name,
    use_numeric_qa=False)`` leaves an earlier op's chain-of-thought switch on
    (so does ``Benchmark._configure_task_question``): both switches are set
    here, every time, or a later multiple-choice op would generate 512 tokens
    of reasoning per row.
    """
    from folktexts.acs import ACSTaskMetadata

    task = ACSTaskMetadata.get_task(name, use_numeric_qa=question == "direct_numeric")
    task.use_cot_qa = question == "cot"
    return task


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> Any:
    import pandas as pd

    return pd.DataFrame(rows, columns=columns)


@op
def version() -> str:
    import folktexts

    return folktexts.__version__


@op
def task_metadata(task: str) -> dict[str, Any]:
    """Features in folktexts' order, the target column and its threshold, the questions' texts."""
    t = _task(task)
    return {
        "features": list(t.features),
        "target": t.get_target(),
        "target_threshold": str(t.target_threshold) if t.target_threshold is not None else None,
        "description": t.description,
    }


@op
def column_values(task: str) -> dict[str, Any]:
    """Per feature, the codes folktexts' value map knows (a list), or None where it formats any number."""
    import re
    from pathlib import Path

    import folktexts

    data = Path(folktexts.__file__).parent / "acs" / "data"
    files = {
        f.stem: [int(m.group(1)) for m in map(re.compile(r"(\d+)\s+[.]").match, f.read_text().splitlines()) if m]
        for f in data.glob("*.txt")
    }
    coded_by_file = {"OCCP": "OCCP", "POBP": "POBP", "ST": "ST", "ANC1P": "ANC1P"}
    out: dict[str, Any] = {}
    for name, column in _task(task).cols_to_text.items():
        value_map = column._value_map
        if isinstance(value_map, dict):
            out[name] = sorted(value_map, key=str)
        else:
            out[name] = files.get(coded_by_file.get(name, ""))
    return out


@op
def prompts(
    task: str, rows: list[dict[str, Any]], question: str = "multiple_choice", variation: dict[str, Any] | None = None
) -> list[str]:
    """folktexts' zero-shot prompt of each row (``encode_row_prompt``), with the question kind and variations asked for."""
    from folktexts.prompting import PromptConfig, encode_row_prompt

    t = _task(task, question)
    config = PromptConfig.from_dict(variation or {}, task=t, question=t.question)
    frame = _frame(rows, list(t.features))
    return [encode_row_prompt(row, t, question=t.question, prompt_config=config) for _, row in frame.iterrows()]


def _bench_config(question: str, options: dict[str, Any]) -> Any:
    """folktexts' BenchmarkConfig for a question kind and options (``few_shot`` given as FewShotConfig's fields)."""
    from folktexts.benchmark import BenchmarkConfig
    from folktexts.prompting import FewShotConfig

    options = dict(options)
    few_shot = options.pop("few_shot", None)
    return BenchmarkConfig(
        numeric_risk_prompting=question == "direct_numeric",
        cot_prompting=question == "cot",
        few_shot_config=FewShotConfig(**few_shot) if few_shot else None,
        **options,
    )


@op
def benchmark_prompts(
    task: str,
    rows: list[dict[str, Any]],
    question: str = "multiple_choice",
    options: dict[str, Any] | None = None,
    train_rows: list[dict[str, Any]] | None = None,
    train_labels: list[int] | None = None,
    tokenizer: str | None = None,
) -> dict[str, Any]:
    """The prompts folktexts' Benchmark sends for each row, one per answer ordering it scores.

    The encode function is the one ``Benchmark.make_benchmark`` builds
    (few-shot, chat template or zero-shot, with its forcing of reused examples
    under order-bias correction and its dropping of a system prompt the chat
    template rejects). Few-shot examples come from a folktexts ``Dataset`` of
    ``train_rows`` that is all training split (no test part); ``train_order``
    is the order of that split (positions in ``train_rows``), which is what
    folktexts' "first n training rows" refers to.
    """
    from folktexts.benchmark import Benchmark
    from folktexts.dataset import Dataset
    from folktexts.qa_interface import MultipleChoiceQA

    t = _task(task, question)
    config = _bench_config(question, options or {})
    Benchmark._configure_task_question(t, config)
    dataset = None
    if train_rows is not None:
        data = _frame(train_rows, list(t.features))
        data[t.get_target()] = train_labels
        dataset = Dataset(data, t, test_size=0.0, val_size=0.0, seed=config.seed)
    tok = None
    if tokenizer is not None:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tokenizer)
    encode, prompt_config = Benchmark._build_encode_row_function(task=t, dataset=dataset, tokenizer=tok, config=config)
    questions = [t.question]
    if config.correct_order_bias and type(t.question) is MultipleChoiceQA:
        questions = list(MultipleChoiceQA.create_answer_keys_permutations(t.question))
    frame = _frame(rows, list(t.features))
    prompts = [[encode(row, question=q) for q in questions] for _, row in frame.iterrows()]
    if question == "cot" and tok is not None:  # chain of thought: the chat template is applied when generating
        from folktexts.llm_utils import _apply_chat_template_batch

        system = prompt_config.system_prompt() if prompt_config.system_prompt is not None else None
        prompts = [
            _apply_chat_template_batch(p, tokenizer=tok, enable_thinking=config.enable_thinking, system_prompt=system)
            for p in prompts
        ]
    order = [] if dataset is None else [int(i) for i in dataset.get_train()[0].index]
    return {"prompts": prompts, "train_order": order}


def _arrays(
    y_true: list[int], y_pred_scores: list[float], sensitive_attribute: list[Any] | None
) -> tuple[Any, Any, Any]:
    import numpy as np

    return (
        np.asarray(y_true),
        np.asarray(y_pred_scores, dtype=float),
        None if sensitive_attribute is None else np.asarray(sensitive_attribute),
    )


@op
def evaluation(
    fn: str, y_true: list[int], y_pred_scores: list[float], sensitive_attribute: list[Any] | None = None, **kwargs: Any
) -> Any:
    """One of ``folktexts.evaluation``'s functions on these arrays (``y_pred_scores`` holds 0/1 predictions for the binary ones)."""
    from folktexts import evaluation

    y, p, s = _arrays(y_true, y_pred_scores, sensitive_attribute)
    if fn == "evaluate_predictions":
        return evaluation.evaluate_predictions(y, p, sensitive_attribute=s, **kwargs)
    if fn == "compute_best_threshold":
        return evaluation.compute_best_threshold(y, p, **kwargs)
    if fn == "evaluate_binary_predictions":
        return evaluation.evaluate_binary_predictions(y, p.astype(int))
    if fn == "evaluate_binary_predictions_fairness":
        return evaluation.evaluate_binary_predictions_fairness(y, p.astype(int), s, **kwargs)
    raise ValueError(f"unknown evaluation function {fn!r}")


@op
def bootstrap_numeric(
    y_true: list[int],
    y_pred_scores: list[float],
    sensitive_attribute: list[Any] | None = None,
    threshold: float = 0.5,
    k: int = 200,
    confidence_pct: float = 95,
    seed: int = 42,
) -> Any:
    """folktexts' ``bootstrap_estimate`` of ``evaluate_predictions`` with its non-numeric keys left out.

    (folktexts' own ``evaluate_predictions_bootstrap`` raises TypeError on ``model_name=None`` in every call.)
    """
    import numbers

    from folktexts import evaluation

    def numeric(labels: Any, scores: Any, groups: Any) -> dict[str, float]:
        res = evaluation.evaluate_predictions(labels, scores, sensitive_attribute=groups, threshold=threshold)
        return {m: v for m, v in res.items() if isinstance(v, numbers.Real) and not isinstance(v, bool)}

    y, p, s = _arrays(y_true, y_pred_scores, sensitive_attribute)
    return evaluation.bootstrap_estimate(
        numeric, y_true=y, y_pred_scores=p, sensitive_attribute=s, k=k, confidence_pct=confidence_pct, seed=seed
    )


@op
def value_texts(column: str, values: list[Any], granularity: str = "original") -> list[str]:
    """folktexts' text of each value of one ACS column, as its prompts show it after "is:" (``None`` is a blank).

    ``granularity="low"``: with folktexts' simplified value maps, swapped in
    as ``PromptConfig.from_dict`` does for ``granularity=low``.
    """
    from folktexts.acs.acs_columns_simplified import simplified_value_maps
    from folktexts.acs.acs_tasks import acs_columns_map
    from folktexts.prompting import VaryValueMap

    maps = (
        VaryValueMap.with_low_granularity(acs_columns_map, simplified_value_maps)
        if granularity == "low"
        else VaryValueMap(acs_columns_map)
    )
    return [maps.cols_to_text[column][float("nan") if v is None else v] for v in values]


class _UserTurnTokenizer:
    """Stands in for a tokenizer: its "chat template" returns the user message folktexts built, so its text is compared."""

    def apply_chat_template(self, conversation: list[dict[str, str]], **kwargs: Any) -> str:
        return next(m["content"] for m in conversation if m["role"] == "user")


@op
def question_prompts(
    task: str,
    rows: list[dict[str, Any]],
    question: str = "multiple_choice",
    variation: dict[str, Any] | None = None,
    user_turn: bool = False,
) -> list[list[str]]:
    """Per row, folktexts' zero-shot prompt for each question it asks, in the order it asks them.

    Multiple choice: every answer-key permutation (order-bias correction,
    ``MultipleChoiceQA.create_answer_keys_permutations``); numeric: the one
    numeric question; ``"cot"``: a ``ChainOfThoughtQA`` on the numeric
    question's column and text, as ``Benchmark`` builds it. The questions are
    taken from the task's fields, so no earlier op's question mode on
    folktexts' shared task objects leaks in. ``user_turn``: the user message
    of the chat-template prompt instead (``PromptBuilder.build_chat``).
    """
    from folktexts.acs import ACSTaskMetadata
    from folktexts.prompting import PromptBuilder, PromptConfig, encode_row_prompt
    from folktexts.qa_interface import ChainOfThoughtQA, MultipleChoiceQA

    t = ACSTaskMetadata.get_task(task)
    numeric = t.direct_numeric_qa
    questions = {
        "multiple_choice": lambda: list(MultipleChoiceQA.create_answer_keys_permutations(t.multiple_choice_qa)),
        "direct_numeric": lambda: [numeric],
        "cot": lambda: [ChainOfThoughtQA(column=numeric.column, text=numeric.text)],
    }[question]()
    config = PromptConfig.from_dict(variation or {}, task=t, question=questions[0])
    frame = _frame(rows, list(t.features))

    def encode(row: Any, q: Any) -> str:
        if user_turn:
            return PromptBuilder(t).build_chat(
                row[t.features], config, _UserTurnTokenizer(), question=q, chat_prompt=None
            )
        return encode_row_prompt(row, t, question=q, prompt_config=config)

    return [[encode(row, q) for q in questions] for _, row in frame.iterrows()]


@op
def target_labels(task: str, values: list[Any]) -> list[int]:
    """folktexts' label of each raw target value (``None`` is a blank): its threshold applied to the column, as its datasets do."""
    import pandas as pd

    t = _task(task)
    return [
        int(v)
        for v in t.target_threshold.apply_to_column_data(
            pd.Series([float("nan") if v is None else v for v in values], dtype=float)
        )
    ]


@op
def population_filter_rows(spec: str, rows: list[dict[str, Any]], columns: list[str]) -> list[int]:
    """Positions of the rows folktexts keeps for ``run_acs_benchmark --use-population-filter SPEC``.

    SPEC goes through folktexts' own argument parser and ``cmd_line_args_to_kwargs``,
    then its ``Dataset.filter``, on ``rows`` (an ACSIncome frame: all of them
    land in the training split when the test and validation sizes are 0).
    """
    from folktexts.acs import ACSTaskMetadata
    from folktexts.cli._utils import cmd_line_args_to_kwargs
    from folktexts.cli.run_acs_benchmark import setup_arg_parser
    from folktexts.dataset import Dataset

    args = setup_arg_parser().parse_args(
        ["--model", "m", "--results-dir", "r", "--data-dir", "d", "--use-population-filter", spec]
    )
    dataset = Dataset(_frame(rows, columns), ACSTaskMetadata.get_task("ACSIncome"), test_size=0.0, val_size=0.0)
    dataset.filter(cmd_line_args_to_kwargs(args.use_population_filter))
    return sorted(int(i) for i in dataset._train_indices)


@op
def folktables_rows(task: str, rows: list[dict[str, Any]], columns: list[str]) -> dict[str, Any]:
    """``rows`` as folktables 0.0.12 writes a task's data (``df_to_pandas``), and which of them it kept.

    Its population filter, its features (folktables writes a blank as 0) and
    its True/False label in the target's own column, as a user saves them.
    """
    import folktables
    import pandas as pd

    problem = getattr(folktables, task)
    frame = _frame(rows, columns)
    features, label, _ = problem.df_to_pandas(frame)
    kept = problem._preprocess(frame).index
    return {"rows": pd.concat([features, label], axis=1).to_dict(orient="records"), "kept": [int(i) for i in kept]}


_MODELS: dict[str, Any] = {}


@op
def risk_scores(
    task: str, rows: list[dict[str, Any]], model: str, numeric: bool = False, context_size: int | None = None
) -> dict[str, Any]:
    """folktexts' ``TransformersLLMClassifier`` risk scores of ``rows``: float32 on the CPU, its defaults otherwise.

    The model folder is loaded once per worker with folktexts'
    ``load_model_tokenizer`` (float32 asked for: folktexts picks float16 on a
    CPU). Multiple choice runs with order-bias correction, as by default; the
    scores of the first answer ordering are returned too: they are what
    ``correct_order_bias=False`` gives, since folktexts' uncorrected run asks
    the task's own question, which is its first ordering, in the same batch.
    """
    import numpy as np
    import torch
    from folktexts.classifier import TransformersLLMClassifier
    from folktexts.llm_utils import load_model_tokenizer

    torch.set_num_threads(1)  # one core: the test process scores with folkscope on the other meanwhile
    if model not in _MODELS:
        _MODELS[model] = load_model_tokenizer(model, torch_dtype=torch.float32, device_map="cpu")
    llm, tokenizer = _MODELS[model]
    t = _task(task, "direct_numeric" if numeric else "multiple_choice")
    kwargs = {} if context_size is None else {"context_size": context_size}
    clf = TransformersLLMClassifier(model=llm, tokenizer=tokenizer, task=t, **kwargs)
    per_question: list[list[float]] = []
    query = clf._query_prompt_risk_estimates_batch

    def recording(prompts_batch: list[str], **options: Any) -> Any:
        estimates = query(prompts_batch, **options)
        per_question.append([float(v) for v in np.clip(estimates, 0, 1)])
        return estimates

    clf._query_prompt_risk_estimates_batch = recording
    scores = clf.predict_proba(_frame(rows, list(t.features)))[:, 1]
    one_batch = (
        len(rows) <= clf._inference_kwargs["batch_size"]
    )  # then the first call is the first ordering of every row
    return {"scores": [float(v) for v in scores], "first_ordering": per_question[0] if one_batch else None}


@op
def public_names() -> dict[str, Any]:
    """folktexts' public names: classes and functions defined in its importable modules, and its top-level names.

    Modules are every ``folktexts.*`` module whose path has no ``_``-prefixed
    part and that imports (the three htcondor launcher modules need
    ``classad``, not installed). A name counts where it is defined (an
    import elsewhere is the same name). ``members`` lists, for each class,
    its public attributes defined by folktexts itself (methods, properties,
    dataclass fields, class constants), not those inherited from
    scikit-learn or ``object``.
    """
    import importlib
    import inspect
    import pkgutil

    import folktexts

    defined: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    classes: dict[str, Any] = {}
    for info in pkgutil.walk_packages(folktexts.__path__, "folktexts."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:
            skipped[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        names = [
            n
            for n, v in vars(module).items()
            if not n.startswith("_")
            and (inspect.isclass(v) or inspect.isfunction(v))
            and getattr(v, "__module__", None) == info.name
        ]
        if names:
            defined[info.name] = sorted(names)
        classes.update({n: vars(module)[n] for n in names if inspect.isclass(vars(module)[n])})
    top = sorted(n for n in dir(folktexts) if not n.startswith("_") and not inspect.ismodule(getattr(folktexts, n)))
    members: dict[str, list[str]] = {}
    for name, cls in classes.items():
        own = set()
        for klass in cls.__mro__:
            if (klass.__module__ or "").startswith("folktexts"):
                own |= {m for m in vars(klass) if not m.startswith("_")}
        own |= {f for f in getattr(cls, "__dataclass_fields__", {}) if not f.startswith("_")}
        members[name] = sorted(own)
    return {"defined": defined, "top_level": top, "skipped": skipped, "members": members}


@op
def qa_interfaces(task: str) -> dict[str, Any]:
    """folktexts' three question objects of a task: column, text, choices, answer keys and question prompt (with and without prefill)."""
    from folktexts.acs import ACSTaskMetadata
    from folktexts.qa_interface import ChainOfThoughtQA

    t = ACSTaskMetadata.get_task(task)
    numeric = t.direct_numeric_qa
    out = {}
    for kind, q in (
        ("multiple_choice", t.multiple_choice_qa),
        ("direct_numeric", numeric),
        ("cot", ChainOfThoughtQA(column=numeric.column, text=numeric.text)),
    ):
        out[kind] = {
            "column": q.column,
            "text": q.text,
            "prompt": q.get_question_prompt(),
            "prompt_without_prefill": q.get_question_prompt(with_answer_prefill=False),
            "choices": [c.text for c in getattr(q, "choices", ())],
            "answer_keys": list(getattr(q, "answer_keys", ())),
            "default_system_prompt": q.default_system_prompt,
            "default_chat_prompt": q.default_chat_prompt,
        }
    return out


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply: dict[str, Any] = {"ok": OPS[request["op"]](**request.get("args", {}))}
        except Exception as exc:  # noqa: BLE001 - the test process shows what went wrong on this side
            reply = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        sys.stdout.write(json.dumps(reply, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
