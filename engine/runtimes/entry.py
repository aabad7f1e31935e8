"""What the suite knows about one runtime (see the package docstring)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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
    # (the call's input list) and FEEDS (a dict by input name) are filled in by reports.replay.
    imports: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()
    # Commands a faithful run needs on PATH, each from the Debian package of the same name: nox
    # installs them (as root) or names them; the adapter records which one it used.
    commands: tuple[str, ...] = ()

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

    def create(self, option: str | None) -> Any:
        """The adapter: fn(data, *, opset, **attributes) with ``answer`` for every model form.
        Raises Unavailable when ``option`` names nothing this runtime has here."""
        where, _, name = self.adapter.partition(":")
        factory: Callable[..., Any] = getattr(importlib.import_module(where), name)
        if self.option is None:
            return factory()
        return factory(option if option is not None else self.default)
