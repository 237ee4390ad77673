"""Matching pennies on the default model against the 4-gram guesser.

Usage: ``python benchmarks/numeric_pennies.py [N_GAMES] [N_ROUNDS] [--chat]``.
"""

from __future__ import annotations

import json
import sys
import time

from folkscope.engine import Engine
from folkscope.numeric import PROMPT_VERSION, play_matching_pennies


def main(argv: list[str]) -> int:
    chat = "--chat" in argv
    numbers = [int(a) for a in argv if not a.startswith("--")]
    n_games, n_rounds = (numbers + [4, 30][len(numbers) :])[:2]
    engine = Engine.from_model("default", use_cache=False, progress=False, prompt_version=PROMPT_VERSION)
    start = time.perf_counter()
    result = play_matching_pennies(engine, n_games=n_games, n_rounds=n_rounds, chat=chat)
    print(
        json.dumps({**result.to_dict(), "chat": chat, "wall_seconds": round(time.perf_counter() - start, 1)}, indent=2)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
