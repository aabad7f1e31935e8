"""The facts a report needs to be reproduced and audited: what provides the implementation (its
distribution, version and device), versions of the suite's own dependencies, the machine, this
suite's git commit and the spec files' hash. No local paths (no virtualenv, no file names
beyond a plug-in's base name): a report is shared with people who do not have this machine."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import spec

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("onnx", "onnxruntime", "numpy", "ml_dtypes", "hypothesis", "pytest", "jinja2")  # the suite's own


def _package(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# What the suite is made of: a file changed or added here changes what a certificate certifies.
# Anything else untracked in the checkout (a vendor's plug-in, a run folder) does not.
SUITE = ("spec", "generators", "engine", "suites", "results", "reports", "zoo", "noxfile.py", "pyproject.toml")


def checkout() -> dict[str, Any]:
    """This suite's git commit and whether it differs from that commit: a change to a tracked
    file, or an untracked file inside the suite's own packages (SUITE). None where unknown: no
    git, or not a checkout."""
    commit = _git("rev-parse", "HEAD")
    tracked = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    added = _git("status", "--porcelain", "--untracked-files=all", "--", *SUITE) if commit else None
    dirty = None if tracked is None or added is None else bool(tracked or added)
    return {"git_commit": commit, "git_dirty": dirty}


def collect(impl_description: dict) -> dict[str, Any]:
    """The environment dict for RawRun.environment: ``impl_description`` (what provides the
    implementation, as the plug-in layer found it where the implementation loaded: module,
    distribution, version, device) plus everything found here. Never fails: what cannot be
    found is None (e.g. no git, or not a checkout)."""
    return {
        **impl_description,
        "packages": {name: _package(name) for name in PACKAGES},
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "cpu": _cpu(),
        "cpu_count": os.cpu_count(),
        **checkout(),
        "spec_sha256": spec.files_digest(),
    }
