"""How a Runner's worker processes start: every one the same (``Launch``), whatever the process
that owns the run did meanwhile (changed its folder, say). The implementation is imported only in
the worker: a plug-in that crashes on import, or imports a heavy runtime, never does so in the
process owning the run."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine import runtimes
from engine.asking import limits, sandbox
from engine.asking.loader import UsageError, plugin_file, portable

# How a worker starts: the import path of the process that owns the run (the suite's folder first),
# set before its first import, then engine.asking.worker.main with the descriptors it inherited and its
# settings. The worker gets no PYTHONPATH (engine.asking.sandbox.environment), and needs none.
BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[3])['path']; from engine.asking.worker import main; "
        "main(sys.argv[1:])")
ROOT = str(Path(__file__).resolve().parents[2])  # the checkout: engine/asking/launch.py
SCRATCH_PREFIX = "argmin-worker-"  # an unsandboxed worker's scratch folder: argmin-worker-<owner's pid>-...


@dataclass(frozen=True)
class Launch:
    """What every worker of a Runner is started with."""

    impl: str
    path: list[str]
    cwd: str
    memory_limit: int | None
    log: str | None  # its stdout and stderr (appended, capped: engine.asking.output); None: this process's stderr
    sandbox: sandbox.Sandbox
    writable: tuple[str, ...]  # folders besides its scratch it may write (in a sandbox)
    readable: tuple[str, ...]  # folders its sandbox shows read-only besides the system's (sandbox.view)
    compile_cache: str | None  # the implementation's folder of the compile cache (one of writable), or None
    passed: tuple[str, ...]  # environment variables it gets besides the base ones (names or patterns)
    processes: int  # processes and threads it may run (engine.asking.limits)
    set_env: tuple[tuple[str, str | None], ...]  # variables set (None: cleared) in its environment


def launch_of(impl: str, memory_limit: int | None, chosen: sandbox.Sandbox, log: Path | None,
              writable: Sequence[str | Path], readable: Sequence[str | Path], compile_cache: Path | None,
              pass_env: Sequence[str], processes: int, set_env: Mapping[str, str | None]) -> Launch:
    """How every worker of ``impl`` starts (see Runner for the options). Every worker, even one
    restarted after the caller changed directory, loads the same, and sees the same: the
    interpreter, every folder on the import path, the suite, the plug-in's folder and the working
    folder (sandbox.view)."""
    if not hasattr(os, "fork"):
        raise UsageError("--isolation process needs Linux or macOS (a worker inherits its connection as a file "
                         "descriptor); use --isolation none here")
    cache = None if compile_cache is None else str(Path(compile_cache).resolve())
    folders = tuple(str(Path(folder).resolve()) for folder in writable) + ((cache,) if cache else ())
    for folder in folders:
        os.makedirs(folder, exist_ok=True)
    plugin = plugin_file(impl)
    shown = (*sys.path, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, ROOT, os.getcwd(),
             # The plug-in's folder, and the file itself where the folder cannot be shown (/tmp).
             *([] if plugin is None else [str(plugin.parent), str(plugin)]), *map(str, readable))
    found = runtimes.find(impl)
    declared = found[0].environment if found else ()
    path = list(dict.fromkeys([ROOT, *sys.path]))
    return Launch(portable(impl), path, os.getcwd(), memory_limit, None if log is None else str(Path(log).resolve()),
                  chosen, folders, tuple(str(Path(path).resolve()) for path in shown if path), cache,
                  (*declared, *pass_env), processes, tuple(set_env.items()))


@functools.cache
def sweep_scratch() -> None:
    """Remove the scratch folders of unsandboxed workers whose run was killed before it could
    (``argmin-worker-<pid of the process that owned it>-...``): once per process."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        owner = folder.name[len(SCRATCH_PREFIX):].partition("-")[0]
        if owner.isdigit() and not limits.alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)
