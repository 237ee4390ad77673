"""Engine scoring throughput: optimised path vs a naive reference, on ACSIncome-shaped prompts.

Workload: multiple choice with order-bias correction. Every row is asked
twice, with the answers in both orders; the risk score is the mean over the
two orders of P(">= $50,000") normalised over the two answers. Prompts are
a shared task description (~60 tokens), the row's features (~150 tokens,
rendered from the bundled NIST ACS excerpt), then the question with one
ordering (~25 tokens).

- optimised: one :class:`PrefixGroupRequest` per row (prefix = description
  + row, suffixes = the two orderings); the engine runs the prefix tree of
  the requests (the description once, each row once, each ordering's tokens
  once per row) and reads candidate logits only at the last position.
- naive: written here, independent of the engine: per ordering, the full
  prompts tokenized whole, sorted by length, in right-padded batches of at
  most ``--batch-tokens`` padded tokens through the model's own forward
  (full-vocabulary logits at every position), log-softmax, then the two
  answer tokens at each prompt's last position. No reuse of anything.

Both use the same model object, device, dtype and, by default, batch budget
(``--batch-tokens``; the engine's footprint counts cached prefixes, the
naive path's only its padded tokens). ``--naive-batch-tokens`` gives the
naive path a budget of its own: on CPU its full-vocabulary logits make it
faster at small budgets (measured: 2048 < 4096 < 8192 < 16384 in seconds),
so a strict comparison uses its fastest. The engine's result cache is off. Printed: rows/s, prompt tokens/s, the
speed-up, the largest risk-score difference (must be <= 1e-4 in float32),
the unique-token ratio (tokens run / sum of prompt lengths) and the
trie-token ratio (tokens run / tokens in the prefix trie of all requests;
the description counts once, as the engine keeps its cache across batches).
On a GPU also model FLOPs utilisation = 2 * params * tokens / (seconds *
peak) and peak memory.

Usage::

    python benchmarks/engine_throughput.py                      # default model, CPU
    python benchmarks/engine_throughput.py --tiny --rows 64     # random-init tiny Llama (CI)
    python benchmarks/engine_throughput.py --device cuda --random-init llama3-8b --rows 2000
    python benchmarks/engine_throughput.py --device cuda --random-init smollm2-135m --rows 2000
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import pandas as pd

DESCRIPTION = (
    "The following data corresponds to a survey respondent. The survey was conducted among US residents "
    "in 2019. Please answer the question based on the information provided. The data provided is enough "
    "to reach an approximate answer.\n\nInformation:\n"
)
QUESTION = "Question: What is this person's estimated yearly income?\n"
ANSWERS = ("Below $50,000.", "Above $50,000.")

_SEX = {1: "Male", 2: "Female"}
_MSP = {
    1: "married, spouse present",
    2: "married, spouse absent",
    3: "widowed",
    4: "divorced",
    5: "separated",
    6: "never married",
}
_RACE = {
    1: "White",
    2: "Black or African American",
    3: "American Indian",
    4: "Alaska Native",
    5: "tribes specified",
    6: "Asian",
    7: "Native Hawaiian or Pacific Islander",
    8: "some other race",
    9: "two or more races",
}
_HOUSING = {1: "house or apartment", 2: "group quarters (institutional)", 3: "group quarters (non-institutional)"}
_YESNO = {1: "yes", 2: "no"}


def _label(mapping: dict[int, str], value: Any, missing: str = "not reported") -> str:
    try:
        return mapping.get(int(value), missing)
    except (TypeError, ValueError):
        return missing


def _code(value: Any) -> str:
    return "none" if value is None or value is pd.NA or value != value else str(value)


def build_rows(n: int) -> list[str]:
    """Row texts rendered from the bundled NIST excerpt, or synthetic ones if it is unavailable."""
    try:
        from folkscope.data import load_bundled

        frame = load_bundled("nist-national").sample(n=n, random_state=0, replace=n > 27253)
    except Exception:  # noqa: BLE001 - the benchmark still runs on synthetic rows
        from folkscope.testing import sample_sentences

        return [s.split("Question")[0] for s in sample_sentences(n, seed=1)]
    rows = []
    for r in frame.itertuples():
        rows.append(
            f"- Age: {int(r.AGEP)} years old.\n"
            f"- Sex: {_label(_SEX, r.SEX)}.\n"
            f"- Marital status: {_label(_MSP, r.MSP)}.\n"
            f"- Race: {_label(_RACE, r.RAC1P)}; Hispanic origin code {_code(r.HISP)}.\n"
            f"- Housing: {_label(_HOUSING, r.HOUSING_TYPE)}, ownership code {_code(r.OWN_RENT)}.\n"
            f"- Place of residence: public use microdata area {r.PUMA}, population density {float(r.DENSITY):,.0f} per square mile.\n"
            f"- Educational attainment code: {_code(r.EDU)}.\n"
            f"- Industry code: {_code(r.INDP)} (category {_code(r.INDP_CAT)}).\n"
            f"- Veteran: {_label(_YESNO, r.DVET)}. Self-care difficulty: {_label(_YESNO, r.DREM)}.\n"
            f"- Ambulatory difficulty: {_label(_YESNO, r.DPHY)}. Vision difficulty: {_label(_YESNO, r.DEYE)}. "
            f"Hearing difficulty: {_label(_YESNO, r.DEAR)}.\n"
        )
    return rows


def orderings() -> tuple[str, str]:
    first = QUESTION + f"A. {ANSWERS[0]}\nB. {ANSWERS[1]}\nAnswer:"
    second = QUESTION + f"A. {ANSWERS[1]}\nB. {ANSWERS[0]}\nAnswer:"
    return first, second


def risk_scores(lp_first: np.ndarray, lp_second: np.ndarray) -> np.ndarray:
    """Mean over both orders of P(above) normalised over the two answers; inputs (n, 2) over (' A', ' B')."""

    def norm(lp: np.ndarray) -> np.ndarray:
        p = np.exp(lp - lp.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    return 0.5 * (norm(lp_first)[:, 1] + norm(lp_second)[:, 0])


def _peak_flops(device: str, override: float | None) -> float | None:
    if override:
        return override * 1e12
    if not device.startswith("cuda"):
        return None
    import torch

    name = torch.cuda.get_device_name(torch.device(device))
    for key, tflops in (("H200", 989.4), ("H100 PCIe", 756.0), ("H100", 989.4), ("A100", 312.0), ("L40S", 362.0)):
        if key in name:
            return tflops * 1e12
    return None


def naive_logprobs(
    model: Any, tokenizer: Any, texts: list[str], candidates: tuple[str, ...], batch_tokens: int
) -> tuple[np.ndarray, int, int, int]:
    """The reference path: log P(candidate | text) from full logits, no reuse; (logprobs, batches, padded, tokens).

    ``logprobs`` has one row per text and one column per candidate; every
    candidate must be one token.
    """
    import torch

    cand_ids = [tokenizer.encode(c, add_special_tokens=False) for c in candidates]
    if any(len(c) != 1 for c in cand_ids):
        raise SystemExit(f"the naive path reads single-token answers; {candidates} tokenize to {cand_ids}")
    targets = torch.tensor([c[0] for c in cand_ids], device=model.device)
    ids = tokenizer(texts, add_special_tokens=True)["input_ids"]
    pad = next((t for t in (tokenizer.pad_token_id, tokenizer.eos_token_id) if isinstance(t, int)), 0)
    order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
    out = np.empty((len(texts), len(candidates)))
    batches = padded = 0
    start = 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and (stop + 1 - start) * len(ids[order[stop]]) <= batch_tokens:
            stop += 1
        chunk = order[start:stop]
        width = len(ids[chunk[-1]])
        input_ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, i in enumerate(chunk):
            input_ids[r, : len(ids[i])] = torch.tensor(ids[i])
            mask[r, : len(ids[i])] = 1
        with torch.inference_mode():
            logits = model(input_ids=input_ids.to(model.device), attention_mask=mask.to(model.device)).logits.float()
            logp = torch.log_softmax(logits, dim=-1)
            last = torch.tensor([len(ids[i]) - 1 for i in chunk], device=model.device)
            picked = logp[torch.arange(len(chunk), device=model.device), last][:, targets]
        out[chunk] = picked.double().cpu().numpy()
        batches += 1
        padded += len(chunk) * width
        start = stop
    return out, batches, padded, sum(len(t) for t in ids)


def build_backend(args: argparse.Namespace, rows: list[str]) -> tuple[Any, str, int]:
    from folkscope.engine.backends.hf import HFBackend

    common = {"device": args.device, "batch_tokens": args.batch_tokens}
    if args.random_init or args.tiny:
        from folkscope.testing import LLAMA3_8B, SMOLLM2_135M, build_random_model, train_tokenizer

        texts = [DESCRIPTION + r + q + f" {a}\n" for r in rows[:400] for q in orderings() for a in "AB"]
        tokenizer = train_tokenizer(texts, vocab_size=2000)
        config = dict({"llama3-8b": LLAMA3_8B, "smollm2-135m": SMOLLM2_135M}.get(args.random_init or "", {}))
        if args.layers:
            config["num_hidden_layers"] = args.layers
        dtype = args.dtype or ("bfloat16" if args.device.startswith("cuda") else "float32")
        model = build_random_model(
            "unused",
            tokenizer=tokenizer,
            config=config,
            save=False,
            initializer_range=0.02,
            dtype=dtype,
            device=args.device,
        )
        name = f"random-init-{args.random_init or 'tiny'}"
        opt = HFBackend.from_loaded(model, tokenizer, name=name, revision="bench", **common)
    else:
        from folkscope.engine import resolve_model

        resolved = resolve_model(args.model)
        opt = HFBackend(resolved, dtype=args.dtype, **common)
        name = resolved.name
    n_params = sum(p.numel() for p in opt.model.parameters()) - opt.model.get_input_embeddings().weight.numel()
    return opt, name, n_params


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default", help="model handle (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default=None, help="float32 (CPU default) / bfloat16 (GPU default) / float16")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--batch-tokens", type=int, default=16384, help="the engine's token budget (its CPU default)")
    parser.add_argument(
        "--naive-batch-tokens",
        type=int,
        default=None,
        help="the naive path's budget in padded tokens (default: --batch-tokens; its full logits make "
        "it faster at smaller budgets on CPU, e.g. 2048)",
    )
    parser.add_argument(
        "--random-init",
        choices=["llama3-8b", "smollm2-135m"],
        default=None,
        help="random-initialised model of this shape (smollm2-135m: the default model's, without its weights)",
    )
    parser.add_argument("--tiny", action="store_true", help="random-initialised tiny Llama (CPU, for CI)")
    parser.add_argument(
        "--layers", type=int, default=None, help="override the random-init model's layer count (smoke tests)"
    )
    parser.add_argument("--peak-tflops", type=float, default=None, help="peak FLOP/s of the device, for MFU")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument(
        "--repeats", type=int, default=1, help="time each path this many times (alternating), keep the fastest"
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="after timing, run the optimised path once more under torch.profiler and print its N "
        "most expensive operators (device time on a GPU, CPU time otherwise): where the time goes",
    )
    args = parser.parse_args(argv)
    args.naive_batch_tokens = args.naive_batch_tokens or args.batch_tokens

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    from folkscope.engine import Engine, PrefixGroupRequest
    from folkscope.engine.batching import trie_tokens

    rows = build_rows(args.rows)
    first, second = orderings()
    opt_backend, name, n_params = build_backend(args, rows)
    optimized = Engine(opt_backend, cache=None, progress=False)
    model, tokenizer = opt_backend.model, opt_backend.tokenizer
    cands = (" A", " B")
    groups = [PrefixGroupRequest(DESCRIPTION + r, (first, second), cands) for r in rows]
    full = [[DESCRIPTION + r + q for r in rows] for q in (first, second)]

    # warm up (loads weights, runs the self-check) on a different row so nothing is timed twice
    warm = build_rows(args.rows + 1)[-1:]
    optimized.score_groups([PrefixGroupRequest(DESCRIPTION + warm[0], (first, second), cands)])
    naive_logprobs(model, tokenizer, [DESCRIPTION + warm[0] + first], cands, args.naive_batch_tokens)
    cuda = args.device.startswith("cuda")

    def timed(fn: Any) -> tuple[Any, float, int]:
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        out = fn()
        if cuda:
            torch.cuda.synchronize()
        return out, time.perf_counter() - t0, torch.cuda.max_memory_allocated() if cuda else 0

    t_naive = t_opt = float("inf")
    for _ in range(args.repeats):  # alternate, so a busy machine slows both alike; keep the fastest
        opt_backend.stats.__init__()  # type: ignore[misc]
        res_naive, t, mem_naive = timed(
            lambda: [naive_logprobs(model, tokenizer, texts, cands, args.naive_batch_tokens) for texts in full]
        )
        t_naive = min(t_naive, t)
        res_opt, t, mem_opt = timed(lambda: optimized.score_groups(groups))
        t_opt = min(t_opt, t)

    lp_naive = [r[0] for r in res_naive]
    naive_batches, naive_padded, prompt_tokens = (sum(r[k] for r in res_naive) for k in (1, 2, 3))
    lp_opt = [np.array([g.results[k].logprobs for g in res_opt]) for k in (0, 1)]
    risk_naive, risk_opt = risk_scores(*lp_naive), risk_scores(*lp_opt)
    s_opt = opt_backend.stats
    n = len(rows)
    print(
        f"engine_throughput: model={name} device={args.device} dtype={opt_backend.dtype} rows={n} "
        f"(x2 orderings) batch_tokens={args.batch_tokens} (naive {args.naive_batch_tokens}) threads={torch.get_num_threads()} "
        f"best of {args.repeats}"
    )
    print(f"  mean prompt length           {prompt_tokens / (2 * n):.1f} tokens (description+row+question)")
    print(
        f"  naive      {n / t_naive:9.2f} rows/s {prompt_tokens / t_naive:11.0f} prompt tok/s  {t_naive:8.2f} s  "
        f"batches={naive_batches} padded_tokens={naive_padded}"
    )
    print(
        f"  optimised  {n / t_opt:9.2f} rows/s {prompt_tokens / t_opt:11.0f} prompt tok/s  {t_opt:8.2f} s  "
        f"batches={s_opt.batches} passes={s_opt.forward_passes} padded_tokens={s_opt.tokens_padded}"
    )
    print(f"  speed-up                     {t_naive / t_opt:.2f}x")
    print(
        f"  unique-token ratio           {s_opt.tokens_run / prompt_tokens:.3f} "
        f"(tokens run {s_opt.tokens_run} / prompt tokens {prompt_tokens}); naive 1.000"
    )
    # the sequences the engine must see: each row's prefix tokens followed by one ordering's tokens
    prefixes = [DESCRIPTION + r for r in rows]
    conts = opt_backend._continuations((first, second))
    seqs = [p + conts[q] for p in opt_backend._encode_rendered(prefixes, prefixes) for q in (first, second)]
    trie = trie_tokens(seqs)
    print(
        f"  trie-token ratio             {s_opt.tokens_run / trie:.3f} "
        f"(tokens run {s_opt.tokens_run} / tokens in the prefix trie of all requests {trie}; target <= 1.05)"
    )
    print(
        f"  max |risk diff|              {np.abs(risk_opt - risk_naive).max():.2e}  "
        f"(max |logprob diff| {max(np.abs(a - b).max() for a, b in zip(lp_opt, lp_naive)):.2e})"
    )
    peak = _peak_flops(args.device, args.peak_tflops)
    if peak:
        for label, tokens, secs in (("naive", prompt_tokens, t_naive), ("optimised", s_opt.tokens_run, t_opt)):
            print(
                f"  MFU {label:<10} {2 * n_params * tokens / (secs * peak):.3f} "
                f"(2 x {n_params / 1e9:.2f}B params x {tokens} tokens / ({secs:.2f} s x {peak / 1e12:.0f} TFLOP/s))"
            )
    if cuda:
        print(f"  peak GPU memory              naive {mem_naive / 2**30:.2f} GiB, optimised {mem_opt / 2**30:.2f} GiB")
    if args.profile:
        print_profile(lambda: optimized.score_groups(groups), cuda=cuda, top=args.profile)


def print_profile(fn: Any, *, cuda: bool, top: int) -> None:
    """Run ``fn`` once under torch.profiler; print wall time, busy device time and the ``top`` operators by self time."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    t0 = time.perf_counter()
    with profile(activities=activities) as prof:
        fn()
        if cuda:
            torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    events = prof.key_averages()
    key = "self_device_time_total" if cuda else "self_cpu_time_total"
    busy = sum(getattr(e, key) for e in events) / 1e6
    print(
        f"  profile (optimised, once)    wall {wall:.2f} s under the profiler; {'device' if cuda else 'CPU'} busy "
        f"{busy:.2f} s ({busy / wall:.0%} of wall)"
    )
    print(events.table(sort_by=key, row_limit=top, max_name_column_width=60))


if __name__ == "__main__":
    main()
