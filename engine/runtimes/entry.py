"""What the suite knows about one runtime (see the package docstring)."""

from __future__ import annotations

import hashlib
import importlib
import platform
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from results import cpu


def _cpu() -> str:
    """A short digest of what this machine's CPU can run (compiled code may use any of it)."""
    features = cpu.features_line(cpu.cpuinfo()) or platform.processor()
    return hashlib.sha256(features.encode()).hexdigest()[:8]


def release_key(release: str) -> tuple[int, ...]:
    """A release's numbers for ordering, trailing zeros dropped (1.16 == 1.16.0); what follows
    the numbers (a pre-release or local tag) is ignored."""
    numbers = [int(part) for part in re.match(r"[0-9.]*", release).group().split(".") if part.isdigit()]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


# Thread counts of the math libraries runtimes build on (OpenMP, MKL, OpenBLAS, Intel's OpenMP).
THREADS = ("OMP_*", "MKL_*", "OPENBLAS_*", "KMP_*")


NATIVE = "native"  # the --isa value for no cap: every variable of the runtime's cap cleared
# What a runtime's compile is paid for: a whole model (cheap, or compiled once whatever it holds),
# each node of a model (TVM, IREE, OpenVINO) or each input shape a node meets (tinygrad).
COMPILE_KEYS = ("model", "node", "shape")


@dataclass(frozen=True)
class IsaCap:
    """How a runtime's instruction set can be capped (``--isa``): the environment variables its
    library reads (the first is the one ``--isa`` sets; every one is cleared), that library's
    name, and the values it takes, upper case, the widest last (``ALL``: no cap)."""

    variables: tuple[str, ...]
    library: str
    values: tuple[str, ...]


class Unavailable(LookupError):
    """The runtime is there but the option names nothing it has; str(exc) says what it has."""


@dataclass(frozen=True)
class Runtime:
    word: str  # the --impl word (and the part before ":" when it takes an option)
    label: str  # how a report names it
    module: str  # the module the adapter imports: its import failing means "not installed"
    distributions: tuple[str, ...]  # every distribution that provides it: installed by nox, listed in the environment
    adapter: str  # "module:Class" of its adapter in engine.adapters: Class(option) compiles and runs models
    option: str | None = None  # what "word:OPTION" names ("execution provider", "device", "module"); None: none
    default: str | None = None  # the option's value when omitted (None: the option is required, if any)
    example: str | None = None  # an option value to show in usage errors
    # The standalone snippet's runtime lines: imports, then lines that set ``result`` (and
    # ``declared`` where the runtime declares an output shape) from ``model``. OPTION, INPUTS
    # (the call's input list), FEEDS (a dict by input name), OUTPUT (the index of the output to
    # check: a packed model has one per node) and PICK (the same as a subscript, empty for a
    # one-node model: for runtimes that return one output bare) are filled in by reports.replay.
    imports: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()
    # Commands a faithful run needs on PATH, each from the Debian package of the same name: nox
    # installs them (as root) or names them; the adapter records which one it used.
    commands: tuple[str, ...] = ()
    # Whether its adapter keeps compiled models in the compile cache (engine.adapters.compile_cache):
    # the process that owns the run then gives its worker a folder of its own to write them to.
    compile_cache: bool = False
    # The oldest release of its first distribution the adapter works with (``WORD@RELEASE`` picks
    # one); None where no release can be picked (backend:MODULE names a module, not a release).
    oldest: str | None = None
    # (RELEASE, REQUIREMENT): a release older than RELEASE also gets REQUIREMENT, which its own
    # metadata omits (built before numpy 2 existed: onnxruntime 1.18 does not import under it).
    older_needs: tuple[tuple[str, str], ...] = ()
    # The environment variables (fnmatch patterns) its runtime reads, passed to its worker from the
    # run's environment besides PATH, the locale and TZ (engine.asking.sandbox.environment): thread counts
    # and the runtime's own settings. Nothing else of the run's environment reaches the worker.
    environment: tuple[str, ...] = ()
    # How its instruction set can be capped (``--isa``); None: its runtime offers no such cap.
    isa_cap: IsaCap | None = None
    # What one compile of its runtime is paid for (COMPILE_KEYS): a model as a whole, each node of
    # it, or each input shape a node meets. A runtime that pays per node or per shape gets its
    # cases drawn within a schedule of a few signatures or shapes (generators.schedule).
    compile_key: str = "model"

    @property
    def option_required(self) -> bool:
        return self.option is not None and self.default is None

    @property
    def usage(self) -> str:
        """How the --impl grammar writes it: onnxruntime[:PROVIDER], tract, backend:MODULE."""
        if self.option is None:
            return self.word
        metavar = self.option.split()[-1].upper()
        return f"{self.word}:{metavar}" if self.option_required else f"{self.word}[:{metavar}]"

    def requirements(self, release: str | None) -> tuple[str, ...]:
        """What pip installs for this runtime: its distributions, all at ``release`` when one is
        named (a runtime of several distributions releases them together)."""
        if release is None:
            return self.distributions
        return (*(f"{name}=={release}" for name in self.distributions),
                *(needs for before, needs in self.older_needs if release_key(release) < release_key(before)))

    def cache_name(self, option: str | None, cap: str | None = None) -> str | None:
        """The name of this runtime's folder in the compile cache: the runtime, its option and the
        versions of its distributions (as installed here), this machine's CPU and the cap on its
        instruction set (``cap``: the value of its IsaCap variable; None for none), so that no
        other runtime, release, machine or cap ever reads what it compiled. None where it keeps
        no compiled models, or one of its distributions is not installed."""
        if not self.compile_cache:
            return None
        try:
            versions = [f"{name}-{metadata.version(name)}" for name in self.distributions]
        except metadata.PackageNotFoundError:
            return None
        parts = [self.word, option or self.default or "", *versions, platform.machine(), _cpu(),
                 f"isa-{cap}" if cap else ""]
        return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(part for part in parts if part))

    def create(self, option: str | None) -> Any:
        """The adapter: fn(data, *, opset, **attributes) with ``answer`` for every model form.
        Raises Unavailable when ``option`` names nothing this runtime has here."""
        where, _, name = self.adapter.partition(":")
        factory: Callable[..., Any] = getattr(importlib.import_module(where), name)
        if self.option is None:
            return factory()
        return factory(option if option is not None else self.default)
