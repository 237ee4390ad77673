"""``python -m folkscope.testing``: the local OpenAI-compatible server over the fake model, in its own process.

Why it exists
-------------
Benchmarks and offline tries of the web-API backend (``folkscope run
--api-base ...``) run the server in another process and read its counters
over HTTP at ``GET /folkscope/stats``. It prints the base URL on its first
line, then serves until ``--lifetime`` or ``--idle-timeout``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from folkscope.testing.faults import FaultPlan
from folkscope.testing.openai_server import LocalOpenAIServer
from folkscope.testing.sources import FakeSource

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the fake model until the deadline: ``python -m folkscope.testing``."""
    parser = argparse.ArgumentParser(
        prog="python -m folkscope.testing",
        description="Local OpenAI-compatible test server over folkscope's fake model (127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default="fake")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--lifetime", type=float, default=600.0)
    parser.add_argument("--idle-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    from folkscope.engine.backends.fake import FakeBackend

    server = LocalOpenAIServer(
        FakeSource(FakeBackend(args.model)),
        faults=FaultPlan(rate=args.fault_rate),
        latency=args.latency,
        port=args.port,
        max_lifetime=args.lifetime,
        idle_timeout=args.idle_timeout,
    )
    print(server.start(), flush=True)
    while server.running:
        time.sleep(0.2)
    server.stop()


if __name__ == "__main__":
    main()
