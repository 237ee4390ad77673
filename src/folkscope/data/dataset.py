"""Task-ready survey data: population, labels, weights, groups and fixed splits.

Why one module: :class:`Dataset` and :class:`ACSDataset` are folktexts' two
dataset classes with one API (``get_train``, ``subsample``, ``filter``...); the
ACS one only adds where the rows come from, so the population, label, weight and
split rules are written once, beside both.

A :class:`Dataset` takes raw rows and a :class:`~folkscope.tasks.TaskMetadata`,
keeps the population, derives the 0/1 label and splits rows into
train / (validation) / test with a fixed seed. The split is a permutation
drawn from numpy's PCG64 generator, so the same data and seed give the same
row ids on every run and machine. Survey weights (``PWGTP``) and group
columns stay alongside the features for weighted and per-group metrics.

Datasets are immutable: :meth:`Dataset.subsample` returns a new one. The
one exception is folktexts' :meth:`Dataset.filter`, which changes the
dataset in place as it does there (and returns it, so both ways of calling
it work). :meth:`Dataset.sample_n_train_examples` draws from a generator
seeded with the dataset's seed, so successive draws differ as in folktexts
and a rerun repeats them.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from folkscope.data.labels import GivenLabel, given_label
from folkscope.errors import ConfigError, DataError, EmptyPopulationError, UnknownColumnError, UnknownTaskError
from folkscope.tasks.filters import PopulationFilter, apply_filters
from folkscope.tasks.task import TaskMetadata, get_task

log = logging.getLogger(__name__)

__all__ = ["ACSDataset", "Dataset", "Split"]

Split = Literal["train", "val", "test"]
_SPLITS: tuple[Split, ...] = ("train", "val", "test")


@dataclass(frozen=True)
class _SplitIds:
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray

    def get(self, split: str) -> np.ndarray:
        if split not in _SPLITS:
            raise ConfigError(
                f"split must be one of {', '.join(_SPLITS)}, got {split!r}", parameter="split", value=split
            )
        return getattr(self, split)


def _check_fraction(name: str, value: float) -> float:
    if not isinstance(value, (int, float)) or not 0.0 <= float(value) < 1.0:
        raise ConfigError(f"{name} must be a fraction in [0, 1), got {value!r}", parameter=name, value=value)
    return float(value)


class Dataset:
    """Rows of one task, split reproducibly.

    Parameters
    ----------
    data : pandas.DataFrame
        Raw rows; its index is used as the row id (must be unique).
    task : TaskMetadata or str
        The task (population, label, features).
    test_size, val_size : float
        Fractions of the population held out (default 10% test, no validation).
    seed : int
        Seed of the split permutation (and default seed of :meth:`subsample`).
    weight_column : str or None
        Survey weight column; ``None`` or absent means unit weights.
    provenance : dict, optional
        Where the rows came from (source, year, states...), recorded in run folders.
    subsampling : float or int, optional
        folktexts' argument: keep this part of every split (:meth:`subsample`).

    Examples
    --------
    >>> from folkscope.data import load_bundled
    >>> ds = Dataset(load_bundled("nist-national"), "NISTIncome")
    >>> X, y = ds.get_test()
    >>> X.shape[1] == len(ds.task.features), set(y.unique()) <= {0, 1}
    (True, True)
    """

    def __init__(
        self,
        data: pd.DataFrame,
        task: TaskMetadata | str,
        *,
        test_size: float = 0.1,
        val_size: float = 0.0,
        seed: int = 42,
        weight_column: str | None = "PWGTP",
        provenance: dict[str, Any] | None = None,
        subsampling: float | int | None = None,
    ) -> None:
        self.task = get_task(task)
        self.test_size = _check_fraction("test_size", test_size)
        self.val_size = _check_fraction("val_size", val_size)
        if self.test_size + self.val_size >= 1.0:
            raise ConfigError(
                f"test_size + val_size must leave rows for training, got {self.test_size} + {self.val_size}",
                parameter="test_size",
            )
        self.seed = int(seed)
        self.requested_weights = weight_column or None
        self.weight_column = weight_column if weight_column and weight_column in data.columns else None
        self.provenance = dict(provenance or {})
        self._frame = self._build_population(data)
        self._splits = self._split(len(self._frame))
        self._rng = np.random.default_rng(self.seed)  # sample_n_train_examples' draws
        if subsampling is not None:
            smaller = self.subsample(subsampling)
            self._frame, self._splits, self.provenance = smaller._frame, smaller._splits, smaller.provenance

    # -- construction --------------------------------------------------------------
    def _given_label(
        self, data: pd.DataFrame
    ) -> tuple[pd.DataFrame, GivenLabel | None, tuple[PopulationFilter, ...], list[str]]:
        """The rows, a label they bring (folktexts' or folktables' format), the filters that apply, and what to say about them.

        Rows that bring their label were written for the task, its population
        filter applied (folktables filters before it writes): the task's own
        filters on columns such rows lack (``PINCP>100`` once ``PINCP`` is a
        label, ``PWGTP>=1`` without weights) are taken as applied, and said.
        A filter the user added always applies.
        """
        task = self.task
        given = given_label(data, task)
        notes: list[str] = []
        filters = task.filters
        if given is not None:
            flipped = f", read as its complement {task.target_name}" if given.complement else ""
            rule = "" if given.source == "folktexts" else f": True where {given.rule}"
            notes.append(f"labels from column {given.column} ({given.source}' format{rule}{flipped})")
            data, restored = given.restore_blanks(data, task)
            if restored:
                notes.append(f"{restored} zeros in coded columns read as blanks (folktables writes a blank as 0)")
            try:
                own = set(get_task(task.name).filters)
            except UnknownTaskError:
                own = set()
            lacking = [f for f in filters if f in own and (f.column not in data.columns or f.column == given.column)]
            filters = tuple(f for f in filters if f not in lacking)
            if lacking:
                shown = ", ".join(f.describe() for f in lacking)
                notes.append(f"the task's filters {shown} taken as applied (the rows were written for it)")
        if self.weight_column is None and self.requested_weights is not None:
            notes.append(f"no {self.requested_weights} column, so every metric is unweighted")
        return data, given, filters, notes

    def _build_population(self, data: pd.DataFrame) -> pd.DataFrame:
        task = self.task
        data, given, filters, notes = self._given_label(data)
        target = () if given is not None else (task.target.column,)
        missing = [c for c in (*task.features, *target, *(f.column for f in filters)) if c not in data.columns]
        if missing:
            raise UnknownColumnError(
                f"task {task.name} needs column(s) {', '.join(dict.fromkeys(missing))}, which the data does not "
                f"have (it has: {', '.join(map(str, data.columns))})",
                parameter="data",
                value=missing,
            )
        if not data.index.is_unique:
            raise ConfigError("the data's index is used as row id and must be unique", parameter="data")
        filtered = [f.column for f in filters if f.column in task.column_texts]
        if filtered:  # a filter on a numeric column holding text would otherwise report a filter problem
            data = data.copy()
            for col in dict.fromkeys(filtered):
                data[col] = task.column_texts[col].checked(data[col])
        mask = apply_filters(data, filters)
        if not mask.any():
            described = ", ".join(f.describe() for f in filters) or "(none)"
            raise EmptyPopulationError(
                f"no row of {len(data)} passes the population filters of task {task.name}: {described}; "
                "loosen --use-population-filter or check the data's codes"
            )
        self.population_report = self._report_blanks(data, mask, filters)
        if notes:  # only then, so the description (and run fingerprint) of other rows is unchanged
            self.population_report["note"] = "; ".join(notes)
            log.info("data of %s: %s", task.name, self.population_report["note"])
        # the ACS's replicate weights (PWGTP1..PWGTP80) travel with the rows when the data has them
        self.replicate_columns = tuple(
            f"{self.weight_column}{k}"
            for k in range(1, 81)
            if self.weight_column and f"{self.weight_column}{k}" in data.columns
        )
        label = given.column if given is not None else None
        wanted = (*task.needed_columns, label, self.weight_column, *self.replicate_columns)
        keep = [c for c in dict.fromkeys(wanted) if c and c in data.columns]
        frame = data.loc[mask, keep].copy()
        for col in task.features:  # every value a prompt will show, checked before any model loads
            if col in task.column_texts:
                frame[col] = task.column_texts[col].checked(frame[col])
        if self.weight_column is not None:
            self._check_weights(frame[self.weight_column])
        frame[task.target_name] = given.labels(frame) if given is not None else task.labels(frame)
        frame.index.name = "row_id"
        return frame

    def _report_blanks(
        self, data: pd.DataFrame, mask: np.ndarray, filters: Sequence[PopulationFilter]
    ) -> dict[str, Any]:
        """Rows left out by the population filters, and how many of them only because a filter column is blank."""
        columns = list(dict.fromkeys(f.column for f in filters if not f.keep_blank))  # a blank passes those
        blank = data[columns].isna() if columns else pd.DataFrame(index=data.index)
        dropped = ~np.asarray(mask, dtype=bool)
        by_column = {c: int((blank[c].to_numpy() & dropped).sum()) for c in columns}
        report = {
            "rows_in": int(len(data)),
            "rows_kept": int(np.sum(mask)),
            "left_out_for_blank_filter_column": by_column,
        }
        if any(by_column.values()):
            listed = ", ".join(f"{n} blank in {c}" for c, n in by_column.items() if n)
            log.info(
                "population of %s: %d of %d rows kept; left out with a blank filter column: %s",
                self.task.name,
                report["rows_kept"],
                len(data),
                listed,
            )
        return report

    def _check_weights(self, weights: pd.Series) -> None:
        """Survey weights must be finite, non-negative numbers, not all zero: found now, not after scoring."""
        numbers = pd.to_numeric(weights, errors="coerce")
        bad = numbers.isna() | ~np.isfinite(numbers.to_numpy(dtype=float, na_value=np.nan)) | (numbers < 0)
        if bad.any():
            where = bad[bad].index[0]
            raise DataError(
                f"survey weight column {self.weight_column} has {int(bad.sum())} missing, negative or non-numeric "
                f"values, e.g. {weights.loc[where]} at row {where}; fix them or pass weight_column=None for unit weights"
            )
        if not (numbers > 0).any():
            raise DataError(
                f"survey weight column {self.weight_column} is zero in every row; fix it or pass weight_column=None"
            )

    def _split(self, n: int) -> _SplitIds:
        order = np.random.default_rng(self.seed).permutation(n)
        n_test = int(round(n * self.test_size))
        n_val = int(round(n * self.val_size))
        ids = self._frame.index.to_numpy()
        pick = lambda part: np.sort(ids[part])  # noqa: E731 - sorted ids read better in outputs
        return _SplitIds(
            test=pick(order[:n_test]), val=pick(order[n_test : n_test + n_val]), train=pick(order[n_test + n_val :])
        )

    # -- access --------------------------------------------------------------------
    @property
    def data(self) -> pd.DataFrame:
        """The whole population: features, target, label, weights and groups."""
        return self._frame

    @property
    def name(self) -> str:
        return self.task.name

    def split_ids(self, split: Split) -> np.ndarray:
        """Row ids of one split (sorted)."""
        return self._splits.get(split)

    def get_frame(self, split: Split) -> pd.DataFrame:
        """Every kept column of one split (features, label, weight, groups)."""
        return self._frame.loc[self._splits.get(split)]

    def _xy(self, split: Split) -> tuple[pd.DataFrame, pd.Series]:
        frame = self.get_frame(split)
        return frame[list(self.task.features)], frame[self.task.target_name]

    def get_train(self) -> tuple[pd.DataFrame, pd.Series]:
        """Features and labels of the training split."""
        return self._xy("train")

    def get_val(self) -> tuple[pd.DataFrame, pd.Series]:
        """Features and labels of the validation split (empty when ``val_size=0``)."""
        return self._xy("val")

    def get_test(self) -> tuple[pd.DataFrame, pd.Series]:
        """Features and labels of the test split."""
        return self._xy("test")

    def weights(self, split: Split) -> np.ndarray:
        """Survey weights of a split (ones when the data has no weight column)."""
        ids = self._splits.get(split)
        if self.weight_column is None:
            return np.ones(len(ids))
        return self._frame.loc[ids, self.weight_column].to_numpy(dtype=float)

    def replicate_weights(self, split: Split) -> np.ndarray | None:
        """The replicate weights of a split, shape (n_rows, R), or None when the data has none.

        Only a full set (all 80 ACS replicates) counts: a partial set would
        give a wrong variance coefficient.
        """
        if len(self.replicate_columns) != 80:
            return None
        return self._frame.loc[self._splits.get(split), list(self.replicate_columns)].to_numpy(dtype=float)

    def __getitem__(self, key: int | slice | Sequence[int]) -> tuple[Any, Any]:
        """Positional rows of the training split, as ``(X, y)`` (``clf.fit(*ds[0:100])``); one row for an integer."""
        X, y = self.get_train()
        return X.iloc[key], y.iloc[key]

    def __iter__(self) -> Iterator[tuple[pd.Series, Any]]:
        """The training rows one by one, as ``(features, label)`` (folktexts' iteration)."""
        X, y = self.get_train()
        for i in range(len(X)):
            yield X.iloc[i], y.iloc[i]

    # -- folktexts' accessors ------------------------------------------------------
    @property
    def train_size(self) -> float:
        """Share of the population in the training split, before any subsampling."""
        return 1.0 - self.test_size - self.val_size

    @property
    def subsampling(self) -> float | int | None:
        """The part of every split kept by :meth:`subsample` (None: all rows)."""
        return (self.provenance.get("subsample") or {}).get("size")

    def get_features_data(self) -> pd.DataFrame:
        """The features of every row of the population, in the task's order."""
        return self._frame[list(self.task.features)]

    def get_target_data(self) -> pd.Series:
        """The 0/1 label of every row of the population."""
        return self._frame[self.task.target_name]

    def get_sensitive_attribute_data(self) -> pd.Series | None:
        """The task's first group column (folktexts' ``sensitive_attribute``: RAC1P for the ACS tasks), or None."""
        groups = [c for c in self.task.sensitive_attributes if c in self._frame.columns]
        return self._frame[groups[0]] if groups else None

    def get_data_split(self, split: Split) -> tuple[pd.DataFrame, pd.Series]:
        """Features and labels of ``"train"``, ``"val"`` or ``"test"``."""
        self._splits.get(split)  # one clear line for another name
        return self._xy(split)

    def filter(self, population_feature_values: dict[str, Any]) -> Dataset:
        """Keep the rows whose columns equal the given values, in every split, **in place** (as folktexts); returns self.

        Raises
        ------
        UnknownColumnError
            A column the dataset does not hold.
        EmptyPopulationError
            No row is left.
        """
        if not isinstance(population_feature_values, dict):
            raise ConfigError(
                f"population filter must be a dict of column -> value, got {type(population_feature_values).__name__}",
                parameter="population_filter",
                value=population_feature_values,
            )
        missing = [c for c in population_feature_values if c not in self._frame.columns]
        if missing:
            raise UnknownColumnError(
                f"cannot filter on {', '.join(map(str, missing))}: not a column of this dataset "
                f"({', '.join(map(str, self._frame.columns))})",
                parameter="population_filter",
                value=missing,
            )
        keep = np.ones(len(self._frame), dtype=bool)
        for column, value in population_feature_values.items():
            keep &= (self._frame[column] == value).to_numpy()
        if not keep.any():
            shown = ", ".join(f"{k}={v}" for k, v in population_feature_values.items())
            raise EmptyPopulationError(
                f"no row of {len(self._frame)} has {shown}; check the values (codes, not labels)"
            )
        kept = self._frame.index[keep]
        self._frame = self._frame.loc[kept]
        self._splits = _SplitIds(**{s: np.intersect1d(self._splits.get(s), kept.to_numpy()) for s in _SPLITS})
        self.provenance = {**self.provenance, "filter": {str(k): v for k, v in population_feature_values.items()}}
        return self

    def sample_n_train_examples(
        self, n: int, reuse_examples: bool = False, composition: str | Sequence[int] = "random"
    ) -> tuple[pd.DataFrame, pd.Series]:
        """``n`` training rows as ``(X, y)``, e.g. few-shot examples (folktexts' method).

        Parameters
        ----------
        n : int
        reuse_examples : bool, default False
            The first rows of the training split in a seeded random order (the
            same rows at every call), instead of a new draw.
        composition : "random", "balanced" or per-class counts
            ``"balanced"``: equal counts per label (the remainder to the lowest
            labels); counts such as ``(2, 2)`` in label order, summing to ``n``.
            The rows of a composed draw are shuffled together.

        Raises
        ------
        ConfigError
            A bad ``n`` or ``composition``.
        DataError
            Fewer training rows (of a label) than asked for.
        """
        from folkscope.data.sampling import sample_rows

        X, y = self.get_train()
        order = np.random.default_rng(self.seed).permutation(len(X))  # the "first rows" of a random order
        picked = sample_rows(y.to_numpy(), n, order=order, reuse=reuse_examples, composition=composition, rng=self._rng)
        return X.iloc[picked], y.iloc[picked]

    def __len__(self) -> int:
        return len(self._frame)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{s}={len(self._splits.get(s))}" for s in _SPLITS)
        return f"{type(self).__name__}(task={self.task.name!r}, rows={len(self)}, {sizes}, seed={self.seed})"

    # -- derived datasets ----------------------------------------------------------
    def subsample(self, size: float | int, *, seed: int | None = None) -> Dataset:
        """A new dataset keeping a random part of every split.

        Parameters
        ----------
        size : float or int
            A fraction in (0, 1] of each split, or an integer: at most that many
            rows of each split.
        seed : int, optional
            Defaults to the dataset's seed; the same seed keeps the same ids.
        """
        is_fraction = isinstance(size, float) and 0.0 < size <= 1.0
        is_count = isinstance(size, (int, np.integer)) and not isinstance(size, bool) and size >= 1
        if not (is_fraction or is_count):
            raise ConfigError(
                f"subsample size must be a fraction in (0, 1] or a positive row count, got {size!r}",
                parameter="subsampling",
                value=size,
            )
        rng = np.random.default_rng(self.seed if seed is None else seed)
        parts = {}
        for split in _SPLITS:
            ids = self._splits.get(split)
            k = int(round(len(ids) * size)) if is_fraction else min(int(size), len(ids))
            if len(ids) and k == 0:
                k = 1  # keep every non-empty split non-empty
            parts[split] = np.sort(rng.choice(ids, size=k, replace=False)) if len(ids) else ids
        splits = _SplitIds(**parts)
        keep = np.sort(np.concatenate([splits.train, splits.val, splits.test]))
        # same task, sizes and seed; only the rows and their split ids change
        smaller = copy.copy(self)
        smaller._frame, smaller._splits = self._frame.loc[keep], splits
        smaller._rng = np.random.default_rng(self.seed if seed is None else seed)  # its own draws, not the parent's
        smaller.provenance = {
            **self.provenance,
            "subsample": {"size": size, "seed": self.seed if seed is None else seed},
        }
        return smaller

    def describe(self) -> dict[str, Any]:
        """Sizes, label prevalence and provenance, for run configs and reports."""
        out: dict[str, Any] = {"task": self.task.name, "rows": len(self), "seed": self.seed, **self.provenance}
        out["population"] = self.population_report
        for split in _SPLITS:
            ids = self._splits.get(split)
            labels = self._frame.loc[ids, self.task.target_name]
            out[f"{split}_rows"] = int(len(ids))
            out[f"{split}_prevalence"] = float(labels.mean()) if len(ids) else None
        return out


class ACSDataset(Dataset):
    """A :class:`Dataset` whose rows come from the ACS: Census PUMS downloads or the bundled excerpt."""

    @classmethod
    def make_from_task(
        cls,
        task: TaskMetadata | str,
        *,
        cache_dir: str | Path | None = None,
        survey_year: int | None = None,
        horizon: str | None = None,
        states: Sequence[str] | None = None,
        excerpt: str = "nist-national",
        data_file: str | Path | None = None,
        seed: int = 42,
        test_size: float = 0.1,
        val_size: float = 0.0,
        subsampling: float | int | None = None,
        download: bool = True,
        replicate_weights: bool = False,
    ) -> ACSDataset:
        """Load the rows a task needs and build its dataset.

        ``pums`` tasks (the five folktables tasks, and custom ones) read the
        Census PUMS files for ``survey_year`` (default: the task's year, 2018),
        ``horizon`` (default ``"1-Year"``) and ``states`` (default: all),
        downloading them once into ``cache_dir`` (``--data-dir``; default
        ``$FOLKSCOPE_HOME/data``). ``nist`` tasks read the bundled 2019 excerpt
        ``excerpt`` and work offline. ``data_file`` (CSV or parquet) replaces
        either source with the user's own rows; its SHA-256 is recorded.
        ``replicate_weights=True`` also reads the 80 replicate weights of a
        PUMS download (a data file's are kept whenever it has them), for
        survey standard errors.

        Raises
        ------
        ConfigError
            ``states``, ``survey_year`` or ``horizon`` with a source they do
            not apply to (the bundled excerpt, or a data file).

        Examples
        --------
        >>> ds = ACSDataset.make_from_task("NISTIncome", subsampling=0.1)
        >>> ds.task.name, ds.provenance["source"]
        ('NISTIncome', 'nist-national')
        """
        task_obj = get_task(task)
        pums_options = {"states": states, "year": survey_year, "horizon": horizon}
        given = [name for name, value in pums_options.items() if value is not None]
        if given and (data_file is not None or task_obj.source == "nist"):
            source = (
                f"--data-file {data_file}" if data_file is not None else f"task {task_obj.name} (bundled NIST excerpt)"
            )
            raise ConfigError(
                f"--{given[0]} selects Census PUMS files, which {source} does not read; drop it",
                parameter=given[0],
                value=pums_options[given[0]],
            )
        if data_file is not None:
            from folkscope.data.files import file_provenance, read_rows

            data = read_rows(data_file)
            provenance: dict[str, Any] = file_provenance(data_file)
        elif task_obj.source == "nist":
            from folkscope.data.bundled import BUNDLED, load_bundled

            data = load_bundled(excerpt)
            provenance = {"source": excerpt, "survey_year": BUNDLED[excerpt][1]}
        else:
            from folkscope.data.pums import load_pums

            year = survey_year or task_obj.survey_year or 2018
            horizon = horizon or "1-Year"
            replicates = [f"PWGTP{k}" for k in range(1, 81)] if replicate_weights else []
            columns = list(dict.fromkeys((*task_obj.needed_columns, "PWGTP", *replicates)))
            data = load_pums(
                states=states, year=year, horizon=horizon, data_dir=cache_dir, columns=columns, download=download
            )
            data.index = pd.RangeIndex(len(data), name="row_id")
            provenance = {
                "source": "census-pums",
                "survey_year": year,
                "horizon": horizon,
                "states": list(states) if states else "all",
            }
        dataset = cls(data, task_obj, test_size=test_size, val_size=val_size, seed=seed, provenance=provenance)
        return dataset.subsample(subsampling, seed=seed) if subsampling is not None else dataset  # type: ignore[return-value]
