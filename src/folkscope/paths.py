"""Where folkscope keeps what it downloads, converts and caches, and the checks of the paths a user names.

Everything lives under one root so a user can see, move or delete it:
``$FOLKSCOPE_HOME`` if set, else the platform's user cache directory
(``~/.cache/folkscope`` on Linux, honouring ``$XDG_CACHE_HOME``).

Every folder or file a command is told to read or write (``--results-dir``,
``--cache-dir``, ``--output``, ``--data-dir``, a results folder to scan) is
checked here, before any data or model loads, so a file standing where a
folder belongs, a folder that cannot be written, or a folder that is not
there is one line naming the flag and the fix, never a traceback after the
work (:func:`check_writable_dir`, :func:`check_output_file`,
:func:`check_existing_dir`, :func:`check_folder_path`). The checks create
nothing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from folkscope.errors import ConfigError

__all__ = [
    "cache_home",
    "check_existing_dir",
    "check_folder_path",
    "check_output_file",
    "check_writable_dir",
    "data_home",
    "models_home",
]


def cache_home() -> Path:
    """Root folder for every cached artefact (models, survey data, results cache)."""
    env = os.environ.get("FOLKSCOPE_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("folkscope", appauthor=False))


def data_home() -> Path:
    """Default root for downloaded survey data (``--data-dir`` overrides it)."""
    return cache_home() / "data"


def models_home() -> Path:
    """Folder holding converted model weights (e.g. the default SmolLM2 model)."""
    return cache_home() / "models"


def _parameter(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_").lower()


def _named(path: str | os.PathLike[str], flag: str) -> Path:
    """``path`` as an absolute path; an empty one is refused (``Path("")`` would quietly mean the current folder)."""
    if not str(path).strip():
        raise ConfigError(f"{flag} is empty; name a folder or file", parameter=_parameter(flag), value=str(path))
    return Path(path).expanduser().absolute()


def _nearest_existing(path: Path) -> Path:
    return next(p for p in (path, *path.parents) if p.exists())


def check_folder_path(path: str | os.PathLike[str], *, flag: str) -> Path:
    """A folder that is read from or made (``--data-dir``): nothing but a folder may stand at it or on the way to it.

    Unlike :func:`check_writable_dir`, a read-only folder passes (a user's copy of a survey may well be one).

    Raises
    ------
    ConfigError
        A file stands at the path or at one of its parents.
    """
    folder = _named(path, flag)
    existing = _nearest_existing(folder)
    if not existing.is_dir():
        raise ConfigError(
            f"{flag} {folder}: {existing} is a file, not a folder; pass another {flag}",
            parameter=_parameter(flag),
            value=str(folder),
        )
    return folder


def check_writable_dir(path: str | os.PathLike[str], *, flag: str = "--results-dir", what: str = "results") -> Path:
    """Prove that ``path`` can be created and written to, before any model loads; nothing is left behind.

    The nearest existing folder on the way is probed with a temporary file
    (removed at once), so a permission or read-only problem shows now, as
    one line, instead of as a traceback after the model has loaded.

    Raises
    ------
    ConfigError
        One line naming the folder, the reason and the fix: a file stands
        where a folder is needed, or the folder is not writable.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> blocker = pathlib.Path(tempfile.mkdtemp()) / "a-file"
    >>> _ = blocker.write_text("")
    >>> check_writable_dir(blocker / "results")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: cannot write results to .../a-file/results: .../a-file is a file, not a folder; pass another --results-dir
    """
    folder = _named(path, flag)
    _check_writable(folder, f"{what} to {folder}", flag)
    return folder


def _check_writable(folder: Path, subject: str, flag: str) -> None:
    """Probe the nearest existing folder on the way to ``folder``; ``subject`` is what the message says cannot be written."""
    existing = _nearest_existing(folder)
    if not existing.is_dir():
        raise ConfigError(
            f"cannot write {subject}: {existing} is a file, not a folder; pass another {flag}",
            parameter=_parameter(flag),
            value=str(folder),
        )
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise ConfigError(
            f"cannot write {subject}: {existing} is not writable ({reason}); pass another {flag} or fix the folder's permissions",
            parameter=_parameter(flag),
            value=str(folder),
        ) from None


def check_output_file(path: str | os.PathLike[str], *, flag: str = "--output") -> Path:
    """A file a command will write (``--output x.jsonl``): not a folder, in a folder that can be made and written.

    Raises
    ------
    ConfigError
        The path is a folder (or ends in a separator), or its folder cannot be
        made or written (as :func:`check_writable_dir` says).

    Examples
    --------
    >>> check_output_file("/dev/null/x.jsonl")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: cannot write /dev/null/x.jsonl: /dev/null is a file, not a folder; pass another --output
    """
    file = _named(path, flag)
    if file.is_dir() or str(path).endswith(("/", os.sep)):
        raise ConfigError(
            f"{flag} {file} is a folder; name the file to write in it", parameter=_parameter(flag), value=str(file)
        )
    _check_writable(file.parent, str(file), flag)
    return file


def check_existing_dir(path: str | os.PathLike[str], *, flag: str, what: str) -> Path:
    """A folder a command reads (the results to scan, a reference run): it must exist and be a folder; nothing is made.

    Raises
    ------
    ConfigError
        Nothing is at the path, or a file is.
    """
    folder = _named(path, flag)
    if not folder.is_dir():
        state = "is a file" if folder.exists() else "does not exist"
        raise ConfigError(f"{flag} {folder} {state}; pass {what}", parameter=_parameter(flag), value=str(folder))
    return folder
