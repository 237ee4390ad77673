"""Fixtures: random-initialised tiny models with a locally trained tokenizer, engines per backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend


@pytest.fixture(scope="session")
def locally_trained_tokenizer():
    """Byte-level BPE trained here on a few hundred synthetic survey sentences (no download)."""
    pytest.importorskip("transformers")
    from folkscope.testing import train_tokenizer

    return train_tokenizer()


@pytest.fixture(scope="session")
def random_init_llama_dir(tmp_path_factory, locally_trained_tokenizer) -> Path:
    """A random-initialised 2-layer Llama (hidden 32) saved with the locally trained tokenizer."""
    from folkscope.testing import build_random_model

    return build_random_model(
        tmp_path_factory.mktemp("random-init-llama"), arch="llama", tokenizer=locally_trained_tokenizer
    )


@pytest.fixture(scope="session")
def random_init_gpt2_dir(tmp_path_factory, locally_trained_tokenizer) -> Path:
    """A random-initialised 2-layer GPT-2 (absolute positions) with the locally trained tokenizer."""
    from folkscope.testing import build_random_model

    return build_random_model(
        tmp_path_factory.mktemp("random-init-gpt2"), arch="gpt2", tokenizer=locally_trained_tokenizer
    )


@pytest.fixture(scope="session")
def llama_backend(random_init_llama_dir):
    from folkscope.engine.backends.hf import HFBackend

    return HFBackend(str(random_init_llama_dir), device="cpu", batch_tokens=2048)


@pytest.fixture(scope="session")
def llama_naive_backend(random_init_llama_dir):
    from folkscope.engine.backends.hf import HFBackend

    return HFBackend(str(random_init_llama_dir), device="cpu", batch_tokens=2048, strategy="naive")


@pytest.fixture()
def fake_engine() -> Engine:
    return Engine(FakeBackend(), cache=None, progress=False)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread():
    """Tiny models run fastest on one thread, and a shared CI machine stays responsive."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
