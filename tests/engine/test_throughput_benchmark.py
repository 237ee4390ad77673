"""The engine throughput benchmark runs end to end (random-initialised tiny Llama, locally trained tokenizer).

Its speed figures are not checked here (CI machines vary); its correctness
checks are: the engine's risk scores equal the benchmark's own naive path,
and the engine runs about the prefix trie of the requests.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "engine_throughput.py"


def test_tiny_random_init_benchmark_agrees_with_its_naive_path():
    out = subprocess.run(
        [sys.executable, str(BENCH), "--tiny", "--rows", "24", "--batch-tokens", "2048", "--threads", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    risk = float(re.search(r"max \|risk diff\|\s+(\S+)", out).group(1))
    trie = float(re.search(r"trie-token ratio\s+(\S+)", out).group(1))
    speedup = float(re.search(r"speed-up\s+(\S+)x", out).group(1))
    assert risk <= 1e-5
    assert trie <= 1.10
    assert speedup > 0
