"""Supported fakes and servers for tests: folkscope's own, its benchmarks', and users'.

Why it exists
-------------
Code built on folkscope needs to be tested without a GPU, a download or a
paid API, and so do folkscope's own tests and benchmarks. Like httpx's
``MockTransport``, the stand-ins here are a real, supported part of the
package rather than test-suite internals:

- :class:`LocalOpenAIServer` (:mod:`~folkscope.testing.openai_server`): an
  OpenAI-compatible HTTP server on 127.0.0.1 answering from a model whose
  probabilities are known exactly (:class:`FakeSource`,
  :class:`TransformersSource`), with injected faults (:class:`FaultPlan`);
  ``python -m folkscope.testing`` runs it in its own process.
- :func:`build_random_model` and :func:`train_tokenizer`
  (:mod:`~folkscope.testing.models`): random-initialised models of real
  architectures and locally trained tokenizers, nothing downloaded.

The engine never imports this package; it builds on the engine.

Examples
--------
>>> from folkscope.engine.backends.fake import FakeBackend
>>> from folkscope.testing import FakeSource, LocalOpenAIServer
>>> with LocalOpenAIServer(FakeSource(FakeBackend()), max_lifetime=30) as url:
...     url.endswith("/v1")
True
"""

from folkscope.testing.faults import FAULT_KINDS, PERMANENT_FAULTS, TRANSIENT_FAULTS, FaultPlan, body_key
from folkscope.testing.models import LLAMA3_8B, SMOLLM2_135M, build_random_model, sample_sentences, train_tokenizer
from folkscope.testing.openai_server import LocalOpenAIServer
from folkscope.testing.sources import FakeSource, ProbabilitySource, TransformersSource

__all__ = [
    "FAULT_KINDS",
    "LLAMA3_8B",
    "PERMANENT_FAULTS",
    "SMOLLM2_135M",
    "TRANSIENT_FAULTS",
    "FakeSource",
    "FaultPlan",
    "LocalOpenAIServer",
    "ProbabilitySource",
    "TransformersSource",
    "body_key",
    "build_random_model",
    "sample_sentences",
    "train_tokenizer",
]
