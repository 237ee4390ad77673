"""One JSON convention: plain values for files, one canonical form for every hash (cache keys must never move)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from folkscope._json import canonical_json, fingerprint, read_json, to_jsonable, write_json
from folkscope.engine import ScoreRequest, request_key


def test_to_jsonable_makes_strict_json_of_numpy_pandas_and_non_finite_values():
    data = {
        "nan": np.float64("nan"),
        "inf": float("inf"),
        "-inf": -np.inf,
        "i": np.int64(3),
        "b": np.bool_(True),
        "arr": np.array([1.5, np.nan]),
        "series": pd.Series([1, 2]),
        "na": pd.NA,
        7: (1, 2),
        "path": Path("a/b"),
        "set": {"b", "a"},
    }
    out = to_jsonable(data)
    assert out == {
        "nan": None,
        "inf": "inf",
        "-inf": "-inf",
        "i": 3,
        "b": True,
        "arr": [1.5, None],
        "series": [1, 2],
        "na": None,
        "7": [1, 2],
        "path": "a/b",
        "set": ["a", "b"],
    }
    json.dumps(out, allow_nan=False)  # strict JSON


def test_cache_keys_keep_their_bytes():
    """The engine's cache keys are built on canonical_json: a changed byte would orphan every stored answer."""
    assert canonical_json({"b": [1, "é"], "a": 0.5}) == '{"a":0.5,"b":[1,"é"]}'
    assert request_key(ScoreRequest("Q: é?", ("A", "B"))) == request_key(ScoreRequest("Q: é?", ["A", "B"]))
    assert request_key(ScoreRequest("Q:", ("A",))) == "c3a155fd21908280efdee993961b9b5ae847c0a87ed5d4563a685e2397ecd2e2"


@given(
    st.dictionaries(
        st.text(max_size=5),
        st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5)),
        max_size=6,
    )
)
def test_fingerprint_ignores_key_order_and_numpy_types(data):
    reordered = dict(reversed(list(data.items())))
    assert fingerprint(data) == fingerprint(reordered)
    numpy_version = {k: (np.float64(v) if isinstance(v, float) else v) for k, v in data.items()}
    assert fingerprint(numpy_version) == fingerprint(data)


def test_write_json_is_atomic_strict_and_readable(tmp_path):
    write_json(tmp_path / "m.json", {"x": math.nan, "y": [np.int32(1)]})
    assert read_json(tmp_path / "m.json") == {"x": None, "y": [1]}
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]
