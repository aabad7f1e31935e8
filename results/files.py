"""The report folder of a run, written so that nothing planted in it redirects the reports.

A run writes into a folder it makes, or into one that holds only what runs write there (their
reports, raw results, regression tests, stream, implementation log and incomplete runs set aside,
and the matrix page ``python -m reports matrix`` writes by default). Anything else there, or a symbolic link,
stops the run before the implementation loads (``prepare``): a link named report.json would have
the run write its report wherever the link points, and a file the run never wrote could be taken
for one of its own. Every file is written under a fresh temporary name (``O_CREAT | O_EXCL |
O_NOFOLLOW``, in the folder opened without following a link) and then renamed over its name, so
a link planted at that name after the check is replaced, never followed, and a reader never sees
half a file; a folder of files (the regression tests) is filled under a temporary name and renamed
into place the same way (``write_folder``)."""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

# What runs write into a report folder (results, reports.write_documents, results.stream, the
# worker's log), and the default output of ``python -m reports matrix``.
KNOWN = frozenset({"report.json", "report.html", "junit.xml", "raw.json.gz", "raw.json", "implementation.log",
                   "replays.json", "replays.log", "matrix.html"})
FOLDERS = frozenset({".stream", "regressions"})  # results.stream's records, reports.regressions' tests
ASIDE = "incomplete-"  # results.stream.set_aside's folders
_PART = ".part-"  # in the temporary names ``write`` and ``write_folder`` rename into place
_NO_LINK = getattr(os, "O_NOFOLLOW", 0)
Filled = TypeVar("Filled")


class Unsafe(ValueError):
    """A report folder the run must not write into; the message is one line naming the fix."""


def prepare(folder: Path) -> Path:
    """Make ``folder`` (and its parents), or check the one that is there: a directory, not a
    link, holding only what runs write there, none of it a link. Temporary files a killed run
    left are removed. Raises Unsafe."""
    folder = Path(folder)
    if folder.is_symlink():
        raise Unsafe(f"{folder}: the report folder is a symbolic link (to {os.readlink(folder)}); name a real folder "
                     f"with --report-dir")
    folder.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(folder):
        if entry.is_symlink():
            raise Unsafe(f"{folder}: {entry.name} is a symbolic link (to {os.readlink(entry.path)}), which no run "
                         f"makes; remove it, or choose another --report-dir")
        if _PART in entry.name and entry.is_dir():
            shutil.rmtree(entry.path)
        elif _PART in entry.name and entry.is_file():
            os.unlink(entry.path)
        elif not _ours(entry):
            raise Unsafe(f"{folder}: {entry.name} is not something a run writes there; remove it, or choose an empty "
                         f"or new --report-dir")
    return folder


def _ours(entry: os.DirEntry) -> bool:
    if entry.is_dir():
        return entry.name in FOLDERS or entry.name.startswith(ASIDE)
    return entry.name in KNOWN and entry.is_file()


def write(folder: Path, name: str, data: bytes) -> Path:
    """``data`` as the file ``folder/name``, written whole under a temporary name and renamed
    into place; the folder is opened without following a link, and so is every file in it."""
    directory = _opened(folder)
    base = Path(folder) if directory is None else Path()
    temporary, target = str(base / f".{name}{_PART}{secrets.token_hex(6)}"), str(base / name)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o644, dir_fd=directory)
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
            os.replace(temporary, target, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            os.unlink(temporary, dir_fd=directory)
            raise
    finally:
        if directory is not None:
            os.close(directory)
    return Path(folder) / name


def write_folder(folder: Path, name: str, fill: Callable[[Path], Filled]) -> Filled:
    """The folder ``folder/name`` as ``fill`` makes it: ``fill`` is given a new, empty folder of a
    temporary name, which then replaces whatever was at ``name`` (a link there is removed, never
    followed); what ``fill`` returns. A reader sees the earlier folder or the new one whole."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    staging, earlier = (Path(folder) / f".{name}{_PART}{secrets.token_hex(6)}" for _ in range(2))
    staging.mkdir()
    try:
        filled = fill(staging)
        if os.path.lexists(Path(folder) / name):
            os.rename(Path(folder) / name, earlier)
        os.rename(staging, Path(folder) / name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if earlier.is_symlink() or earlier.is_file():
        earlier.unlink()
    elif earlier.is_dir():
        shutil.rmtree(earlier)
    return filled


def _opened(folder: Path) -> int | None:
    """A descriptor of ``folder``, opened without following a link; None where the system has
    no folder descriptors (Windows: the paths are used as they are)."""
    if os.open not in os.supports_dir_fd:
        return None
    directory = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NO_LINK)
    if not stat.S_ISDIR(os.fstat(directory).st_mode):
        os.close(directory)
        raise NotADirectoryError(f"{folder} is not a folder")
    return directory
