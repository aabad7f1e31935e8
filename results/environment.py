"""The facts a report needs to be reproduced and audited: what provides the implementation (its
distribution, version and device), versions of the suite's own dependencies, the machine (its
CPU's instruction set, and the cap a runtime ran under), this suite's git commit and the spec
files' hash. No local paths (no virtualenv, no file names
beyond a plug-in's base name): a report is shared with people who do not have this machine."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import spec

from . import cpu

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("onnx", "onnxruntime", "numpy", "ml_dtypes", "hypothesis", "pytest", "jinja2")  # the suite's own


def _package(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


# Git runs with nothing a checkout's own configuration could make it run: no file system monitor
# (core.fsmonitor names a program), no hooks, no optional locks.
_GIT = ("git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "--no-optional-locks")


def _git(*args: str) -> bytes | None:
    try:
        done = subprocess.run([*_GIT, *args], cwd=REPO, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _entries(output: bytes) -> list[bytes]:
    return [entry for entry in output.split(b"\0") if entry]


# What the suite is made of: a file changed or added here changes what a certificate certifies.
# Anything else untracked in the checkout (a vendor's plug-in, a run folder) does not.
SUITE = ("spec", "generators", "engine", "suites", "results", "reports", "zoo", "noxfile.py", "pyproject.toml")


def checkout() -> dict[str, Any]:
    """This suite's git commit and whether its files differ from that commit (``git_dirty``):
    a tracked file whose content is not the committed blob (each file hashed here, so that no
    index flag or file system monitor can hide a change), a file flagged skip-worktree or
    assume-unchanged, or a file inside the suite's own packages (SUITE) that the commit does
    not hold. Called before the implementation under test loads. None where unknown: no git,
    or not a checkout."""
    commit = _git("rev-parse", "--verify", "HEAD^{commit}")
    if commit is None:
        return {"git_commit": None, "git_dirty": None}
    commit_id = commit.decode().strip()
    committed = _git("ls-tree", "-r", "-z", commit_id)
    indexed = _git("ls-files", "-v", "-z")  # "<tag> <path>": S skip-worktree, lower case assume-unchanged
    added = _git("ls-files", "-z", "--others", "--exclude-standard", "--", *SUITE)
    if committed is None or indexed is None or added is None:
        return {"git_commit": commit_id, "git_dirty": None}
    blobs = dict(_blob(entry) for entry in _entries(committed))
    dirty = (any(entry[:1] == b"S" or entry[:1].islower() or entry[2:] not in blobs for entry in _entries(indexed))
             or bool(_entries(added))
             or any(_object_id(path, mode, len(blob)) != blob for path, (mode, blob) in blobs.items()))
    return {"git_commit": commit_id, "git_dirty": dirty}


def _blob(entry: bytes) -> tuple[bytes, tuple[bytes, bytes]]:
    """``path, (mode, object id)`` of one ``git ls-tree -z`` entry ("mode type id<TAB>path")."""
    meta, path = entry.split(b"\t", 1)
    mode, _, object_id = meta.split(b" ")
    return path, (mode, object_id)


def _object_id(path: bytes, mode: bytes, width: int) -> bytes | None:
    """The git object id of the working copy of ``path`` as committed with ``mode`` (a file, or
    a symbolic link's target), in the repository's hash (SHA-1, or SHA-256 for 64-digit ids);
    None where it is missing or is no longer what it was committed as. Line endings are not
    converted: a checkout whose files git rewrote on checkout (core.autocrlf) counts as modified."""
    where = REPO / os.fsdecode(path)
    try:
        if mode == b"120000":
            content = os.fsencode(os.readlink(where))
        else:
            descriptor = os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(descriptor, "rb") as file:
                content = file.read()
    except OSError:
        return None
    digest = hashlib.sha256() if width == 64 else hashlib.sha1()  # git's own object ids
    digest.update(b"blob %d\0" % len(content))
    digest.update(content)
    return digest.hexdigest().encode()


def collect(impl_description: dict, suite: dict[str, Any], sandbox: dict[str, Any],
            isa_cap: dict[str, str] | None = None) -> dict[str, Any]:
    """The environment dict for RawRun.environment: ``impl_description`` (what provides the
    implementation, as the plug-in layer found it where the implementation loaded: module,
    distribution, version, device), ``suite`` (``suite_state()``, taken before the implementation
    loaded), ``sandbox`` (engine.asking.sandbox.Sandbox.record: where the implementation ran),
    ``isa_cap`` (engine.config.isa.recorded: the instruction-set cap its runtime ran under; None for
    none) plus everything found here: ``cpu_isa`` is the CPU's extensions (results.cpu), empty
    where they cannot be read. Never fails: what cannot be found is None (e.g. no git)."""
    info = cpu.cpuinfo()
    return {
        **impl_description,
        "sandbox": sandbox,
        "packages": {name: _package(name) for name in PACKAGES},
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "cpu": cpu.model_name(info),
        "cpu_isa": cpu.extensions(info),
        "isa_cap": isa_cap,
        "cpu_count": os.cpu_count(),
        **suite,
    }


def suite_state() -> dict[str, Any]:
    """What the suite is, for collect: its commit, whether its checkout is clean (``checkout``)
    and its spec files' digest. Taken before the implementation loads: an unsandboxed one could
    change the files afterwards."""
    return {**checkout(), "spec_sha256": spec.files_digest()}
