"""The clean-checkout check behind a certificate: a change to anything tracked, or a file added
inside the suite's own packages, makes the tree modified; a vendor's plug-in or a run folder
elsewhere in the checkout does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from results import environment


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=folder, check=True,
                   capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed checkout shaped like the suite's, which environment.checkout() then reads."""
    for name in ("engine/asking/loader.py", "reports/pages/render.py", "README.md", "noxfile.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# committed\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "suite")
    monkeypatch.setattr(environment, "REPO", tmp_path)
    return tmp_path


def test_a_committed_checkout_is_clean(checkout: Path) -> None:
    found = environment.checkout()
    assert found["git_commit"] and found["git_dirty"] is False


@pytest.mark.parametrize("outside", ["my_runtime_plugin.py", "runs/ort/report.json", "vendor/adapter/impl.py"])
def test_files_outside_the_suite_leave_it_clean(checkout: Path, outside: str) -> None:
    (checkout / outside).parent.mkdir(parents=True, exist_ok=True)
    (checkout / outside).write_text("x = 1\n")
    assert environment.checkout()["git_dirty"] is False


@pytest.mark.parametrize("change", ["edit README.md", "add engine/extra.py", "add reports/pages/templates/x.html",
                                    "add pyproject.toml"])
def test_changes_to_the_suite_make_it_modified(checkout: Path, change: str) -> None:
    name = change.split()[1]  # "edit": a tracked file; "add": a new file inside the suite
    (checkout / name).parent.mkdir(parents=True, exist_ok=True)
    (checkout / name).write_text("changed\n")
    assert environment.checkout()["git_dirty"] is True


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_hidden_from_git_status_is_still_a_modified_tree(checkout: Path, flag: str) -> None:
    """A plug-in edited a tracked file and flagged it: `git status` said nothing, the run said clean."""
    (checkout / "reports/pages/render.py").write_text("# poisoned\n")
    _git(checkout, "update-index", flag, "reports/pages/render.py")
    assert subprocess.run(["git", "status", "--porcelain"], cwd=checkout, capture_output=True, text=True).stdout == ""
    assert environment.checkout()["git_dirty"] is True


def test_a_flag_alone_is_a_modified_tree(checkout: Path) -> None:
    _git(checkout, "update-index", "--skip-worktree", "engine/asking/loader.py")
    assert environment.checkout()["git_dirty"] is True


def test_a_file_system_monitor_the_checkout_names_is_never_run(checkout: Path) -> None:
    """core.fsmonitor names a program git runs to learn what changed; it could say nothing did."""
    hook = checkout / "monitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {checkout / 'RAN'}\n")
    hook.chmod(0o755)
    _git(checkout, "config", "core.fsmonitor", str(hook))
    (checkout / "engine/asking/loader.py").write_text("changed\n")
    assert environment.checkout()["git_dirty"] is True
    assert not (checkout / "RAN").exists()
