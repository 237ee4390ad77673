"""Web-API backend throughput: requests/s at several concurrency limits, and an rpm limit holding.

Against the local OpenAI-compatible test server (127.0.0.1, the fake model,
``--latency`` seconds of simulated provider latency per request), run in its
own process so that it does not share the client's interpreter lock, through
the real stack: Engine -> LiteLLMBackend -> litellm -> HTTP. Each request is
one chat scoring call (top-20 log-probabilities of the answer letters), the
unit a risk-score run over a web API is made of. The engine's result cache
is off and every prompt is distinct, so every request is sent.

Printed from one run: requests/s at each concurrency, the speed-up over
concurrency 1 and the latency-bound ideal (``concurrency / latency``), then
a run capped at ``--rpm`` requests per minute with the measured rate (from
the server's arrival times) and the most requests seen in any 1-second
window (the limiter spaces starts 60/rpm s apart, so at most rpm/60 + 1).

Usage::

    python benchmarks/api_concurrency.py                       # 50 ms latency, c = 1, 8, 32, 600 rpm
    python benchmarks/api_concurrency.py --latency 0.2 --requests 256 --rpm 1200
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

import numpy as np


class ServerProcess:
    """``python -m folkscope.testing`` in a child process; counters over HTTP."""

    def __init__(self, latency: float) -> None:
        cmd = [
            sys.executable,
            "-m",
            "folkscope.testing",
            "--latency",
            str(latency),
            "--lifetime",
            "900",
            "--idle-timeout",
            "300",
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip() if self.proc.stdout else ""
        if not line.startswith("http://127.0.0.1:"):
            self.proc.kill()
            raise SystemExit(f"the test server did not start: {line!r}")
        self.url = line
        self.root = line.rsplit("/v1", 1)[0]

    def arrivals(self) -> list[float]:
        with urllib.request.urlopen(self.root + "/folkscope/stats", timeout=10) as resp:
            return list(json.load(resp)["arrivals"])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        if self.proc.stdout:
            self.proc.stdout.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the server waits before each answer")
    parser.add_argument("--requests", type=int, default=128, help="requests per concurrency level")
    parser.add_argument("--concurrency", default="1,8,32", help="comma-separated concurrency limits")
    parser.add_argument("--rpm", type=float, default=600.0, help="requests-per-minute limit of the last run")
    parser.add_argument("--rpm-requests", type=int, default=60, help="requests of the rate-limited run")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-local-benchmark")  # the local server does not check it

    from folkscope.engine import ChatPrompt, Engine, ScoreRequest
    from folkscope.engine.backends.api import LiteLLMBackend

    levels = [int(c) for c in args.concurrency.split(",")]
    server = ServerProcess(args.latency)
    counter = iter(range(10**9))

    def workload(n: int) -> list[ScoreRequest]:
        return [
            ScoreRequest(
                ChatPrompt([("user", f"Respondent {next(counter)}: income above $50,000? A or B.")]),
                ("A", " A", "B", " B"),
            )
            for _ in range(n)
        ]

    def run(concurrency: int, n: int, rpm: float | None = None) -> tuple[float, list[float]]:
        backend = LiteLLMBackend("openai/fake", api_base=server.url, max_concurrency=concurrency, max_rpm=rpm)
        engine = Engine(backend, cache=None, progress=False)
        engine.score(workload(2))  # warm up: clients and connections
        before = len(server.arrivals())
        start = time.perf_counter()
        engine.score(workload(n))
        seconds = time.perf_counter() - start
        if backend.stats.retries or backend.stats.api_calls != n + 2:
            raise SystemExit(f"unexpected retries: {backend.stats.to_dict()}")
        backend.close()
        return seconds, server.arrivals()[before:]

    try:
        print(
            f"api_concurrency: local OpenAI-compatible server, latency {args.latency * 1000:.0f} ms/request, "
            f"{args.requests} chat scoring requests per level (top-20 logprobs, 1 token)"
        )
        print(
            f"  {'concurrency':>11} {'rpm limit':>9} {'seconds':>8} {'req/s':>8} {'vs c=1':>7} {'ideal req/s':>11} {'of ideal':>8}"
        )
        base = None
        for c in levels:
            seconds, _ = run(c, args.requests)
            rate = args.requests / seconds
            base = base or rate
            ideal = c / args.latency
            print(
                f"  {c:>11} {'-':>9} {seconds:>8.2f} {rate:>8.1f} {rate / base:>6.2f}x {ideal:>11.0f} {rate / ideal:>7.0%}"
            )
        c = max(levels)
        seconds, arrivals = run(c, args.rpm_requests, rpm=args.rpm)
        t = np.sort(np.asarray(arrivals))
        measured = (len(t) - 1) / (t[-1] - t[0]) * 60 if len(t) > 1 else float("nan")
        per_second = max(int(np.searchsorted(t, x + 1.0, side="left") - i) for i, x in enumerate(t))
        rate = args.rpm_requests / seconds
        print(
            f"  {c:>11} {args.rpm:>9.0f} {seconds:>8.2f} {rate:>8.1f} {rate / base:>6.2f}x {args.rpm / 60:>11.1f} {rate / (args.rpm / 60):>7.0%}"
        )
        print(
            f"  rpm limit {args.rpm:.0f}: measured {measured:.1f} requests/min between first and last arrival "
            f"({measured / args.rpm:.3f} of the limit); at most {per_second} requests in any 1 s window "
            f"(limit {args.rpm / 60:.1f}/s)"
        )
    finally:
        server.close()


if __name__ == "__main__":
    main()
