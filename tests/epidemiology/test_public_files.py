"""Full public survey files: download from a loopback mirror, parquet cache, the user's copy, damaged and offline files.

Every file served here is SYNTHETIC: random codes of the published columns
(plus a few columns the loaders must drop), written in the publisher's real
format (SAS transport v5 by pyreadstat, Stata by pandas, tab-delimited text,
zip archives with the published member names) and served by the loopback
server of tests/data/http_fixture.py. Nothing leaves the machine. The truths
are checked against weighted shares computed here by hand with pandas.
"""

from __future__ import annotations

import dataclasses
import doctest
import io
import socket
import tempfile
import typing
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data.http_fixture import FixtureServer  # tests/ is on sys.path (rootdir conftest)
from folkscope.cli.main import main
from folkscope.data import download, public_datasets, public_files, pums
from folkscope.data.public_datasets import PUBLIC_DATASETS, PumsDataset
from folkscope.data.public_files import PublicDataset, PublicFile
from folkscope.data.user_data import USER_DATASETS
from folkscope.epidemiology import (
    DATASETS,
    EpidemiologyConfig,
    get_task,
    list_tasks,
    load_dataset,
    task_files,
    task_truth,
)
from folkscope.errors import ConfigError, DataError, DownloadError, IntegrityError

N = 600  # synthetic respondents per dataset: every condition level of every task gets some
FILE_DATASETS = [name for name, d in PUBLIC_DATASETS.items() if isinstance(d, PublicDataset)]


# --- synthetic files in the publishers' formats ------------------------------------------------------------------


def _xpt(frame: pd.DataFrame, table: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "file.xpt"
        pyreadstat.write_xport(frame, str(path), table_name=table, file_format_version=5)
        return path.read_bytes()


def _dta(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_stata(buf, write_index=False)
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("codebook.pdf", b"%PDF-1.4 synthetic, not a data file")
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _codes(rng: np.random.Generator, codes: list[float], n: int = N) -> np.ndarray:
    return rng.choice(np.asarray(codes, dtype=float), size=n)


def _weights(rng: np.random.Generator, n: int = N) -> np.ndarray:
    return np.round(rng.lognormal(8, 1, size=n), 4)  # skewed, so weighted and unweighted shares differ


def synthetic_nhanes(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    seqn = np.arange(93703.0, 93703.0 + N)
    demo = pd.DataFrame(
        {
            "SEQN": seqn,
            "SDDSRVYR": 10.0,
            "RIAGENDR": _codes(rng, [1, 2]),
            "RIDAGEYR": _codes(rng, list(range(0, 81))),
            "RIDRETH3": _codes(rng, [1, 2, 3, 4, 6, 7]),
            "DMDEDUC2": _codes(rng, [1, 2, 3, 4, 5, 9]),
            "WTINT2YR": _weights(rng),
            "WTMEC2YR": _weights(rng),
        }
    )
    asked = demo[demo["RIDAGEYR"] >= 18]["SEQN"].to_numpy()  # SMQ is asked of adults at home (youths in the MEC)
    ever = _codes(rng, [1, 2, 7], len(asked))
    smq = pd.DataFrame(
        {"SEQN": asked, "SMQ020": ever, "SMQ040": np.where(ever == 1, _codes(rng, [1, 2, 3], len(asked)), np.nan)}
    )
    bpq = pd.DataFrame({"SEQN": demo[demo["RIDAGEYR"] >= 16]["SEQN"].to_numpy()})
    bpq["BPQ020"] = _codes(rng, [1, 2, 9], len(bpq))
    diq = pd.DataFrame({"SEQN": seqn, "DIQ010": _codes(rng, [1, 2, 3, 9]), "DIQ050": _codes(rng, [1, 2])})
    files = {
        "DEMO_J.xpt": _xpt(demo, "DEMO_J"),
        "SMQ_J.xpt": _xpt(smq, "SMQ_J"),
        "BPQ_J.xpt": _xpt(bpq, "BPQ_J"),
        "DIQ_J.xpt": _xpt(diq, "DIQ_J"),
    }
    return files, {"demo": demo, "smq": smq}


def synthetic_nhanes2021(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    seqn = np.arange(130378.0, 130378.0 + N)
    demo = pd.DataFrame(
        {
            "SEQN": seqn,
            "SDDSRVYR": 12.0,
            "RIAGENDR": _codes(rng, [1, 2]),
            "RIDAGEYR": _codes(rng, list(range(0, 81))),
            "WTINT2YR": _weights(rng),
            "WTMEC2YR": np.where(rng.random(N) < 0.05, 0.0, _weights(rng)),  # interviewed, not examined
        }
    )
    bmx = pd.DataFrame({"SEQN": seqn, "BMXBMI": np.round(rng.uniform(14, 55, N), 1)})
    bmx.loc[rng.random(N) < 0.05, "BMXBMI"] = np.nan
    bmx.loc[rng.random(N) < 0.05, "BMXBMI"] = 25.0  # on a cut: the class below, as the authors' bins
    diq = pd.DataFrame({"SEQN": seqn, "DIQ010": _codes(rng, [1, 2, 3, 7, 9])})
    adults = demo[demo["RIDAGEYR"] >= 18]["SEQN"].to_numpy()
    alq = pd.DataFrame({"SEQN": adults, "ALQ121": _codes(rng, [np.nan, *range(0, 11), 77, 99], len(adults))})
    files = {
        "DEMO_L.xpt": _xpt(demo, "DEMO_L"),
        "BMX_L.xpt": _xpt(bmx, "BMX_L"),
        "DIQ_L.xpt": _xpt(diq, "DIQ_L"),
        "ALQ_L.xpt": _xpt(alq, "ALQ_L"),
    }
    return files, {"demo": demo, "bmx": bmx, "diq": diq, "alq": alq}


def synthetic_brfss(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    frame = pd.DataFrame(
        {
            "_STATE": _codes(rng, [1, 6, 72]),
            "SEXVAR": _codes(rng, [1, 2]),
            "_AGE_G": _codes(rng, [1, 2, 3, 4, 5, 6]),
            "_EDUCAG": _codes(rng, [1, 2, 3, 4, 9]),
            "GENHLTH": _codes(rng, [1, 2, 3, 4, 5, 7, 9]),
            "_SMOKER3": _codes(rng, [1, 2, 3, 4, 9]),
            "EXERANY2": _codes(rng, [1, 2, 7]),
            "_LLCPWT": _weights(rng),
            "_STSTR": _codes(rng, [11011, 11012]),
        }
    )
    # the CDC's archive names its member with a trailing blank
    return {"LLCP2022XPT.zip": _zip({"LLCP2022.XPT ": _xpt(frame, "LLCP2022")})}, {"frame": frame}


def synthetic_brfss2023(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    n = 8 * N  # by-state tasks: every one of the 52 areas gets respondents
    states = [*range(1, 57), 66, 72, 78]
    states = [s for s in states if s not in (3, 7, 14, 21, 42, 43, 52)]  # no FIPS code, or not surveyed in 2023
    frame = pd.DataFrame(
        {
            "_STATE": _codes(rng, states, n),
            "EXERANY2": _codes(rng, [1, 2, 7, 9], n),
            "DIABETE4": _codes(rng, [1, 2, 3, 4, 7, 9], n),
            "BPHIGH6": _codes(rng, [1, 2, 3, 4, 7, 9], n),
            **{
                c: _codes(rng, [1, 2, 7, 9], n) for c in ("ASTHMA3", "TOLDHI3", "BLIND", "DEAF", "CVDINFR4", "CVDSTRK3")
            },
            "_LLCPWT": _weights(rng, n),
            "_PSU": _codes(rng, [1, 2], n),
        }
    )
    return {"LLCP2023XPT.zip": _zip({"LLCP2023.XPT ": _xpt(frame, "LLCP2023")})}, {"frame": frame}


def synthetic_gss(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    n = 4 * N  # single-year age tasks: every age 18-89 among the 2022 rows
    year = _codes(rng, [2018, 2022], n)
    frame = pd.DataFrame(
        {
            "year": year.astype("int16"),
            "id": np.arange(1, n + 1, dtype="int32"),
            "wtssall": np.where(year == 2018, _weights(rng, n), np.nan),
            "wtssps": _weights(rng, n),
            "sex": _codes(rng, [1, 2], n),
            "age": _codes(rng, list(range(18, 90)), n),
            "race": _codes(rng, [1, 2, 3], n),
            "degree": _codes(rng, [0, 1, 2, 3, 4], n),
            "income16": _codes(rng, [*range(1, 27), np.nan], n),
            "grass": _codes(rng, [1, 2, np.nan], n),
            "happy": _codes(rng, [1, 2, 3], n),
            "cappun": _codes(rng, [1, 2], n),
            "polviews": _codes(rng, [*range(1, 8), np.nan], n),
            "partyid": _codes(rng, [*range(0, 8), np.nan], n),
        }
    )
    return {"GSS_stata.zip": _zip({"GSS_stata/gss7222_r4.dta": _dta(frame)})}, {"frame": frame}


def synthetic_meps(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    frame = pd.DataFrame(
        {
            "DUPERSID": [f"246{i:07d}" for i in range(N)],
            "PANEL": _codes(rng, [26, 27]),
            "AGE22X": _codes(rng, [-1, *range(0, 86)]),
            "AGE53X": _codes(rng, [-1, *range(0, 86)]),
            "SEX": _codes(rng, [1, 2]),
            "RACEV1X": _codes(rng, [1, 2, 3, 4, 5, 6]),
            "RTHLTH53": _codes(rng, [-1, 1, 2, 3, 4, 5]),
            "INSCOV22": _codes(rng, [1, 2, 3]),
            "INSURC22": _codes(rng, [1, 2, 3, 4, 5, 6, 7, 8]),
            "POVCAT22": _codes(rng, [1, 2, 3, 4, 5]),
            "TOTEXP22": np.where(rng.random(N) < 0.2, 0, rng.integers(1, 90000, N)),
            "PERWT22F": np.where(rng.random(N) < 0.03, 0.0, _weights(rng)),
        }
    )
    return {"h243dta.zip": _zip({"h243.dta": _dta(frame)})}, {"frame": frame}


def synthetic_nsduh(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    frame = pd.DataFrame(
        {
            "QUESTID2": np.arange(10000001, 10000001 + N),
            "FILEDATE": "10/19/2023",
            "CATAG6": _codes(rng, [1, 2, 3, 4, 5, 6]),
            "AGE3": _codes(rng, list(range(1, 12))),
            "IRSEX": _codes(rng, [1, 2]),
            "NEWRACE2": _codes(rng, list(range(1, 8))),
            "IRMJRC": _codes(rng, [1, 2, 3, 9]),
            "IRALCRC": _codes(rng, [1, 2, 3, 9]),
            "IRCIGRC": _codes(rng, [1, 2, 3, 4, 9]),
            "ALCREC": _codes(rng, [1, 2, 3, 8, 9, 85, 91, 97, 98]),
            "CIGREC": _codes(rng, [1, 2, 3, 4, 8, 9, 91, 97]),
            **{c: _codes(rng, [1, 2, 85, 94, 97]) for c in ("MJEVER", "COCEVER", "HEREVER")},
            "ANALWT2_C": _weights(rng),
        }
    )
    codes = [c for c in frame if c not in ("QUESTID2", "FILEDATE", "ANALWT2_C")]
    frame[codes] = frame[codes].astype(int)
    text = frame.to_csv(sep="\t", index=False, lineterminator="\n").encode()
    return {"NSDUH-2022-DS0001-bndl-data-tsv_v2.zip": _zip({"NSDUH_2022_Tab.txt": text})}, {"frame": frame}


def _money(rng: np.random.Generator, low: float, high: float) -> np.ndarray:
    """Dollar amounts between ``low`` and ``high``, log-spread, a tenth of them exactly on round cut points."""
    spread = np.round(low + (high - low) * rng.random(N) ** 4, 2)
    cuts = np.asarray([200, 1000, 3500, 5500, 1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7, 1e8])
    return np.where(rng.random(N) < 0.1, rng.choice(cuts[(cuts > low) & (cuts < high)], N), spread)


def synthetic_scf(rng: np.random.Generator) -> tuple[dict[str, bytes], dict[str, pd.DataFrame]]:
    families = N // 5
    yy1 = np.repeat(np.arange(1, families + 1), 5)
    implicate = np.tile(np.arange(1, 6), families)
    # the Fed's Stata extract spells its variables in lower case; the codebook in upper case
    frame = pd.DataFrame(
        {
            "yy1": yy1,
            "y1": yy1 * 10 + implicate,
            "wgt": np.repeat(_weights(rng, families), 5) / 5,
            "agecl": np.repeat(_codes(rng, [1, 2, 3, 4, 5, 6], families), 5),
            "edcl": np.repeat(_codes(rng, [1, 2, 3, 4], families), 5),
            "racecl4": np.repeat(_codes(rng, [1, 2, 3, 4], families), 5),
            "housecl": _codes(rng, [1, 2]),
            "hstocks": _codes(rng, [0, 1]),
            "hdebt": _codes(rng, [0, 1]),
            "age": np.repeat(_codes(rng, list(range(18, 96)), families), 5),
            "racecl5": np.repeat(_codes(rng, [1, 2, 3, 4, 5], families), 5),
            "hhouses": _codes(rng, [0, 1]),
            # dollars spread over every class of the paper's cuts, round amounts at the cut points included
            **{c: _money(rng, 0.0, 6e4) for c in ("foodhome", "foodaway", "fooddelv")},
            "asset": _money(rng, 0.0, 3e8),
            "debt": _money(rng, 0.0, 3e7),
            "networth": _money(rng, -1e5, 3e7),
        }
    )
    return {"scfp2022s.zip": _zip({"rscfp2022.dta": _dta(frame)})}, {"frame": frame}


SYNTHETIC: dict[str, Callable[[np.random.Generator], tuple[dict[str, bytes], dict[str, pd.DataFrame]]]] = {
    "nhanes1718": synthetic_nhanes,
    "nhanes2021": synthetic_nhanes2021,
    "brfss2022": synthetic_brfss,
    "brfss2023": synthetic_brfss2023,
    "gss-cumulative": synthetic_gss,
    "meps2022": synthetic_meps,
    "nsduh2022": synthetic_nsduh,
    "scf2022": synthetic_scf,
}


def _weighted(x: pd.Series, y: pd.Series, w: pd.Series) -> np.ndarray:
    """P(y | x) weighted by w, by pandas (rows: x's sorted values, columns: y's)."""
    return pd.crosstab(x, y, values=w, aggfunc="sum", normalize="index").to_numpy(dtype=float)


def _smoking_by_sex(src: dict[str, pd.DataFrame]) -> tuple[pd.Series, pd.Series, pd.Series]:
    rows = src["demo"].merge(src["smq"], on="SEQN")
    rows = rows[rows["RIDAGEYR"] >= 20]
    status = pd.Series(
        np.where(rows["SMQ020"] == 2, 0, np.where(rows["SMQ040"] == 3, 1, np.where(rows["SMQ040"] <= 2, 2, -1))),
        index=rows.index,
    )
    rows, status = (
        rows[(status >= 0) & rows["SMQ020"].isin([1, 2])],
        status[(status >= 0) & rows["SMQ020"].isin([1, 2])],
    )
    return rows["RIAGENDR"], status, rows["WTINT2YR"]


def _insurance_by_age(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    rows = frame[frame["AGE22X"] >= 0]  # -1: out of scope
    return pd.cut(rows["AGE22X"], [0, 18, 65, 200], right=False), rows["INSCOV22"], rows["PERWT22F"]


def _by(frame: pd.DataFrame, x: str, y: str, w: str, y_codes: list[int], keep: pd.Series | None = None):
    rows = frame[frame[y].isin(y_codes) & (True if keep is None else keep)]
    return rows[x], rows[y], rows[w]


def _diabetes_by_bmi(sources: dict[str, pd.DataFrame]) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Examined adults, BMI in the authors' right-closed classes, diabetes 1 or 3 yes and 2 no, the rest left out."""
    rows = sources["demo"].merge(sources["bmx"], on="SEQN").merge(sources["diq"], on="SEQN")
    rows = rows[(rows["RIDAGEYR"] >= 18) & (rows["WTMEC2YR"] > 0) & rows["DIQ010"].isin([1, 2, 3])]
    bmi = pd.cut(rows["BMXBMI"], [-np.inf, 18.5, 25, 30, 35, 40, np.inf], labels=False)
    keep = bmi.notna()
    return bmi[keep], np.where(rows["DIQ010"][keep] == 2, 1, 0), rows["WTMEC2YR"][keep]


#: one task per dataset and its truth by hand: (x, y, weights) of the task's population
HAND: dict[str, tuple[str, Callable[[dict[str, pd.DataFrame]], tuple[pd.Series, pd.Series, pd.Series]]]] = {
    "nhanes1718": ("nhanes1718_smoking_by_sex", _smoking_by_sex),
    "brfss2022": (
        "brfss2022_general_health_by_age",
        lambda s: _by(s["frame"], "_AGE_G", "GENHLTH", "_LLCPWT", [1, 2, 3, 4, 5]),
    ),
    "nhanes2021": ("nhanes2021_diabetes_by_bmi", lambda s: _diabetes_by_bmi(s)),
    "brfss2023": (
        "brfss2023_diabetes_by_state",
        lambda s: (
            s["frame"]["_STATE"],
            np.where(s["frame"]["DIABETE4"].isin([1, 2]), 0, 1),  # yes (pregnancy only included) first, as the task
            s["frame"]["_LLCPWT"],
        ),
    ),
    "gss-cumulative": (
        "gss2022_marijuana_legal_by_degree",
        lambda s: _by(s["frame"], "degree", "grass", "wtssps", [1, 2], s["frame"]["year"] == 2022),
    ),
    "meps2022": ("meps2022_insurance_by_age", lambda s: _insurance_by_age(s["frame"])),
    "nsduh2022": (
        "nsduh2022_marijuana_recency_by_age",
        lambda s: _by(s["frame"], "CATAG6", "IRMJRC", "ANALWT2_C", [1, 2, 3, 9]),
    ),
    "scf2022": ("scf2022_home_ownership_by_age", lambda s: _by(s["frame"], "agecl", "housecl", "wgt", [1, 2])),
}


# --- fixtures ----------------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def offline_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy, no mirror from the environment, no backoff waits."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", pums.BASE_URL_ENV):
        monkeypatch.delenv(name, raising=False)
    for dataset in PUBLIC_DATASETS.values():
        if isinstance(dataset, PublicDataset):
            monkeypatch.delenv(dataset.base_url_env, raising=False)
    monkeypatch.setattr(download, "_sleep", lambda seconds: None)


def _closed_port_url() -> str:
    with FixtureServer({}) as srv:
        url = srv.url()
    return url  # the port is free again: connecting is refused


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], tuple[FixtureServer, dict[str, pd.DataFrame]]]]:
    """Serve a dataset's synthetic files at ``/<name>/<file>`` and point its mirror variable there."""
    servers: list[FixtureServer] = []

    def serve(name: str) -> tuple[FixtureServer, dict[str, pd.DataFrame]]:
        files, sources = SYNTHETIC[name](np.random.default_rng(7))
        server = FixtureServer({f"/{name}/{file}": data for file, data in files.items()}).start()
        servers.append(server)
        monkeypatch.setenv(PUBLIC_DATASETS[name].base_url_env, server.url(f"/{name}"))
        return server, sources

    yield serve
    for server in servers:
        server.stop()


def _copy(folder: Path, name: str, seed: int = 7) -> dict[str, pd.DataFrame]:
    """Write a dataset's synthetic files where the user keeps their copy; return the frames written."""
    files, sources = SYNTHETIC[name](np.random.default_rng(seed))
    target = PUBLIC_DATASETS[name].folder(folder)
    target.mkdir(parents=True)
    for file, data in files.items():
        (target / file).write_bytes(data)
    return sources


# --- the catalogue ------------------------------------------------------------------------------------------------


def test_public_names_are_exported():
    for module in (public_files, public_datasets):
        own = {
            n
            for n, v in vars(module).items()
            if getattr(v, "__module__", None) == module.__name__ and not n.startswith("_")
        }
        constants = {
            n
            for n, v in vars(module).items()
            if n.isupper() and not n.startswith("_") and getattr(typing, n, None) is not v
        }
        assert own | constants == set(module.__all__), module.__name__


def test_docstring_examples_run():
    for module in (public_files, public_datasets):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_every_public_dataset_has_a_task_file_declaring_the_weight_it_keeps():
    files = {f.dataset: f for f in task_files()}
    assert set(PUBLIC_DATASETS) == {
        "nhanes1718",
        "nhanes2021",
        "brfss2022",
        "brfss2023",
        "gss-cumulative",
        "meps2022",
        "nsduh2022",
        "scf2022",
        "acs-pums",
        "acs-pums-2023",
    }
    assert not set(PUBLIC_DATASETS) & (set(DATASETS) | set(USER_DATASETS))  # one name, one loader
    derived = {"nhanes1718": {"smoking"}, "nhanes2021": {"alcohol_weekly"}, "scf2022": {"implicate", "FOOD"}}
    for name, dataset in PUBLIC_DATASETS.items():
        task_file = files[name]
        assert task_file.weights == dataset.weight and dataset.weight in dataset.columns, name
        kept = set(dataset.columns) | derived.get(name, set())
        assert len(task_file.tasks) >= 3
        for task in task_file.tasks:
            used = {task.outcome.column, *(v.column for v in task.conditions), *task.subset}
            used |= {task.condition.column} if task.condition else set()
            assert used <= kept, (task.name, used - kept)
    names = [t.name for t in list_tasks()]
    assert len(names) == len(set(names))  # no task name collides with another file's


def test_urls_are_the_publishers_unless_a_mirror_is_named(monkeypatch):
    urls = {name: d.url(d.files[0]) for name, d in PUBLIC_DATASETS.items() if isinstance(d, PublicDataset)}
    assert urls == {
        "nhanes1718": "https://wwwn.cdc.gov/Nchs/Data/Nhanes/Public/2017/DataFiles/DEMO_J.xpt",
        "nhanes2021": "https://wwwn.cdc.gov/Nchs/Data/Nhanes/Public/2021/DataFiles/DEMO_L.xpt",
        "brfss2022": "https://www.cdc.gov/brfss/annual_data/2022/files/LLCP2022XPT.zip",
        "brfss2023": "https://www.cdc.gov/brfss/annual_data/2023/files/LLCP2023XPT.zip",
        "gss-cumulative": "https://gss.norc.org/content/dam/gss/get-the-data/documents/stata/GSS_stata.zip",
        "meps2022": "https://meps.ahrq.gov/mepsweb/data_files/pufs/h243/h243dta.zip",
        "nsduh2022": "https://www.samhsa.gov/data/system/files/media-puf-file/NSDUH-2022-DS0001-bndl-data-tsv_v2.zip",
        "scf2022": "https://www.federalreserve.gov/econres/files/scfp2022s.zip",
    }
    scf = PUBLIC_DATASETS["scf2022"]
    monkeypatch.setenv("FOLKSCOPE_SCF2022_BASE_URL", "http://mirror.example/scf/")
    assert scf.url(scf.files[0]) == "http://mirror.example/scf/scfp2022s.zip"
    assert (
        scf.url(scf.files[0], base_url="http://other.example") == "http://other.example/scfp2022s.zip"
    )  # the argument wins
    assert PUBLIC_DATASETS["gss-cumulative"].base_url_env == "FOLKSCOPE_GSS_CUMULATIVE_BASE_URL"


def test_a_file_description_is_checked_when_made():
    with pytest.raises(ConfigError, match="format must be one of xport, stata, tsv"):
        PublicFile("a.sav", "spss", ("X",))
    with pytest.raises(ConfigError, match="a zip archive needs the 'member'"):
        PublicFile("a.zip", "stata", ("X",))
    with pytest.raises(ConfigError, match="only a zip archive has one"):
        PublicFile("a.dta", "stata", ("X",), member=r"a\.dta")


# --- download, cache, the user's copy -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILE_DATASETS)
def test_download_converts_once_and_the_truth_uses_the_declared_weights(name, mirror, tmp_path, monkeypatch):
    server, sources = mirror(name)
    dataset = PUBLIC_DATASETS[name]
    frame = load_dataset(name, data_dir=tmp_path)
    assert set(dataset.columns) <= set(frame.columns)
    assert len(frame) == len(sources["demo" if name.startswith("nhanes") else "frame"])
    assert all(server.requests[f"/{name}/{f.name}"] == 1 for f in dataset.files)
    folder = tmp_path / "epidemiology" / name
    assert (folder / f"{name}.parquet").is_file() and (folder / f"{name}.parquet.json").is_file()

    task_name, by_hand = HAND[name]
    task = get_task(task_name)
    x, y, w = by_hand(sources)
    truth = task_truth(task, frame)
    # each chosen task lists its conditions and answers in the order of their codes, as crosstab sorts them
    np.testing.assert_allclose(truth.dist, _weighted(x, y, w), atol=1e-9)
    unweighted = pd.crosstab(x, y, normalize="index").to_numpy(dtype=float)
    assert np.abs(truth.dist - unweighted).max() > 0.01  # the weights matter
    for other in list_tasks(dataset=name):  # every task of the file runs on the published columns
        assert np.allclose(task_truth(other, frame).dist.sum(axis=1), 1.0)

    server.stop()  # a second load needs neither the network nor any archive
    monkeypatch.setattr(public_files, "_read", lambda *a: pytest.fail("the cache should have been read"))
    pd.testing.assert_frame_equal(load_dataset(name, data_dir=tmp_path), frame)


def test_nhanes_files_are_joined_on_seqn_and_smoking_is_derived(mirror, tmp_path):
    _, sources = mirror("nhanes1718")
    frame = load_dataset("nhanes1718", data_dir=tmp_path)
    demo, smq = sources["demo"], sources["smq"]
    assert frame["SEQN"].tolist() == demo["SEQN"].tolist()  # every participant once, in DEMO's order
    asked = frame["SEQN"].isin(smq["SEQN"])
    assert frame.loc[~asked, "SMQ020"].isna().all() and frame.loc[~asked, "smoking"].isna().all()
    row = frame[(frame["SMQ020"] == 1) & (frame["SMQ040"] == 3)].iloc[0]
    assert row["smoking"] == "former"
    assert "DIQ050" not in frame and "SDDSRVYR" not in frame  # only the kept columns


def test_scf_keeps_all_five_implicates_with_their_numbers(mirror, tmp_path):
    _, sources = mirror("scf2022")
    frame = load_dataset("scf2022", data_dir=tmp_path)
    assert list(frame.columns[:3]) == ["YY1", "Y1", "WGT"]  # the codebook's spelling, whatever the file's
    assert sorted(frame["implicate"].unique().tolist()) == [1, 2, 3, 4, 5]
    assert frame.groupby("YY1").size().eq(5).all()
    np.testing.assert_allclose(frame["WGT"].sum(), sources["frame"]["wgt"].sum())


def test_the_users_copy_is_read_without_any_download(tmp_path, monkeypatch):
    sources = _copy(tmp_path, "meps2022")
    monkeypatch.setenv("FOLKSCOPE_MEPS2022_BASE_URL", _closed_port_url())
    frame = load_dataset("meps2022", data_dir=tmp_path)
    assert frame["DUPERSID"].tolist() == sources["frame"]["DUPERSID"].tolist()
    np.testing.assert_allclose(frame["PERWT22F"], sources["frame"]["PERWT22F"])
    # a replaced copy (another release) is converted again, not served from the old cache
    folder = PUBLIC_DATASETS["meps2022"].folder(tmp_path)
    (folder / "h243dta.zip").write_bytes(_zip({"h243.dta": _dta(sources["frame"].head(100))}))
    assert len(load_dataset("meps2022", data_dir=tmp_path)) == 100


def test_file_names_match_in_any_letter_case(tmp_path, monkeypatch):
    _copy(tmp_path, "nhanes1718")
    folder = PUBLIC_DATASETS["nhanes1718"].folder(tmp_path)
    for path in folder.iterdir():  # the CDC's older pages link DEMO_J.XPT
        path.rename(path.with_name(path.stem + ".XPT"))
    monkeypatch.setenv("FOLKSCOPE_NHANES1718_BASE_URL", _closed_port_url())
    assert len(load_dataset("nhanes1718", data_dir=tmp_path)) == N


def test_load_without_download_reads_the_cache_or_says_what_is_missing(mirror, tmp_path):
    dataset = PUBLIC_DATASETS["nsduh2022"]
    with pytest.raises(
        DownloadError, match=r"nsduh2022: NSDUH-2022.*\.zip is not at .* and download=False; download http"
    ):
        dataset.load(tmp_path, download=False)
    mirror("nsduh2022")
    first = dataset.load(tmp_path)
    pd.testing.assert_frame_equal(dataset.load(tmp_path, download=False), first)


# --- damaged and offline -------------------------------------------------------------------------------------------


def test_offline_is_one_clear_download_error(tmp_path, monkeypatch):
    url = _closed_port_url()
    monkeypatch.setenv("FOLKSCOPE_BRFSS2022_BASE_URL", url)
    with pytest.raises(DownloadError) as caught:
        load_dataset("brfss2022", data_dir=tmp_path)
    message = str(caught.value)
    dest = tmp_path / "epidemiology" / "brfss2022" / "LLCP2022XPT.zip"
    assert "\n" not in message and f"{url}/LLCP2022XPT.zip" in message and f"put it at {dest}" in message
    assert (
        "https://www.cdc.gov/brfss/annual_data/annual_2022.html" in message
        and "$FOLKSCOPE_BRFSS2022_BASE_URL" in message
    )
    assert not dest.exists()


def test_offline_run_fails_in_one_line_before_any_model_loads(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOLKSCOPE_SCF2022_BASE_URL", _closed_port_url())
    argv = [
        "epidemiology",
        "run",
        "--dataset",
        "scf2022",
        "--data-dir",
        str(tmp_path),
        "--model",
        "/never/loaded",
        "--results-dir",
        str(tmp_path / "results"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could not download" in err and "scfp2022s.zip" in err


def test_a_damaged_download_is_refused_and_nothing_is_kept(tmp_path, monkeypatch):
    files, _ = synthetic_scf(np.random.default_rng(1))
    good = files["scfp2022s.zip"]
    with FixtureServer({"/scf/scfp2022s.zip": good[: len(good) // 2]}) as server:  # cut in half: not a zip
        monkeypatch.setenv("FOLKSCOPE_SCF2022_BASE_URL", server.url("/scf"))
        with pytest.raises(
            IntegrityError, match=r"scf2022: the download is damaged \(.*not a readable zip.*\); try again later"
        ):
            load_dataset("scf2022", data_dir=tmp_path)
        assert server.requests["/scf/scfp2022s.zip"] == 2  # fetched once more from scratch, then refused
    assert list(PUBLIC_DATASETS["scf2022"].folder(tmp_path).glob("scfp2022s.zip*")) == []


def test_a_damaged_copy_is_one_clear_error(tmp_path, monkeypatch):
    _copy(tmp_path, "gss-cumulative")
    archive = PUBLIC_DATASETS["gss-cumulative"].folder(tmp_path) / "GSS_stata.zip"
    data = bytearray(archive.read_bytes())
    start = data.index(b"gss7222_r4.dta") + 200  # inside the compressed member
    data[start : start + 64] = bytes(b ^ 0xFF for b in data[start : start + 64])
    archive.write_bytes(bytes(data))
    monkeypatch.setenv("FOLKSCOPE_GSS_CUMULATIVE_BASE_URL", _closed_port_url())
    with pytest.raises(
        IntegrityError, match=r"your copy .*GSS_stata\.zip is damaged .*; delete it to download it again"
    ):
        load_dataset("gss-cumulative", data_dir=tmp_path)
    archive.write_bytes(_zip({"GSS_stata/other.dta": b"x"}))
    with pytest.raises(
        IntegrityError,
        match=r"holds no file matching gss7\\d\{3\}_r\\w\+\\.dta \(it holds: codebook.pdf, GSS_stata/other.dta\)",
    ):
        load_dataset("gss-cumulative", data_dir=tmp_path)


def test_a_copy_without_a_kept_column_is_one_clear_error(tmp_path):
    frame = synthetic_brfss(np.random.default_rng(3))[1]["frame"].drop(columns="_LLCPWT")
    folder = PUBLIC_DATASETS["brfss2022"].folder(tmp_path)
    folder.mkdir(parents=True)
    (folder / "LLCP2022XPT.zip").write_bytes(_zip({"LLCP2022.XPT": _xpt(frame, "LLCP2022")}))
    with pytest.raises(
        DataError, match=r"LLCP2022XPT\.zip:LLCP2022\.XPT lacks the column\(s\) _LLCPWT; it is not the expected table"
    ):
        load_dataset("brfss2022", data_dir=tmp_path)


@settings(max_examples=40, deadline=None)
@given(body=st.binary(max_size=400), xport_header=st.booleans(), member=st.sampled_from(["none", "stata", "tsv"]))
def test_any_bytes_as_a_copy_give_a_clear_error_never_a_crash(tmp_path_factory, body, xport_header, member):
    """Fuzz the readers: whatever the copy holds, the answer is IntegrityError or DataError (or a table)."""
    root = tmp_path_factory.mktemp("fuzz")
    if member == "none":  # a bare SAS transport file (NHANES)
        name, file = "nhanes1718", "DEMO_J.xpt"
        data = (public_files._XPORT_MAGIC if xport_header else b"") + body
    else:
        name = "scf2022" if member == "stata" else "nsduh2022"
        file = PUBLIC_DATASETS[name].files[0].name
        data = _zip({"rscfp2022.dta" if member == "stata" else "NSDUH_2022_Tab.txt": body})
    folder = PUBLIC_DATASETS[name].folder(root)
    folder.mkdir(parents=True)
    (folder / file).write_bytes(data)
    with pytest.raises((IntegrityError, DataError, DownloadError)):
        PUBLIC_DATASETS[name].load(root, download=False)  # NHANES: the other files are missing, at worst


# --- ACS PUMS through the data layer, and the offline listing ------------------------------------------------------


def _pums_csv(rng: np.random.Generator) -> str:
    n = 400
    frame = pd.DataFrame(
        {
            "RT": "P",
            "SERIALNO": [f"2018HU{i:07d}" for i in range(n)],
            "SPORDER": 1,
            "ST": "06",
            "PWGTP": rng.integers(1, 300, n),
            "AGEP": rng.integers(0, 95, n),
            "SEX": rng.integers(1, 3, n),
            "SCHL": rng.integers(1, 25, n),
            "RAC1P": rng.integers(1, 10, n),
            "ESR": rng.integers(1, 7, n),
            "HICOV": rng.integers(1, 3, n),
        }
    )
    return frame.to_csv(index=False, lineterminator="\n")


def test_acs_pums_tasks_read_through_the_data_layer(tmp_path):
    default = PUBLIC_DATASETS["acs-pums"]
    assert isinstance(default, PumsDataset) and len(default.state_list()) == 51
    assert "DC" in default.state_list() and "PR" not in default.state_list()
    text = _pums_csv(np.random.default_rng(5))
    with FixtureServer({"/2018/1-Year/csv_pca.zip": _zip({"psam_p06.csv": text.encode()})}) as server:
        frame = dataclasses.replace(default, states=("CA",)).load(tmp_path, base_url=server.url())
    assert (tmp_path / "pums" / "2018" / "1-Year" / "psam_p06.parquet").is_file()  # the data layer's cache, not a copy
    source = pd.read_csv(io.StringIO(text))
    truth = task_truth(get_task("acspums2018_health_insurance_by_age"), frame)
    ages = pd.cut(source["AGEP"], [0, 19, 26, 65, 200], right=False)
    np.testing.assert_allclose(truth.dist, _weighted(ages, source["HICOV"], source["PWGTP"]), atol=1e-9)


def test_the_papers_acs_2023_tasks_read_through_the_data_layer_with_the_authors_codes(tmp_path):
    """The 2023 person files of the data layer; employer collapsed (government 3-5, self-employed 6-8, unpaid 9 left
    out) and wages cut as the authors' build does (right-closed, no wages in the lowest class): by hand."""
    rng = np.random.default_rng(11)
    n = 6000
    source = pd.DataFrame(
        {
            "RT": "P",
            "SERIALNO": [f"2023HU{i:07d}" for i in range(n)],
            "SPORDER": 1,
            "ST": "06",
            "PWGTP": rng.integers(1, 300, n),
            "AGEP": rng.integers(0, 96, n),
            "SEX": rng.integers(1, 3, n),
            "RAC1P": rng.integers(1, 10, n),
            "SCHL": rng.integers(1, 25, n),
            "ESR": rng.integers(1, 7, n),
            "COW": rng.integers(1, 10, n),
            # wages, a tenth of them exactly on a cut
            "WAGP": np.where(
                rng.random(n) < 0.1, rng.choice([12000, 25000, 50000, 200000], n), rng.integers(0, 300000, n)
            ),
        }
    )
    young = source["AGEP"] < 16
    source.loc[young, ["ESR", "COW"]] = np.nan  # asked of people 16 or over, as the Census Bureau codes them
    source.loc[source["AGEP"] < 15, "WAGP"] = np.nan
    text = source.to_csv(index=False, lineterminator="\n")
    dataset = dataclasses.replace(PUBLIC_DATASETS["acs-pums-2023"], states=("CA",))
    with FixtureServer({"/2023/1-Year/csv_pca.zip": _zip({"psam_p06.csv": text.encode()})}) as server:
        frame = dataset.load(tmp_path, base_url=server.url())
    assert (tmp_path / "pums" / "2023" / "1-Year" / "psam_p06.parquet").is_file()
    for task in list_tasks(dataset="acs-pums-2023"):
        assert np.allclose(task_truth(task, frame).dist.sum(axis=1), 1.0), task.name
    rows = source[source["COW"].between(1, 8) & ~young]
    employer = rows["COW"].map({1: 0, 2: 1, 3: 2, 4: 2, 5: 2, 6: 3, 7: 3, 8: 3})
    expected = _weighted(rows["SEX"], employer, rows["PWGTP"])
    np.testing.assert_allclose(task_truth(get_task("acs2023_employer_by_sex"), frame).dist, expected, atol=1e-9)
    rows = source[source["AGEP"] >= 15]
    race = rows["RAC1P"].map({1: 0, 2: 1, 3: 2, 4: 2, 5: 2, 6: 3, 7: 4, 8: 5, 9: 6})
    wages = pd.cut(rows["WAGP"], [-np.inf, 12000, 25000, 50000, 75000, 100000, 150000, 200000, np.inf], labels=False)
    expected = _weighted(race, wages, rows["PWGTP"])
    np.testing.assert_allclose(task_truth(get_task("acs2023_salary_by_race"), frame).dist, expected, atol=1e-9)


def test_acs_pums_offline_is_the_data_layers_download_error(tmp_path, monkeypatch):
    monkeypatch.setenv(pums.BASE_URL_ENV, _closed_port_url())
    with pytest.raises(DownloadError, match="could not download .*csv_p"):
        load_dataset("acs-pums", data_dir=tmp_path)


def test_listing_needs_no_network_and_the_default_run_stays_bundled(monkeypatch, capsys):
    def refuse(*args: object) -> None:
        raise AssertionError("listing tried to open a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    assert main(["epidemiology", "list"]) == 0
    out = capsys.readouterr().out
    assert (
        "nsduh2022: 13 tasks, weights ANALWT2_C (public files: downloaded on first use, or your copy under --data-dir)"
        in out
    )
    assert "acspums2018_employment_by_sex" in out
    assert {t.dataset for t in EpidemiologyConfig().selected()} == set(DATASETS)
    assert {t.dataset for t in EpidemiologyConfig(dataset="gss-cumulative").selected()} == {"gss-cumulative"}


def test_the_papers_gss_tasks_collapse_the_codes_as_the_authors_build_does(mirror, tmp_path):
    """Political view 1-3 / 4 / 5-7 and party 0-2 / 3 / 4-6 (7, another party, left out), income16 in the authors'
    eight classes: the truth by hand from the synthetic 2022 rows, weighted by wtssps."""
    _, sources = mirror("gss-cumulative")
    frame = load_dataset("gss-cumulative", data_dir=tmp_path)
    rows = sources["frame"][sources["frame"]["year"] == 2022]
    income = pd.cut(rows["income16"], [0, 8, 15, 18, 20, 21, 23, 25, 26], labels=False)
    view = pd.cut(rows["polviews"], [0, 3, 4, 7], labels=False)
    party = pd.cut(rows["partyid"].where(rows["partyid"] < 7), [-1, 2, 3, 6], labels=False)
    for name, y in (("gss2022_political_view_by_income", view), ("gss2022_party_by_income", party)):
        keep = income.notna() & y.notna()
        expected = _weighted(income[keep], y[keep], rows.loc[keep, "wtssps"])
        np.testing.assert_allclose(task_truth(get_task(name), frame).dist, expected, atol=1e-9)
    by_age = task_truth(get_task("gss2022_political_view_by_age"), frame)
    assert by_age.dist.shape == (72, 3)  # one condition per year of age, 89 meaning 89 or over


def test_the_papers_meps_expenditure_classes_are_the_authors_right_closed_bins(mirror, tmp_path):
    """The authors cut TOTEXP22 at 200, 1000, 1500, 5000, 10000, 30000, each class closed on the right (the task's
    'over'/'upto' classes), and count INSURC22 1, 2, 4, 5, 6, 8 as insured."""
    _, sources = mirror("meps2022")
    frame = load_dataset("meps2022", data_dir=tmp_path)
    rows = sources["frame"]
    rows = rows[rows["RACEV1X"].isin([1, 2, 3, 4, 6])]
    spent = pd.cut(rows["TOTEXP22"], [-np.inf, 200, 1000, 1500, 5000, 10000, 30000, np.inf], labels=False)
    expected = _weighted(rows["RACEV1X"], spent, rows["PERWT22F"])
    np.testing.assert_allclose(task_truth(get_task("meps2022_expenditure_by_race"), frame).dist, expected, atol=1e-9)
    insured = np.where(rows["INSURC22"].isin([3, 7]), 1, 0)
    expected = _weighted(rows["RACEV1X"], insured, rows["PERWT22F"])
    np.testing.assert_allclose(task_truth(get_task("meps2022_insured_by_race"), frame).dist, expected, atol=1e-9)


def test_the_papers_nsduh_tasks_read_code_1_as_yes_and_every_other_code_as_no(mirror, tmp_path):
    """As the authors' build: used in the past 30 days (or ever) is code 1; never, bad data, refused... are no."""
    _, sources = mirror("nsduh2022")
    frame = load_dataset("nsduh2022", data_dir=tmp_path)
    rows = sources["frame"]
    for name, column, by in (
        ("nsduh2022_alcohol_past_month_by_age", "ALCREC", "AGE3"),
        ("nsduh2022_heroin_ever_by_race", "HEREVER", "NEWRACE2"),
    ):
        expected = _weighted(rows[by], np.where(rows[column] == 1, 0, 1), rows["ANALWT2_C"])
        np.testing.assert_allclose(task_truth(get_task(name), frame).dist, expected, atol=1e-9)


def test_the_papers_scf_classes_are_closed_on_the_right_as_the_authors_cuts(mirror, tmp_path):
    """Net worth cut at 1,000 ... 10,000,000 with (a, b] classes, food as home + away + delivered: by hand with
    pandas.cut on the synthetic extract (a tenth of the amounts sit exactly on a cut point)."""
    _, sources = mirror("scf2022")
    frame = load_dataset("scf2022", data_dir=tmp_path)
    rows = sources["frame"]
    cuts = [-np.inf, 1000, 10000, 30000, 1e6, 3e6, 1e7, np.inf]
    worth = pd.cut(rows["networth"], cuts, labels=False)
    expected = _weighted(rows["racecl5"], worth, rows["wgt"])
    np.testing.assert_allclose(task_truth(get_task("scf2022_net_worth_by_race"), frame).dist, expected, atol=1e-9)
    food = pd.cut(
        rows["foodhome"] + rows["foodaway"] + rows["fooddelv"],
        [-np.inf, 3500, 5500, 7000, 8500, 10000, 15000, 30000, np.inf],
        labels=False,
    )
    expected = _weighted(rows["edcl"], food, rows["wgt"])
    np.testing.assert_allclose(
        task_truth(get_task("scf2022_food_spending_by_education"), frame).dist, expected, atol=1e-9
    )


def test_the_papers_nhanes_weekly_drinking_counts_never_drinkers_as_no(mirror, tmp_path):
    """ALQ121 1-5 (once a week or more) is yes; 0, 6-10, refused, don't know and not asked (NaN) are no."""
    _, sources = mirror("nhanes2021")
    frame = load_dataset("nhanes2021", data_dir=tmp_path)
    rows = sources["demo"].merge(sources["alq"], on="SEQN", how="left")
    rows = rows[(rows["RIDAGEYR"] >= 18) & (rows["WTMEC2YR"] > 0)]
    age = pd.cut(rows["RIDAGEYR"], [-np.inf, 30, 40, 50, 60, 70, np.inf], labels=False)
    weekly = np.where(rows["ALQ121"].isin([1, 2, 3, 4, 5]), 0, 1)
    expected = _weighted(age, weekly, rows["WTMEC2YR"])
    np.testing.assert_allclose(
        task_truth(get_task("nhanes2021_alcohol_weekly_by_age"), frame).dist, expected, atol=1e-9
    )
