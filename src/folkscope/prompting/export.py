"""Rendered prompts as tables and files: a long table, JSONL, and a Hugging Face dataset.

One record per row and answer ordering (row-major), with stable columns:

============== ==========================================================
row_id         the row's id in the data
split          train / val / test (when known)
ordering       ordering index (0 = the task's own order; always 0 for
               numeric and chain-of-thought prompts)
permutation    task-choice index shown under each letter
mode           multiple_choice / numeric / cot
prompt         full plain text; for chat prompts the text rendered with
               the given tokenizer's chat template, or the plain text
messages       chat prompts only: the messages (role, content)
prefill        chat prompts only: the assistant prefill
choices        choice texts in displayed order (letters A, B, ...)
choice_labels  label of each displayed choice
candidates     continuations to score (" A", " B")
label          true 0/1 label
answer         letter of the true label in this ordering
============== ==========================================================
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import atomic_binary, write_parquet
from folkscope.engine.requests import ChatPrompt
from folkscope.errors import ConfigError
from folkscope.prompting.chat import fit_chat_config, plain_text, render_chats
from folkscope.prompting.config import PROMPT_FORMAT_VERSION, PromptConfig
from folkscope.prompting.renderer import PromptBatch, render_dataset

__all__ = ["export_hf_dataset", "iter_prompt_records", "prompts_frame", "write_prompts_jsonl"]


def _slot_prompts(batch: PromptBatch, o: int, tokenizer: Any) -> tuple[list[str], list[ChatPrompt] | None]:
    if not batch.config.is_chat:
        return batch.full_texts(o).tolist(), None
    prompts = [p for p in batch.prompts(o) if isinstance(p, ChatPrompt)]
    if tokenizer is not None:
        return render_chats(prompts, tokenizer), prompts
    return [plain_text(p) for p in prompts], prompts


def _columns(batch: PromptBatch, split: str | None, tokenizer: Any) -> dict[str, list[Any]]:
    """The long table as Python lists, row-major over (row, ordering)."""
    n, k = len(batch), batch.n_slots
    texts, chats = zip(*(_slot_prompts(batch, o, tokenizer) for o in range(k))) if n else ((), ())
    row_ids = batch.row_ids.tolist()
    pairs = [(r, s) for r in range(n) for s in range(k)]
    cols: dict[str, list[Any]] = {"row_id": [row_ids[r] for r, _ in pairs]}
    if split is not None:
        cols["split"] = [split] * len(pairs)
    cols["ordering"] = [s for _, s in pairs]
    orderings = batch.orderings
    perms = [list(o.permutation) for o in orderings] or [[]]
    cols["permutation"] = [perms[s] for _, s in pairs]
    cols["mode"] = [batch.mode] * len(pairs)
    cols["prompt"] = [texts[s][r] for r, s in pairs]
    if batch.config.is_chat:
        cols["messages"] = [[{"role": m.role, "content": m.content} for m in chats[s][r].messages] for r, s in pairs]
        cols["prefill"] = [chats[s][r].prefill for r, s in pairs]
    texts_c = [list(o.texts) for o in orderings] or [[]]
    labels_c = [list(o.labels) for o in orderings] or [[]]
    cands = [list(o.candidates) for o in orderings] or [[]]
    cols["choices"] = [texts_c[s] for _, s in pairs]
    cols["choice_labels"] = [labels_c[s] for _, s in pairs]
    cols["candidates"] = [cands[s] for _, s in pairs]
    if batch.labels is not None:
        labels = batch.labels.tolist()
        answers = [batch.answers(o) for o in range(k)]
        cols["label"] = [labels[r] for r, _ in pairs]
        cols["answer"] = [None if answers[s] is None else answers[s][r] for r, s in pairs]  # type: ignore[index]
    return cols


def prompts_frame(batch: PromptBatch, *, split: str | None = None, tokenizer: Any = None) -> pd.DataFrame:
    """The batch as a long table, one row per (row, ordering); see the module docstring for columns."""
    frame = pd.DataFrame(_columns(batch, split, tokenizer))
    if len(frame) == 0:
        return frame
    frame["ordering"] = frame["ordering"].astype(np.int64)
    if "label" in frame:
        frame["label"] = frame["label"].astype(np.int64)
    return frame


def _record_columns(
    batch: PromptBatch, split: str | None, tokenizer: Any
) -> tuple[dict[str, list[Any]], list[list[dict[str, Any]]]]:
    cols = _columns(batch, split, tokenizer)
    if batch.config.is_chat and tokenizer is None:
        del cols["prompt"]  # the messages are the prompt; a plain flattening would mislead
    del cols["choices"], cols["choice_labels"]  # replaced by one list of {letter, text, label} per record
    letters = [chr(ord("A") + i) for i in range(26)]
    per_slot = []
    for o in range(batch.n_slots):
        ordering = batch.orderings[o] if batch.orderings else None
        per_slot.append(
            [
                {"letter": letters[j], "text": t, "label": int(lab)}
                for j, (t, lab) in enumerate(zip(ordering.texts, ordering.labels))
            ]
            if ordering
            else []
        )
    cols["choices"] = [per_slot[s] for s in cols["ordering"]]
    cols["prompt_config"] = [batch.config.name] * len(cols["ordering"])
    return cols, per_slot


def iter_prompt_records(
    batch: PromptBatch, *, split: str | None = None, tokenizer: Any = None
) -> Iterator[dict[str, Any]]:
    """JSON-ready records, one per (row, ordering); text prompts carry ``prompt``, chat ones ``messages``."""
    cols, _ = _record_columns(batch, split, tokenizer)
    keys = list(cols)
    for values in zip(*cols.values()):
        yield dict(zip(keys, values))


def _encode(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with fast paths for the common scalar types."""
    if isinstance(value, str):
        return _encode_str(value)
    if value is None:
        return "null"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


_encode_str = json.encoder.encode_basestring  # the C escaper json.dumps uses when ensure_ascii=False

#: Columns whose value depends only on the ordering slot: encoded once per slot, not per line.
_PER_SLOT = ("split", "ordering", "permutation", "mode", "candidates", "choices", "prompt_config")


def _json_lines(batch: PromptBatch, split: str | None, tokenizer: Any) -> Iterator[str]:
    """The records of :func:`iter_prompt_records` as JSON text (``json.dumps`` format), built fast."""
    cols, _ = _record_columns(batch, split, tokenizer)
    slots = cols["ordering"]
    n_slots = batch.n_slots
    encoded: list[list[str]] = []
    for key, values in cols.items():
        if key in _PER_SLOT:
            once = {}
            for i in range(min(n_slots, len(values))):
                once[slots[i]] = json.dumps(values[i], ensure_ascii=False)
            frags = [once[s] for s in slots]
        else:
            frags = [_encode(v) for v in values]
        encoded.append([f'"{key}": {frag}' for frag in frags])
    for parts in zip(*encoded):
        yield "{" + ", ".join(parts) + "}"


def _atomic_write_text(path: Path, lines: Iterator[str]) -> int:
    """Write one line per item through :func:`folkscope._io.atomic_binary`; return the count."""
    count = 0
    with atomic_binary(path) as fh:
        for line in lines:
            fh.write(line.encode("utf-8") + b"\n")
            count += 1
    return count


def write_prompts_jsonl(
    batch: PromptBatch, path: str | os.PathLike[str], *, split: str | None = None, tokenizer: Any = None
) -> int:
    """Write one JSON line per (row, ordering) to ``path`` atomically; returns the number of lines.

    The file appears complete or not at all (written to a temporary file in
    the same folder, then renamed).
    """
    return _atomic_write_text(Path(path), _json_lines(batch, split, tokenizer))


#: what save_to_disk writes for a DatasetDict: its presence marks a folder as an earlier export (replaced whole)
_DATASET_DICT_FILE = "dataset_dict.json"
#: names beside the splits' folders in an export folder; no split may take one
_BESIDE_SPLITS = ("parquet", "prompt_config.json", "README.md", _DATASET_DICT_FILE)


def _card(task: str, cfg: PromptConfig, rows: dict[str, int], provenance: dict[str, Any]) -> str:
    """The export's dataset card: what the prompts are, their columns, and the terms of the rows they describe."""
    from folkscope import __version__
    from folkscope.data.terms import data_terms, hub_licence

    terms = data_terms("risk", provenance)
    lines = [
        "---",
        f"license: {hub_licence(terms)}",
        "tags:",
        "- folkscope",
        "- prompts",
        "configs:",
        "- config_name: default",
        "  data_files:",
        *(f"  - split: {s}\n    path: parquet/{s}.parquet" for s in rows),
        "---",
        "",
        f"# folkscope prompts: {task}",
        "",
        f"The prompts folkscope {__version__} sends a model for task `{task}` with prompt configuration "
        f"`{cfg.name}` (fingerprint `{cfg.fingerprint()}`; the whole configuration is in `prompt_config.json`): "
        "one row per survey row and answer ordering. Load it with `datasets.load_from_disk(DIR)`, or the "
        "`parquet/` files with any parquet reader.",
        "",
        "| split | rows |",
        "|---|---|",
        *(f"| {s} | {n} |" for s, n in rows.items()),
        "",
        "Columns: " + ", ".join(f"`{c}`" for c in _COLUMNS) + " (see `folkscope.prompting.export`).",
        "",
        "## Data terms",
        "",
        *(f"- {t.name}: {t.terms}" for t in terms),
        "",
    ]
    return "\n".join(lines)


_COLUMNS = (
    "row_id split ordering permutation mode prompt messages prefill choices choice_labels candidates label answer "
    "prompt_config"
).split()


def export_hf_dataset(
    dataset: Any,
    config: PromptConfig | None,
    out_dir: str | os.PathLike[str],
    splits: Sequence[str] = ("train", "test"),
    *,
    tokenizer: Any = None,
) -> Path:
    """Export rendered prompts, choices and labels of a dataset's splits for Hugging Face ``datasets``.

    ``out_dir`` becomes (replacing an earlier export there whole):

    - a ``datasets.DatasetDict``, one split each: ``datasets.load_from_disk(out_dir)``
      (``dataset_dict.json`` and one folder per split, ``datasets``' own files);
    - ``parquet/<split>.parquet``: the same tables, readable with
      ``datasets.load_dataset("parquet", data_files={"test": ".../parquet/test.parquet"})``
      (or pandas / pyarrow), and what a Hub upload of the folder serves (the card's ``configs``);
    - ``prompt_config.json``: the prompt configuration, its name and fingerprint;
    - ``README.md``: the dataset card (task, configuration, splits, columns, data terms).

    No split may be named ``parquet`` (the folder beside the splits').

    Parameters
    ----------
    dataset : folkscope.data.Dataset
        Source of the rows (few-shot examples come from its train split).
    config : PromptConfig or None
        Prompt configuration (default: the paper's prompt).
    out_dir : path
        Output folder: new, empty, or an earlier export.
    splits : sequence of str
        Splits to export; each must be non-empty.
    tokenizer : optional
        Renders chat prompts through its chat template into ``prompt``
        (without folktexts' default system prompt where the template has no
        system role, :func:`~folkscope.prompting.chat.fit_chat_config`).

    Returns
    -------
    pathlib.Path
        ``out_dir``.
    """
    from folkscope._deps import require
    from folkscope._io import staged_folder
    from folkscope._quiet import quiet_libraries

    datasets = require("datasets", feature="exporting prompts as a Hugging Face dataset")
    cfg = config if config is not None else PromptConfig()
    if tokenizer is not None:
        cfg = fit_chat_config(cfg, tokenizer)
    if isinstance(splits, str) or not splits:
        raise ConfigError(
            f"splits must be a non-empty list of split names, got {splits!r}", parameter="splits", value=splits
        )
    clash = [s for s in splits if s in _BESIDE_SPLITS]
    if clash:
        raise ConfigError(
            f"a split cannot be named {clash[0]!r}: the export keeps a file of that name",
            parameter="splits",
            value=clash[0],
        )
    out = Path(out_dir)
    if out.is_dir() and any(out.iterdir()) and not (out / _DATASET_DICT_FILE).is_file():
        raise ConfigError(
            f"{out} is a folder with other files in it, not an earlier export; pass a new or empty folder",
            parameter="out_dir",
            value=str(out),
        )
    frames = {}
    for split in splits:
        batch = render_dataset(dataset, cfg, split=split)
        if len(batch) == 0:
            raise ConfigError(f"split {split!r} has no rows; export other splits", parameter="splits", value=split)
        frame = prompts_frame(batch, split=split, tokenizer=tokenizer)
        frame["prompt_config"] = cfg.name
        frames[split] = frame
    meta = {
        "task": dataset.task.name,
        "prompt_config": cfg.to_dict(),
        "prompt_config_name": cfg.name,
        "prompt_config_fingerprint": cfg.fingerprint(),
        "prompt_format_version": PROMPT_FORMAT_VERSION,
        "splits": {s: int(len(f)) for s, f in frames.items()},
    }
    with staged_folder(out) as staging:
        for split, frame in frames.items():
            write_parquet(staging / "parquet" / f"{split}.parquet", frame)
        with quiet_libraries():  # no "Saving the dataset ... 100%|" bars on the terminal
            parts = {s: datasets.Dataset.from_pandas(f, preserve_index=False) for s, f in frames.items()}
            datasets.DatasetDict(parts).save_to_disk(str(staging))
        (staging / "prompt_config.json").write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
        card = _card(dataset.task.name, cfg, meta["splits"], dict(getattr(dataset, "provenance", None) or {}))
        (staging / "README.md").write_text(card, encoding="utf-8")
    return out
