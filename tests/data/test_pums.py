"""PUMS download, parquet cache and loading, served from a loopback fixture archive.

The archive is built from the 10 real ACSIncome rows bundled with folkscope,
laid out as a Census person file (``psam_p06.csv`` inside ``csv_pca.zip``).
PUMS columns the 10-row sample lacks (SERIALNO, PWGTP, PINCP, JWMNP, ...) are
filled with plausible values of the right shape, stated below.
"""

from __future__ import annotations

import hashlib
import io
import json
import tempfile
import zipfile
from collections.abc import Iterator
from datetime import date
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.data import download, pums
from folkscope.data.pums import download_pums, load_pums, pums_url
from folkscope.errors import ConfigError, DownloadError, IntegrityError, UnknownColumnError

from .http_fixture import Fault, FixtureServer

CA = "/2018/1-Year/csv_pca.zip"
TX = "/2018/1-Year/csv_ptx.zip"
FEATURES = ["AGEP", "COW", "SCHL", "MAR", "OCCP", "POBP", "RELP", "WKHP", "SEX", "RAC1P"]
PINCP = [8000, 31000, 45000, -4800, 12000, 61000, 84500, 250000, 52000, 73000]


def bundled_rows() -> pd.DataFrame:
    text = (files("folkscope") / "data" / "resources" / "acs_income_10rows.csv").read_text(encoding="utf-8")
    frame = pd.read_csv(io.StringIO(text), index_col=0)
    return frame[FEATURES].astype("int64").assign(rich=frame["PINCP>50000"].astype(bool))


def person_csv(st_code: str | None = "06", year: int = 2018) -> str:
    """The bundled rows as a PUMS person CSV: header order and codes as Census writes them."""
    rows = bundled_rows()
    n = len(rows)
    out = pd.DataFrame(
        {
            "RT": "P",
            "SERIALNO": [f"{year}{'GQ' if i % 3 == 0 else 'HU'}{i + 1:07d}" for i in range(n)],
            "SPORDER": 1,
            "PUMA": [f"{3701 + i:05d}" for i in range(n)],
            "ST": st_code,
            "ADJINC": 1013097,
            "PWGTP": [12, 87, 140, 5, 33, 301, 64, 18, 95, 41],
            **{name: rows[name] for name in FEATURES},
            # JWMNP (travel minutes) is blank for people who do not commute.
            "JWMNP": ["20", "", "45", "", "10", "90", "", "5", "30", "15"],
            "NAICSP": ["6111", "722Z", "4MS", "6111", "722Z", "3345", "23", "3345", "6111", "5415"],
            "SOCP": ["252020", "353031", "4740XX", "252020", "353031"] * 2,
            # Consistent with the bundled label PINCP > 50000; one negative (business loss) as PUMS allows.
            "PINCP": PINCP,
        }
    )
    if st_code is None:
        out = out.drop(columns="ST")
    return out.to_csv(index=False, lineterminator="\n")


def person_zip(member: str = "psam_p06.csv", csv: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ACS2018_PUMS_README.pdf", b"%PDF-1.4 not a person file")
        zf.writestr(member, csv if csv is not None else person_csv())
    return buf.getvalue()


CA_ZIP = person_zip()
TX_ZIP = person_zip("psam_p48.csv", person_csv("48"))


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(pums.BASE_URL_ENV, raising=False)
    monkeypatch.setattr(download, "_sleep", lambda seconds: None)


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    with FixtureServer({CA: CA_ZIP, TX: TX_ZIP}) as srv:
        yield srv


def fetch_ca(server: FixtureServer, data_dir: Path, **kwargs: object) -> Path:
    return download_pums(["CA"], 2018, "1-Year", data_dir, base_url=server.url(), **kwargs)[0]  # type: ignore[arg-type]


def closed_port_url() -> str:
    with FixtureServer({}) as srv:
        url = srv.url()
    return url  # the port is free again: connecting is refused


def test_public_names_are_exported() -> None:
    own = {n for n, v in vars(pums).items() if getattr(v, "__module__", None) == pums.__name__}
    public = {n for n in own if not n.startswith("_")}
    constants = {n for n in vars(pums) if n.isupper() and not n.startswith("_")}
    assert public | constants == set(pums.__all__)


def test_url_follows_census_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    census = "https://www2.census.gov/programs-surveys/acs/data/pums"
    assert pums_url(2018, "1-Year", "ca") == f"{census}/2018/1-Year/csv_pca.zip"
    mirrored = pums_url(2016, "5-Year", "PR", base_url="http://mirror/pums/")
    assert mirrored == "http://mirror/pums/2016/5-Year/csv_ppr.zip"
    monkeypatch.setenv(pums.BASE_URL_ENV, "http://127.0.0.1:1/p")
    assert pums_url(2019, "1-Year", "TX") == "http://127.0.0.1:1/p/2019/1-Year/csv_ptx.zip"


def test_default_states_are_folktables_list() -> None:
    states = pums.default_states()
    assert len(states) == 51 and "PR" in states and "DC" not in states
    assert pums.state_fips("pr") == "72" and pums.state_fips("CA") == "06" and pums.state_fips("DC") == "11"
    with pytest.raises(ConfigError, match="unknown state abbreviation 'ZZ'"):
        pums.state_fips("ZZ")


def test_download_then_offline_reload(server: FixtureServer, tmp_path: Path) -> None:
    parquet = fetch_ca(server, tmp_path)
    assert parquet == tmp_path / "pums" / "2018" / "1-Year" / "psam_p06.parquet"
    first = load_pums(["CA"], 2018, "1-Year", tmp_path, base_url=server.url())
    assert server.requests[CA] == 1
    server.stop()
    for offline in (
        load_pums(["CA"], 2018, "1-Year", tmp_path, download=False),
        load_pums(["CA"], 2018, "1-Year", tmp_path, base_url=server.url()),
    ):
        pd.testing.assert_frame_equal(offline, first)
    assert server.requests[CA] == 1
    rows = bundled_rows()
    assert len(first) == 10 and (first["ST"] == 6).all()
    for name in FEATURES:
        assert first[name].tolist() == rows[name].tolist()
    assert ((first["PINCP"] > 50000).to_numpy() == rows["rich"].to_numpy()).all()


def test_second_download_neither_fetches_nor_converts(server: FixtureServer, tmp_path: Path) -> None:
    parquet = fetch_ca(server, tmp_path)
    stamp = parquet.stat().st_mtime_ns
    assert fetch_ca(server, tmp_path) == parquet
    assert server.requests[CA] == 1
    assert parquet.stat().st_mtime_ns == stamp


def test_sidecar_records_source(server: FixtureServer, tmp_path: Path) -> None:
    parquet = fetch_ca(server, tmp_path)
    record = json.loads(parquet.with_name("psam_p06.parquet.json").read_text())
    assert record["source_url"] == server.url(CA)
    assert record["source_bytes"] == len(CA_ZIP)
    assert record["source_sha256"] == hashlib.sha256(CA_ZIP).hexdigest()
    assert record["rows"] == 10 and record["complete"] is True
    assert record["parquet_bytes"] == parquet.stat().st_size


def test_parquet_dtypes_are_compact_and_exact(server: FixtureServer, tmp_path: Path) -> None:
    schema = pq.read_schema(fetch_ca(server, tmp_path))
    assert schema.field("AGEP").type == pa.int8()
    assert schema.field("PWGTP").type == pa.int16()
    assert schema.field("PINCP").type == pa.int32()
    assert schema.field("ADJINC").type == pa.int32()
    assert schema.field("ST").type == pa.int8()
    frame = load_pums(["CA"], 2018, "1-Year", tmp_path, download=False)
    assert str(frame["JWMNP"].dtype) == "Int8"  # blanks stay missing, never 0 or NaN-as-float
    assert frame["JWMNP"].isna().sum() == 3
    assert frame["PINCP"].tolist() == PINCP
    assert frame["PUMA"].tolist()[:2] == [3701, 3702]
    assert isinstance(frame["SERIALNO"].dtype, pd.StringDtype)
    assert frame["SERIALNO"].iloc[0] == "2018GQ0000001"
    assert isinstance(frame["RT"].dtype, pd.CategoricalDtype)
    assert frame["SOCP"].astype(str).tolist()[2] == "4740XX"
    assert frame["NAICSP"].astype(str).tolist()[0] == "6111"  # codes stay text, never 6111.0


def test_columns_are_read_selectively(server: FixtureServer, tmp_path: Path) -> None:
    frame = load_pums(["CA"], 2018, "1-Year", tmp_path, columns=["PINCP", "AGEP"], base_url=server.url())
    assert list(frame.columns) == ["PINCP", "AGEP"]


def test_unknown_column_is_reported(server: FixtureServer, tmp_path: Path) -> None:
    with pytest.raises(UnknownColumnError, match="NOPE"):
        load_pums(["CA"], 2018, "1-Year", tmp_path, columns=["AGEP", "NOPE"], base_url=server.url())
    fetch_ca(server, tmp_path)
    with pytest.raises(UnknownColumnError, match="NOPE"):
        load_pums(["CA"], 2018, "1-Year", tmp_path, columns=["NOPE"], download=False)


def test_narrow_cache_is_widened_from_kept_archive_offline(server: FixtureServer, tmp_path: Path) -> None:
    parquet = fetch_ca(server, tmp_path, columns=["AGEP"])
    assert pq.read_schema(parquet).names == ["ST", "AGEP"]
    with pytest.raises(DownloadError, match="without some requested columns"):
        load_pums(["CA"], 2018, "1-Year", tmp_path, columns=["PINCP"], download=False)
    server.stop()
    frame = load_pums(["CA"], 2018, "1-Year", tmp_path, columns=["PINCP"], base_url=server.url())
    assert len(frame) == 10
    assert pq.read_schema(parquet).names == ["ST", "AGEP", "PINCP"]
    assert server.requests[CA] == 1


def test_states_are_concatenated(server: FixtureServer, tmp_path: Path) -> None:
    frame = load_pums(["CA", "tx"], 2018, "1-Year", tmp_path, base_url=server.url())
    assert len(frame) == 20
    assert frame["ST"].tolist() == [6] * 10 + [48] * 10
    assert isinstance(frame["RT"].dtype, pd.CategoricalDtype)
    assert frame.index.tolist() == list(range(20))


def test_older_archive_naming_and_missing_state_column(tmp_path: Path) -> None:
    path = "/2016/5-Year/csv_pca.zip"
    with FixtureServer({path: person_zip("ss16pca.csv", person_csv(None, 2016))}) as server:
        frame = load_pums("CA", 2016, "5-Year", tmp_path, base_url=server.url())
    assert (frame["ST"] == 6).all() and str(frame["ST"].dtype) == "int8"
    assert frame["SERIALNO"].iloc[0] == "2016GQ0000001"


def test_truncated_archive_is_detected_and_completed(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(CA, Fault.truncated(len(CA_ZIP) // 2))
    assert len(load_pums(["CA"], 2018, "1-Year", tmp_path, base_url=server.url())) == 10
    assert server.requests[CA] == 2


def test_corrupt_archive_is_detected_and_refetched(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(CA, Fault.corrupted())
    assert len(load_pums(["CA"], 2018, "1-Year", tmp_path, base_url=server.url())) == 10
    assert server.range_headers == [(CA, None), (CA, None)]


def test_damaged_cached_archive_is_replaced(server: FixtureServer, tmp_path: Path) -> None:
    folder = tmp_path / "pums" / "2018" / "1-Year"
    folder.mkdir(parents=True)
    (folder / "csv_pca.zip").write_bytes(CA_ZIP[: len(CA_ZIP) // 2])
    assert len(load_pums(["CA"], 2018, "1-Year", tmp_path, base_url=server.url())) == 10
    assert server.requests[CA] == 1


def test_modified_parquet_is_rebuilt_from_archive(server: FixtureServer, tmp_path: Path) -> None:
    parquet = fetch_ca(server, tmp_path)
    parquet.write_bytes(b"PAR1 truncated")
    server.stop()
    assert len(load_pums(["CA"], 2018, "1-Year", tmp_path, base_url=server.url())) == 10


def test_transient_errors_are_retried(server: FixtureServer, tmp_path: Path) -> None:
    server.add_faults(CA, Fault.error(500), Fault.error(429, retry_after="1"), Fault.error(503))
    fetch_ca(server, tmp_path)
    assert server.requests[CA] == 4


def test_missing_archive_names_url(server: FixtureServer, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match=r"csv_pak\.zip answered HTTP 404.*publishes this year"):
        download_pums(["AK"], 2018, "1-Year", tmp_path, base_url=server.url())
    assert list((tmp_path / "pums" / "2018" / "1-Year").glob("*.zip*")) == []


def test_offline_error_says_how_to_work_offline(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match=r"offline.*--data-dir.*bundled sample data"):
        download_pums(["CA"], 2018, "1-Year", tmp_path, base_url=closed_port_url())
    with pytest.raises(DownloadError, match=r"not cached.*--data-dir"):
        load_pums(["CA"], 2018, "1-Year", tmp_path, download=False)


def test_unparseable_csv_is_integrity_error(tmp_path: Path) -> None:
    bad = person_zip(csv="RT,SERIALNO,ST\nP,2018GQ1,06\nP,2018GQ2,06,extra,fields\n")
    with FixtureServer({CA: bad}) as server, pytest.raises(IntegrityError, match="cannot be parsed.*force=True"):
        fetch_ca(server, tmp_path)
    assert list((tmp_path / "pums" / "2018" / "1-Year").glob("*.parquet*")) == []


def test_force_downloads_again(server: FixtureServer, tmp_path: Path) -> None:
    fetch_ca(server, tmp_path)
    fetch_ca(server, tmp_path, force=True)
    assert server.requests[CA] == 2


def test_failed_conversion_leaves_no_parquet(tmp_path: Path) -> None:
    schema = pa.schema([("AGEP", pa.int8())])

    def batches() -> Iterator[pa.RecordBatch]:
        yield pa.record_batch([pa.array([1.0])], names=["AGEP"])
        raise KeyboardInterrupt  # a user pressing Ctrl-C mid-write

    with pytest.raises(KeyboardInterrupt):
        pums._write_parquet(batches(), schema, tmp_path / "psam_p06.parquet", None)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"year": 2013}, "year"),
        ({"year": date.today().year}, "year"),
        ({"year": "2018"}, "year"),
        ({"year": True}, "year"),
        ({"horizon": "1-year"}, "horizon"),
        ({"horizon": "3-Year"}, "horizon"),
        ({"states": ["CA", "XX"]}, "states"),
        ({"states": []}, "states"),
        ({"states": [6]}, "states"),
        ({"columns": "AGEP"}, "columns"),
        ({"columns": []}, "columns"),
    ],
)
def test_bad_requests_fail_before_any_io(tmp_path: Path, kwargs: dict[str, object], parameter: str) -> None:
    with pytest.raises(ConfigError) as info:
        download_pums(data_dir=tmp_path, base_url="http://127.0.0.1:9", **kwargs)  # type: ignore[arg-type]
    assert info.value.parameter == parameter
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), min_size=1, max_size=30),
    st.integers(-130, 130),
)
def test_conversion_round_trips_any_integers_in_smallest_type(values: list[int | None], small: int) -> None:
    cells = ["" if v is None else str(v) for v in values]
    csv = "ST,BIG,SMALL\n" + "".join(f"06,{c},{small}\n" for c in cells)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "csv_pca.zip"
        archive.write_bytes(person_zip(csv=csv))
        rows, _ = pums._convert(archive, Path(tmp) / "p.parquet", 6, None)
        frame = pq.read_table(Path(tmp) / "p.parquet").to_pandas()
    assert rows == len(values)
    assert [None if pd.isna(v) else int(v) for v in frame["BIG"]] == values
    numbers = [v for v in values if v is not None]
    low, high = min(numbers, default=0), max(numbers, default=0)
    expected = next(
        t for t in ("int8", "int16", "int32", "int64") if np.iinfo(t).min <= low and high <= np.iinfo(t).max
    )
    assert str(frame["BIG"].dtype) == (expected.capitalize() if None in values else expected)
    assert str(frame["SMALL"].dtype) == ("int8" if -128 <= small <= 127 else "int16")
