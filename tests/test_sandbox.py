"""The worker's sandbox (engine.asking.sandbox): what a sandboxed implementation may and may not do,
asked of a probing plug-in, and the command that sets the sandbox up."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import numpy as np
import pytest

from engine.asking import sandbox
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from tests.test_hostile import SANDBOXED

ROOT = Path(__file__).resolve().parent.parent
PROBE = "tests/impls/plugin_probe.py:probe"
PASSED = ["ARGMIN_PROBE_*"]  # the probe's settings reach its worker only when passed


def _probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str) -> tuple[list[int], int, int, int]:
    """(may write: tmp_path/mine, tmp_path/granted, the checkout), processes seen, loopback
    reached, HOME and the caches in its scratch folder, as a worker in ``mode`` finds them."""
    (tmp_path / "mine").mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    monkeypatch.setenv("ARGMIN_PROBE_WRITE", os.pathsep.join(map(str, [tmp_path / "mine", tmp_path / "granted",
                                                                      ROOT])))
    monkeypatch.setenv("ARGMIN_PROBE_PORT", str(listener.getsockname()[1]))
    with listener, Runner(PROBE, sandbox_mode=mode, writable=[tmp_path / "granted"], pass_env=PASSED) as runner:
        reply = runner.call(np.zeros(3, np.float32), 13, {})
    assert reply.status == "ok", reply.error
    *writes, processes, reached, homes = reply.value.tolist()
    return writes, processes, reached, homes


@SANDBOXED
def test_a_sandboxed_worker_writes_only_its_scratch_and_granted_folders(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    writes, processes, reached, homes = _probe(monkeypatch, tmp_path, "auto")
    assert writes == [0, 1, 0]  # not beside its run, yes where the caller granted it, not the suite
    assert processes <= 3  # bwrap's first process, the worker (and a thread's entry at most)
    assert reached == 0  # a network of its own: the host's loopback is out of reach
    assert homes == 1


def test_the_same_probe_unsandboxed_can_do_all_of_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The other side of the test above: the probe does tell."""
    writes, processes, reached, homes = _probe(monkeypatch, tmp_path, "off")
    assert writes == [1, 1, 1] and processes > 3 and reached == 1 and homes == 1


def test_the_command_builds_the_root_from_what_the_worker_needs(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    device = tmp_path / "renderD128"
    device.touch()
    plugin = tmp_path / "plugins"
    plugin.mkdir()
    monkeypatch.setattr(sandbox, "ACCELERATORS", (str(tmp_path / "render*"), str(tmp_path / "absent")))
    command = sandbox.Sandbox("bubblewrap 0.11.0", program="bwrap").wrap(
        ["python"], [str(plugin), str(plugin / "inner"), "/", "/tmp"], ["/w"], "/here", 1 << 20,
        {"info-fd": 7, "block-fd": 8, "seccomp": 9})
    assert command[0] == "bwrap" and command[-2:] == ["--", "python"]
    triples = list(zip(command, command[1:], command[2:], strict=False))
    for flag in (("--ro-bind", str(plugin), str(plugin)), ("--bind", "/w", "/w"), ("--ro-bind", "/usr", "/usr"),
                 ("--dev-bind", str(device), str(device)), ("--size", str(1 << 20), "--tmpfs")):
        assert flag in triples, flag
    assert ("--ro-bind", "/", "/") not in triples and ("--ro-bind", "/tmp", "/tmp") not in triples  # never the host's
    assert not any(flag[1].startswith(str(plugin / "inner")) for flag in triples)  # shown once, with its folder
    assert [command[i + 1] for i, arg in enumerate(command) if arg == "--tmpfs"] == ["/tmp", "/dev/shm"]
    assert command.index("--tmpfs") < command.index(str(plugin))  # the tmpfs first: a plug-in under /tmp shows
    assert [command[i + 1] for i, arg in enumerate(command) if arg == "--remount-ro"] == ["/dev", "/"]
    for option, fd in (("--info-fd", "7"), ("--block-fd", "8"), ("--seccomp", "9"), ("--chdir", "/here")):
        assert command[command.index(option) + 1] == fd
    assert {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"} <= set(command)
    assert sandbox.Sandbox(None, "none here").wrap(["python"], [], [], "/here", None, {}) == ["python"]


def test_the_environment_is_an_allowlist() -> None:
    outer = {"PATH": "/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "AWS_SECRET_ACCESS_KEY": "x",
             "OMP_NUM_THREADS": "2", "ORT_LOGGING": "1", "HOME": "/root", "SSH_AUTH_SOCK": "/tmp/agent"}
    assert sandbox.environment(outer, (), "/tmp") == {"PATH": "/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC",
                                                      "HOME": "/tmp", "TMPDIR": "/tmp", "XDG_CACHE_HOME": "/tmp/.cache"}
    passed = sandbox.environment(outer, ("OMP_*", "ORT_*", "AWS_SECRET_ACCESS_KEY"), "/tmp")
    assert {"OMP_NUM_THREADS", "ORT_LOGGING", "AWS_SECRET_ACCESS_KEY"} <= passed.keys()
    assert "SSH_AUTH_SOCK" not in passed and passed["HOME"] == "/tmp"


@SANDBOXED
def test_the_record_names_the_filter_the_bounds_and_the_names_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGMIN_PROBE_SECRET", "not for the report")
    with Runner(PROBE, pass_env=PASSED) as runner:
        record = runner.record()
    assert record["mechanism"] and "environment" in record["denies"]
    assert "ARGMIN_PROBE_SECRET" in record["passed_env"] and "not for the report" not in str(record)
    assert {bound["what"] for bound in record["bounds"]} == {"memory", "processes", "tmpfs", "output"}
    assert all(bound["by"] or bound["reason"] for bound in record["bounds"])  # enforced, or said why not


def _reaching_outside(folder: Path) -> str:
    """A plug-in in folder/plugin that imports a sibling module kept in folder/lib: the --impl value."""
    (folder / "lib").mkdir()
    (folder / "lib" / "helper.py").write_text(
        "import numpy\n\n\ndef argmin(data, *, opset, axis=0, keepdims=1, **rest):\n"
        "    return numpy.argmin(data, axis=axis, keepdims=bool(keepdims))\n", encoding="utf-8")
    (folder / "plugin").mkdir()
    plugin = folder / "plugin" / "mine.py"
    plugin.write_text("import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parent."
                      "parent / 'lib'))\nfrom helper import argmin  # noqa: E402\n", encoding="utf-8")
    return f"{plugin}:argmin"


@SANDBOXED
def test_a_plugin_that_reads_outside_its_folder_is_told_what_the_sandbox_shows(tmp_path: Path) -> None:
    """Sandboxed, the sibling folder is not there: the one-line error says the sandbox shows the
    plug-in's folder and names --sandbox-read, with which (as unsandboxed) the plug-in loads."""
    impl = _reaching_outside(tmp_path)
    with Runner(impl, sandbox_mode="require") as runner, pytest.raises(UsageError) as raised:
        runner.load()
    message = str(raised.value)
    assert "does not import (ModuleNotFoundError" in message and "\n" not in message
    assert f"the plug-in's folder ({tmp_path / 'plugin'})" in message and "--sandbox-read DIR" in message
    for options in ({"sandbox_mode": "require", "readable": [tmp_path / "lib"]}, {"sandbox_mode": "off"}):
        with Runner(impl, **options) as runner:
            assert runner.load()["module"] == "mine.py"
            assert runner.call(np.array([3, 1, 2], np.float32), 13, {}).value.tolist() == [1]


def test_unsandboxed_a_plugin_that_does_not_import_is_not_told_of_the_sandbox(tmp_path: Path) -> None:
    impl = _reaching_outside(tmp_path)
    (tmp_path / "lib" / "helper.py").unlink()
    with Runner(impl, sandbox_mode="off") as runner, pytest.raises(UsageError) as raised:
        runner.load()
    assert "does not import (ModuleNotFoundError" in str(raised.value) and "--sandbox-read" not in str(raised.value)
