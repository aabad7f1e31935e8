"""The worker's sandbox (engine.sandbox): what a sandboxed implementation may and may not do,
asked of a probing plug-in, and the command that sets the sandbox up."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import numpy as np
import pytest

from engine import sandbox
from engine.isolation import Runner
from tests.test_hostile import SANDBOXED

ROOT = Path(__file__).resolve().parent.parent
PROBE = "tests/impls/plugin_probe.py:probe"


def _probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str) -> tuple[list[int], int, int, int]:
    """(may write: tmp_path/mine, tmp_path/granted, the checkout), processes seen, loopback
    reached, HOME and the caches in its scratch folder, as a worker in ``mode`` finds them."""
    (tmp_path / "mine").mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    monkeypatch.setenv("ARGMIN_PROBE_WRITE", os.pathsep.join(map(str, [tmp_path / "mine", tmp_path / "granted",
                                                                      ROOT])))
    monkeypatch.setenv("ARGMIN_PROBE_PORT", str(listener.getsockname()[1]))
    with listener, Runner(PROBE, sandbox_mode=mode, writable=[tmp_path / "granted"]) as runner:
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


def test_the_command_binds_scratch_granted_folders_and_accelerators(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    device = tmp_path / "renderD128"
    device.touch()
    monkeypatch.setattr(sandbox, "ACCELERATORS", (str(tmp_path / "render*"), str(tmp_path / "absent")))
    command = sandbox.Sandbox("bubblewrap 0.11.0", program="bwrap").wrap(["python"], "/s", ["/w"], "/here", 7)
    assert command[0] == "bwrap" and command[-2:] == ["--", "python"]
    pairs = list(zip(command, command[1:], command[2:], strict=False))
    for flag in (("--ro-bind", "/", "/"), ("--bind", "/s", "/s"), ("--bind", "/w", "/w"),
                 ("--dev-bind", str(device), str(device))):
        assert flag in pairs, flag
    assert {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"} <= set(command)
    assert command[command.index("--info-fd") + 1] == "7" and command[command.index("--chdir") + 1] == "/here"
    assert sandbox.Sandbox(None, "none here").wrap(["python"], "/s", [], "/here") == ["python"]
