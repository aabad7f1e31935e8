"""The compile cache: compiled models kept on disk, in the runtime's own serialised form (an
OpenVINO blob, a TVM shared library, an IREE module), so that a second process of the same run
(the census asks every undefined input again in fresh memory, not to compile it again), another
pytest-xdist worker, ``verify --rerun`` and a nightly run with the same seed load what was
compiled before instead of compiling it again.

One folder per implementation and version (``folder``: the runtime, its option, the versions of
the distributions that provide it and this machine's CPU), chosen by the process that owns the
run before any implementation code runs; the worker writes only there, and no other
implementation ever reads it. An entry is named by the SHA-256 of the model's bytes: the same
model, the same entry. Entries are written to a temporary name and renamed into place, so two
processes compiling the same model at once leave one whole entry; an entry that fails to load
is removed and compiled again. ``--compile-cache off`` bypasses it."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from engine.contract.adapters import (
    COMPILE_CACHE_ENV as ENV,  # how a worker learns its folder (engine.asking.worker.serve)
)


class CompileCache:
    """Entries of one implementation's folder, by model bytes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def key(model_bytes: bytes) -> str:
        return hashlib.sha256(model_bytes).hexdigest()

    def path(self, key: str, suffix: str) -> Path:
        return self.folder / f"{key}{suffix}"

    def find(self, key: str, suffix: str) -> Path | None:
        """The entry's file, where it exists."""
        found = self.path(key, suffix)
        return found if found.is_file() else None

    def put(self, key: str, suffix: str, write: Callable[[Path], None]) -> Path:
        """Make the entry with ``write`` (which writes the file it is given), atomically."""
        handle, temporary = tempfile.mkstemp(prefix=f".{key}-", suffix=suffix, dir=self.folder)
        os.close(handle)
        try:
            write(Path(temporary))
            os.replace(temporary, self.path(key, suffix))
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        return self.path(key, suffix)

    def drop(self, key: str, suffix: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path(key, suffix))


def from_environment() -> CompileCache | None:
    """The worker's compile cache, where the process that owns the run gave it one."""
    folder = os.environ.get(ENV)
    usable = folder and Path(folder).is_dir() and os.access(folder, os.W_OK | os.X_OK)
    return CompileCache(Path(folder)) if usable else None
