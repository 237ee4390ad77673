"""QA elicitation's token cost: tokens the engine runs against the prefix trie of the prompts, and the wall time.

Run from the repository root::

    PYTHONPATH=src python benchmarks/epidemiology_qa.py [--model default] [--task acs_education_by_sex]

The default task has 5 answers, so every condition is asked in 5! = 120
orderings. They share the question and go to the engine as one prefix group
per condition; the target is at most 1.2x the tokens of the prompts' prefix
trie (every distinct token prefix once). A path without prefix reuse would run
every prompt whole (``logical_tokens``). Then all low-dimensional bundled
tasks' truth and best-reference bootstrap are timed on their real rows, and
a high-dimensional task's cross-fitted truth (5 LightGBM fits) and best
reference (10 refits) on ``--high-rows`` persons (the task's NIST rows resampled).
"""

from __future__ import annotations

import argparse
import time

from folkscope.engine import Engine
from folkscope.epidemiology import elicit, get_task, list_tasks, load_dataset, references, task_truth
from folkscope.epidemiology.truth import high_references, high_truth
from folkscope.prompting import qa_prompt


def trie_tokens(sequences: list[list[int]]) -> int:
    """Nodes of the prefix trie of ``sequences``: the tokens a perfect prefix-sharing engine would run."""
    root: dict[int, dict] = {}
    nodes = 0
    for seq in sequences:
        node = root
        for tok in seq:
            if tok not in node:
                node[tok] = {}
                nodes += 1
            node = node[tok]
    return nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--task", default="acs_education_by_sex")
    parser.add_argument("--high-rows", type=int, default=1_000_000)
    args = parser.parse_args()
    task = get_task(args.task)
    engine = Engine.from_model(args.model, use_cache=False)
    answers = [lv.text for lv in task.outcome.levels]
    conditions = [None] if task.condition is None else [lv.text for lv in task.condition.levels]
    rendered = [qa_prompt(task.question(c), answers, max_orderings=128) for c in conditions]
    prompts = [r.full_text(o) for r in rendered for o in range(r.n_slots)]
    ids = engine.backend.tokenizer(prompts, add_special_tokens=True)["input_ids"]
    trie = trie_tokens([list(x) for x in ids])
    start = time.perf_counter()
    dist = elicit(engine, task, mode="qa")
    seconds = time.perf_counter() - start
    stats = engine.backend.stats
    print(
        f"task {task.name}: {len(conditions)} conditions x {len(prompts) // len(conditions)} orderings = {len(prompts)} prompts"
    )
    print(
        f"tokens run {stats.tokens_run:,}; prefix-trie tokens {trie:,}; ratio {stats.tokens_run / trie:.2f} (target <= 1.2)"
    )
    print(
        f"without prefix reuse the prompts hold {stats.logical_tokens:,} tokens ({stats.logical_tokens / max(stats.tokens_run, 1):.1f}x the tokens run)"
    )
    print(
        f"elicitation wall time {seconds:.1f} s; model distribution of the first condition {dist[0].round(3).tolist()}"
    )
    low = [t for t in list_tasks() if t.dimension == "low" and t.dataset in ("nist-acs", "anes96", "randhie")]
    start = time.perf_counter()
    for t in low:
        references(task_truth(t, load_dataset(t.dataset)), n_resamples=100)
    print(
        f"truth and best-reference bootstrap (100 redraws) of the {len(low)} low-dimensional bundled tasks: {time.perf_counter() - start:.2f} s"
    )
    high = get_task("acs_income_by_sex_age_education")
    eligible = high.rows(load_dataset("nist-acs"))  # the task's population, resampled to --high-rows persons
    rows = eligible.sample(args.high_rows, replace=True, random_state=0).reset_index(drop=True)
    start = time.perf_counter()
    truth = high_truth(high, rows)
    fitted = time.perf_counter() - start
    refs = high_references(truth, refits=10)
    print(
        f"{high.name} on {len(truth.p):,} persons: cross-fitted truth (5 folds) {fitted:.1f} s, best reference "
        f"(10 refits) {time.perf_counter() - start - fitted:.1f} s; worst {refs.worst:.3f}, best {refs.best:.4f}"
    )


if __name__ == "__main__":
    main()
