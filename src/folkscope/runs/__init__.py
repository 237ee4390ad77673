"""The run folder every part writes (see ``spec/architecture.md``, layer *runs*).

:class:`RunFolder` makes a run folder appear whole or not at all: a run
writes into a staging folder beside it, which is renamed into place when
every file is written.
"""

from folkscope.runs.folder import RunFolder, RunFolderBusyError

__all__ = ["RunFolder", "RunFolderBusyError"]
