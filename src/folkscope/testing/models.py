"""Random-initialised models and locally trained tokenizers, for tests and benchmarks.

Nothing here downloads anything: a byte-level BPE tokenizer is trained with
the ``tokenizers`` library on synthetic survey-like sentences, and a model
of a real architecture (Llama or GPT-2) is built from a config with random
weights. Random weights give meaningless answers but the real cost and the
real code paths of a forward pass.

Examples
--------
>>> import tempfile
>>> folder = build_random_model(tempfile.mkdtemp(), arch="llama")  # doctest: +SKIP
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from folkscope._deps import require
from folkscope.errors import ConfigError

__all__ = ["LLAMA3_8B", "SMOLLM2_135M", "build_random_model", "sample_sentences", "train_tokenizer"]

#: Llama-3-8B's shape (weights are random; only the cost is real)
LLAMA3_8B: dict[str, Any] = {
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "rope_theta": 500000.0,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-5,
}

#: SmolLM2-135M's shape, the default model's (random weights: its cost on a GPU without its GGUF file)
SMOLLM2_135M: dict[str, Any] = {
    "hidden_size": 576,
    "intermediate_size": 1536,
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "vocab_size": 49152,
    "rope_theta": 100000.0,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-5,
}

#: a tiny Llama for tests and CI benchmarks
LLAMA_TINY: dict[str, Any] = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 1024,
}

_CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
_WORDS = {
    "age": [str(a) for a in range(17, 95)],
    "work": [
        "private company",
        "state government",
        "self-employed",
        "non-profit",
        "federal government",
        "local government",
    ],
    "edu": ["high school diploma", "bachelor's degree", "master's degree", "some college", "doctorate", "GED"],
    "job": ["teacher", "nurse", "engineer", "cashier", "driver", "farmer", "lawyer", "cook", "clerk", "manager"],
    "state": ["California", "Texas", "Ohio", "Maine", "Iowa", "Florida", "Utah", "Oregon", "Nevada", "Georgia"],
}


def sample_sentences(n: int = 400, *, seed: int = 0) -> list[str]:
    """Synthetic survey-row sentences (deterministic), to train a tokenizer or build prompts.

    >>> sample_sentences(1)[0].startswith("- Age:")
    True
    """
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        out.append(
            f"- Age: {rng.choice(_WORDS['age'])} years old.\n"
            f"- Class of worker: {rng.choice(_WORDS['work'])}.\n"
            f"- Highest education: {rng.choice(_WORDS['edu'])}.\n"
            f"- Occupation: {rng.choice(_WORDS['job'])}; lives in {rng.choice(_WORDS['state'])}.\n"
            f"Question: What is this person's income? A. Below $50,000 B. Above $50,000\nAnswer: "
            f"{rng.choice('AB')}\n"
        )
    return out


def train_tokenizer(texts: Sequence[str] | None = None, *, vocab_size: int = 600) -> Any:
    """Train a byte-level BPE tokenizer with a ChatML chat template.

    Parameters
    ----------
    texts : sequence of str, optional
        Training text; default :func:`sample_sentences`.
    vocab_size : int, default 600

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        Special tokens ``<|endoftext|>`` (padding), ``<|im_start|>``,
        ``<|im_end|>`` (end of sequence).
    """
    tk = require("tokenizers", feature="training a local tokenizer")
    transformers = require("transformers", feature="training a local tokenizer")
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokenizer = tk.Tokenizer(tk.models.BPE())
    tokenizer.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials, initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(list(texts) if texts is not None else sample_sentences(), trainer=trainer)
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token="<|im_start|>"
    )
    fast.chat_template = _CHATML
    return fast


def build_random_model(
    folder: str | Path,
    *,
    arch: str = "llama",
    tokenizer: Any = None,
    config: dict[str, Any] | None = None,
    seed: int = 0,
    initializer_range: float = 0.2,
    save: bool = True,
    dtype: str = "float32",
    device: str = "cpu",
) -> Any:
    """A random-initialised causal LM of a real architecture, saved with its tokenizer.

    Parameters
    ----------
    folder : str or Path
        Where ``save_pretrained`` writes (a model folder usable as a model handle).
    arch : {"llama", "gpt2"}
    tokenizer : optional
        Default: :func:`train_tokenizer`.
    config : dict, optional
        Overrides of the architecture's config (e.g. :data:`LLAMA3_8B`).
        Default: a tiny model (hidden size 32, 2 layers).
    seed : int, default 0
    initializer_range : float, default 0.2
        Larger than the usual 0.02 so that a tiny model's distributions are
        far from uniform and numerical tests are sensitive.
    save : bool, default True
        False: return the model without writing it (large models on a GPU).
    dtype : str, default "float32"
    device : str, default "cpu"
        Where the weights are created (a large model straight on the GPU).

    Returns
    -------
    Path or model
        The folder when ``save``, else the model object.
    """
    torch = require("torch", feature="building a random model")
    transformers = require("transformers", feature="building a random model")
    tokenizer = tokenizer if tokenizer is not None else train_tokenizer()
    special = {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    if arch == "llama":
        settings = {**LLAMA_TINY, "vocab_size": len(tokenizer), **(config or {})}
        cfg = transformers.LlamaConfig(
            **settings, **special, initializer_range=initializer_range, tie_word_embeddings=False
        )
    elif arch == "gpt2":
        settings = {
            "n_embd": 32,
            "n_layer": 2,
            "n_head": 4,
            "n_positions": 1024,
            "vocab_size": len(tokenizer),
            **(config or {}),
        }
        cfg = transformers.GPT2Config(**settings, **special, initializer_range=initializer_range)
    else:
        raise ConfigError(f"arch must be 'llama' or 'gpt2', got {arch!r}", parameter="arch", value=arch)
    torch.manual_seed(seed)
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=getattr(torch, dtype))
    model.eval()
    if not save:
        return model
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
