"""Every exception folkscope raises on purpose, in one place.

The tree::

    FolkscopeError                      base of all of them
    ├── ConfigError(ValueError)         a parameter, flag or option combination is invalid
    │   ├── UnknownTaskError(KeyError)  no task of that name
    │   ├── UnknownColumnError(KeyError) a column the data or task does not have
    │   └── FilterSyntaxError           a population filter / feature subset is malformed
    ├── DataError(ValueError)           data cannot be used as asked
    │   ├── EmptyPopulationError        no row is left after filtering
    │   └── TargetError                 a target is non-binary and no threshold was given
    ├── DownloadError(OSError)          a download failed after every retry
    │   └── IntegrityError              a downloaded file is truncated or corrupt
    ├── ModelNotFoundError(OSError)     a model handle resolves to nothing loadable
    ├── BackendError(RuntimeError)      a backend or the result cache failed beyond recovery
    └── MissingDependencyError(ImportError)  an optional extra is not installed

Each subclass also subclasses the builtin it refines, so callers that already
catch ``ValueError`` or ``OSError`` keep working. Messages name the parameter,
the value, what is allowed and the fix; the CLI prints them on one line.

Warnings: :class:`UndefinedMetricWarning` is emitted (never raised) by metrics
whose value is undefined for the given input (they return NaN);
:class:`CaveatWarning` carries a finished run's caveats (scores that collapse,
answers that could not be read, groups too small: :mod:`folkscope.runs.caveats`)
to a Python user, who would otherwise see only the numbers.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "CaveatWarning",
    "ConfigError",
    "DataError",
    "DownloadError",
    "EmptyPopulationError",
    "FilterSyntaxError",
    "FolkscopeError",
    "IntegrityError",
    "MissingDependencyError",
    "ModelNotFoundError",
    "TargetError",
    "UndefinedMetricWarning",
    "UnknownColumnError",
    "UnknownTaskError",
]


class FolkscopeError(Exception):
    """Base class of every error folkscope raises deliberately.

    Its message is always one line (the CLI prints it as one): a line break
    that came in with a user's value (a column name, a filter, a path) is
    shown escaped, never obeyed. The builtin ``KeyError`` would quote the
    whole message; this reads it as written.
    """

    def __str__(self) -> str:
        text = str(self.args[0]) if len(self.args) == 1 else super().__str__()
        return text.replace("\r", "\\r").replace("\n", "\\n")


class ConfigError(FolkscopeError, ValueError):
    """A parameter, CLI flag or combination of options is invalid.

    Parameters
    ----------
    message : str
        What is wrong and how to fix it.
    parameter : str, optional
        The name of the offending parameter or flag.
    value : object, optional
        The value that was given.
    """

    def __init__(self, message: str, *, parameter: str | None = None, value: object = None) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.value = value


class UnknownTaskError(ConfigError, KeyError):
    """No task is registered under the requested name."""


class UnknownColumnError(ConfigError, KeyError):
    """A column was requested that the data, codebook or task does not have."""


class FilterSyntaxError(ConfigError):
    """A population filter or feature-subset string cannot be parsed."""


class DataError(FolkscopeError, ValueError):
    """The data cannot be used the way it was asked for."""


class EmptyPopulationError(DataError):
    """No row is left after applying the population filters."""


class TargetError(DataError):
    """A target column is not binary and no threshold turns it into one."""


class DownloadError(FolkscopeError, OSError):
    """A download failed after every retry, or the source is unreachable."""


class IntegrityError(DownloadError):
    """A downloaded or cached file is truncated or corrupt."""


class ModelNotFoundError(FolkscopeError, OSError):
    """A model handle does not resolve to weights that can be loaded."""


class BackendError(FolkscopeError, RuntimeError):
    """A backend or the engine's result cache failed in a way no retry or smaller batch fixes."""


class MissingDependencyError(FolkscopeError, ImportError):
    """An optional dependency is not installed; the message names the pip extra."""


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for its input (e.g. AUC of one class) and returned NaN."""


class CaveatWarning(UserWarning):
    """A finished run's numbers carry a caveat: they may not mean what they seem (see :mod:`folkscope.runs.caveats`)."""
