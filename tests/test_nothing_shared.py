"""What a worker shares with the run that owns it, and what a run must count: each test is one
attack that once forged or lost a verdict (tests/impls/plugin_shared.py: plug-ins that are wrong
on every large input, so a run that loses their records reads CONFORMANT), now refused, or a
run that lost tests, now said to be incomplete. Each attack is also shown to work where the
defence is taken away, so that the test can fail."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine.asking import arena, launch, limits, output, sandbox
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError, check
from reports.folders.verify import verify
from results import RawRun, RunInfo, load, save
from results.records import TestEnd, lost_tests, missing_census
from tests.test_hostile import SANDBOXED
from tests.test_verify import CLEAN, _report

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT / "tests" / "impls" / "plugin_shared.py"
LARGE = np.zeros(100_000, np.uint8)  # 100 KB: through the shared arena
SMALL = np.zeros(10, np.uint8)
CGROUP = pytest.mark.skipif(limits.hierarchy()[0] is None,
                            reason=f"no control group here: {limits.hierarchy()[1]} (the certificate says so)")


def _front_door(report_dir: Path, impl: str, *extra: str, **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--versions", "13", "--dtypes", "float",
                           "--profile", "quick", "--seed", "1", "--report-dir", str(report_dir), *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, **environment})


# --- 1. the memory inputs travel through ------------------------------------------------------

def test_the_arena_cannot_be_resized_and_the_owner_lives_on(tmp_path: Path) -> None:
    """The plug-in truncated the shared-memory file it had inherited: the owner died of SIGBUS on
    its next write of a large input. The arena is a sealed memfd: the truncation is refused."""
    log = tmp_path / "implementation.log"
    with Runner(f"{SHARED}:truncates_what_it_shares", log=log) as runner:
        for data in (LARGE, SMALL, LARGE, LARGE):
            reply = runner.call(data, 13, {})
            assert reply.status == "ok", reply.error
        assert reply.value.tolist() == [1]  # its wrong answer to a large input, judged
    assert "refused: [Errno 1] Operation not permitted" in log.read_text()


def test_an_unsealed_arena_is_what_the_attack_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side: without the seals, the same plug-in cuts the arena to nothing."""
    monkeypatch.setattr(arena, "_seal", lambda descriptor: None)
    unsealed = arena.Arena()
    try:
        copy = os.dup(unsealed.descriptor)
        os.ftruncate(copy, 0)  # what the plug-in does, from the worker's side
        assert os.fstat(copy).st_size == 0
        os.close(copy)
    finally:
        unsealed.close()
    monkeypatch.undo()
    sealed = arena.Arena()
    try:
        with pytest.raises(PermissionError):
            os.ftruncate(sealed.descriptor, 0)
    finally:
        sealed.close()


@pytest.mark.parametrize("spread", [[], ["-n", "0"]], ids=["every-core", "one-process"])
def test_a_run_of_the_truncating_plugin_is_non_conformant(tmp_path: Path, spread: list[str]) -> None:
    """It got exit 0 and CONFORMANT under pytest-xdist ("node down"), and exit 135 with no report
    in one process."""
    done = _front_door(tmp_path, f"{SHARED}:truncates_what_it_shares", *spread)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "node down" not in done.stdout + done.stderr and "ArgMin-13: NON-CONFORMANT" in done.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["run"]["complete"] and report["run"]["lost"] == []


# --- 2. a test process killed from outside ----------------------------------------------------

def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the test processes through /proc")
def test_a_test_process_killed_mid_run_makes_the_run_incomplete(tmp_path: Path) -> None:
    """One pytest-xdist test process SIGKILLed, as the out-of-memory killer does: the run ended
    "complete" with the tests it held lost. Now they are named, and the exit status is 2."""
    process = subprocess.Popen([sys.executable, "-m", "suites", "--impl", "tests/impls/plugin_shared.py:slow",
                                "--versions", "13", "--dtypes", "float,int32", "--profile", "quick", "--seed", "1",
                                "-n", "2", "--report-dir", str(tmp_path)], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log, deadline = tmp_path / "implementation.log", time.monotonic() + 120
    while time.monotonic() < deadline and (not log.exists() or log.read_text().count("called") < 40):
        time.sleep(0.1)  # until the test processes are well into their tests
    xdist = [pid for pid in _children(process.pid) if b"exec(eval" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert xdist, "no test process found"
    # Killed the moment a call begins (each takes 20 ms), the test process that asked it is mid-test:
    # killed between two tests, one would have lost nothing, and the run would rightly be complete.
    size = log.stat().st_size
    while time.monotonic() < deadline and log.stat().st_size == size:
        time.sleep(0.001)
    for pid in xdist:
        os.kill(pid, signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 2, stdout[-3000:] + stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    lost = report["run"]["lost"]
    assert lost and not report["run"]["complete"] and "incomplete" in report["certificate"]["reasons"]
    assert f"LOST TEST (no results reached the run): {lost[0]}" in stdout
    assert set(lost) <= set(report["run"]["planned"])


def test_lost_tests_are_those_without_their_end_mark_or_records() -> None:
    info = RunInfo("x", [13], None, "quick", 1, "2026-12-05T00:00:00+00:00", planned=["a:1", "b:2", "c:3"])
    run = load_like(info, ends=[TestEnd("a:1", 0, 0), TestEnd("b:2", 0, 2)])
    assert lost_tests(run) == ["c:3"] and missing_census(run) == 2
    unplanned = load_like(RunInfo("x", [13], None, "quick", 1, "2026-12-05T00:00:00+00:00"))
    assert lost_tests(unplanned) == [] and missing_census(unplanned) == 0


def load_like(info: RunInfo, ends: list[TestEnd] | None = None) -> RawRun:
    return RawRun(info, {}, [], [], ends or [])


def test_verify_fails_a_report_that_lost_a_test(tmp_path: Path) -> None:
    """A certify run that judged a fraction of its cases passed verify; a test missing from the
    raw results now fails its plan check, and so does a plan cut short."""
    folder = _report(tmp_path / "run", "quick", seed="5")
    assert {c.name: c for c in verify(folder, here=CLEAN)}["plan"].ok
    raw = load(folder)
    gone = raw.info.planned[0]
    save(RawRun(raw.info, raw.environment, [r for r in raw.results if r.test_key != gone], raw.census, raw.ends),
         folder)
    plan = {c.name: c for c in verify(folder, here=CLEAN)}["plan"]
    assert not plan.ok and gone in plan.message
    raw.info.planned = raw.info.planned[1:]
    save(raw, folder)
    plan = {c.name: c for c in verify(folder, here=CLEAN)}["plan"]
    assert not plan.ok and "it was not the whole run" in plan.message


# --- 3. host services through Unix sockets ------------------------------------------------------

@SANDBOXED
def test_no_host_socket_can_be_reached(tmp_path: Path) -> None:
    """A socket under the host's /tmp, and one beside the plug-in (a folder the sandbox shows):
    the first has no path in the sandbox, the second cannot be connected to (seccomp). Unsandboxed,
    the same plug-in reaches both."""
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    shutil.copy(SHARED, plugin / "shared.py")
    for mode, reached in (("auto", 0), ("off", 2)):
        listeners = [socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)]
        paths = [Path(f"/tmp/argmin-test-{os.getpid()}-{mode}.sock"), plugin / "beside.sock"]
        for listener, path in zip(listeners, paths, strict=True):
            path.unlink(missing_ok=True)
            listener.bind(str(path))
            listener.listen()
            listener.settimeout(0.5)
        log = tmp_path / f"{mode}.log"
        with Runner(f"{plugin / 'shared.py'}:connects_to_host_sockets", sandbox_mode=mode, log=log) as runner:
            assert runner.call(SMALL, 13, {}).status == "ok"
        accepted = 0
        for listener, path in zip(listeners, paths, strict=True):
            try:
                listener.accept()[0].close()
                accepted += 1
            except OSError:
                pass
            listener.close()
            path.unlink()
        assert accepted == reached, log.read_text()
    assert "making a Unix socket refused" in (tmp_path / "auto.log").read_text()


# --- 4. output without a bound ----------------------------------------------------------------

def test_output_is_a_capped_pipe(tmp_path: Path) -> None:
    """200 MiB of output went into implementation.log on the host's disk, which the plug-in then
    reopened and opened to everyone. Now the worker holds a pipe: the log keeps LOG_CAP, says
    where it cut, stays 0644, and the run is not slowed."""
    log = tmp_path / "implementation.log"
    start = time.monotonic()
    with Runner(f"{SHARED}:floods_its_output", log=log) as runner:
        assert runner.call(SMALL, 13, {}).status == "ok"
        assert runner.call(SMALL, 13, {}).status == "ok"
    assert time.monotonic() - start < 60
    text = log.read_bytes()
    assert output.LOG_CAP <= len(text) <= output.LOG_CAP + (64 << 10)
    assert b"output was cut here, at 8 MiB" in text and b"reopened\n" not in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o644


# --- 5. the owner's environment -----------------------------------------------------------------

def test_a_credential_in_the_environment_does_not_reach_the_worker(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGMIN_TEST_SECRET", "hunter2")
    log = tmp_path / "implementation.log"
    with Runner(f"{SHARED}:leaks_the_environment", log=log) as runner:
        reply = runner.call(SMALL, 13, {})
    assert reply.status == "ok" and "hunter2" not in log.read_text()
    with Runner(f"{SHARED}:leaks_the_environment", pass_env=["ARGMIN_TEST_SECRET"]) as runner:
        passed = runner.call(SMALL, 13, {})  # what --pass-env does: the test can tell
    assert passed.status == "raised" and "hunter2" in passed.error


# --- 6. memory and processes beyond the limits -------------------------------------------------

@CGROUP
@SANDBOXED
def test_tmpfs_beyond_the_memory_limit_is_out_of_memory(tmp_path: Path) -> None:
    """1 GiB into /dev/shm (a tmpfs of half the machine) and the scratch folder under a 300 MiB
    limit: now the kernel charges both to the worker's control group, and ends it at the limit."""
    with Runner(f"{SHARED}:fills_its_tmpfs", memory_limit=300 << 20, log=tmp_path / "log") as runner:
        reply = runner.call(SMALL, 13, {})
    assert reply.status == "crash" and reply.error.startswith("out of memory: the kernel ended"), reply.error


@CGROUP
def test_a_fork_loop_stops_at_the_process_limit(tmp_path: Path) -> None:
    """150 forks succeeded, with no bound; now the group refuses them at the limit, and the call is a crash."""
    with Runner(f"{SHARED}:forks_a_crowd", processes=64, log=tmp_path / "log") as runner:
        reply = runner.call(SMALL, 13, {})
    assert reply.status == "crash" and reply.error.startswith("out of processes"), reply.error
    assert "fork" in (tmp_path / "log").read_text() and "refused" in (tmp_path / "log").read_text()


def test_every_bound_says_how_it_is_enforced() -> None:
    with Runner(f"{SHARED}:slow") as runner:
        bounds = {bound["what"]: bound for bound in runner.record()["bounds"]}
    expected = limits.hierarchy()[0]
    assert bounds["memory"]["by"] == (expected.mechanism if expected else "watch")
    assert bounds["processes"]["by"] == (expected.mechanism if expected else bounds["processes"]["by"])
    assert bounds["output"] == {"what": "output", "limit": output.LOG_CAP, "by": "pipe", "reason": None}


# --- 7. nothing outlives the run ---------------------------------------------------------------

def test_scratch_of_a_killed_run_is_swept_by_the_next(tmp_path: Path) -> None:
    """Runs whose owner crashed left /tmp/argmin-worker-* folders behind (unsandboxed: in a
    sandbox there is none). The next run removes those whose process is gone."""
    child = subprocess.Popen([sys.executable, "-c", "import sys, tempfile; "
                              "print(tempfile.mkdtemp(prefix=f'argmin-worker-{__import__(\"os\").getpid()}-'))"],
                             stdout=subprocess.PIPE, text=True)
    left = Path(child.communicate()[0].strip())
    assert left.is_dir()
    launch.sweep_scratch.cache_clear()
    with Runner("zoo.correct:numpy_argmin", sandbox_mode="off"):
        pass
    assert not left.exists()


# --- 8. verify trusts nothing before it has checked it -------------------------------------------

@pytest.mark.parametrize("word", ["onnxruntime@1.0,<2", "onnxruntime:x@1.0,<2", "openvino@2024.4.0 ; os_name",
                                  "tract@https://example.com/t.whl", "onnxruntime@1.16\x1b[2J"])
def test_a_release_is_a_version_and_nothing_else(word: str) -> None:
    with pytest.raises(UsageError, match=r"not a release number|control characters"):
        check(word)


def test_verify_refuses_a_smuggled_requirement_before_installing_anything(tmp_path: Path) -> None:
    """A report naming `onnxruntime:x@1.0,<2` made verify --rerun install `onnxruntime==1.0,<2`
    before any check or question."""
    report = tmp_path / "report"
    report.mkdir()
    (report / "report.json").write_text(json.dumps({"certificate": {"implementation": "onnxruntime:x@1.0,<2"}}))
    before = set((ROOT / ".nox").glob("conformance-*")) if (ROOT / ".nox").is_dir() else set()
    done = subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s", "verify", "--",
                           str(report), "--rerun", "--yes"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a release number" in done.stderr and "pip install" not in done.stdout + done.stderr
    after = set((ROOT / ".nox").glob("conformance-*")) if (ROOT / ".nox").is_dir() else set()
    assert after == before


# --- 9. kernel state that namespaces do not cover ------------------------------------------------

FILTERED = pytest.mark.skipif(sandbox.available().seccomp is None,
                              reason=f"no seccomp filter here: {sandbox.available().seccomp_reason}")


def _listening(path: Path) -> socket.socket:
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    listener.settimeout(0.5)
    return listener


@SANDBOXED
@FILTERED
def test_the_socket_filter_reads_the_family_as_the_kernel_does(tmp_path: Path) -> None:
    """socket(0x1_00000001, SOCK_STREAM, 0) is AF_UNIX to the kernel, which reads an int: a filter
    that compared all 64 bits let it through, and the plug-in reached a socket file beside it."""
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    shutil.copy(SHARED, plugin / "shared.py")
    for mode, reached in (("auto", False), ("off", True)):
        listener = _listening(plugin / "beside.sock")
        with Runner(f"{plugin / 'shared.py'}:connects_through_high_bits", sandbox_mode=mode,
                    log=tmp_path / f"{mode}.log") as runner:
            assert runner.call(SMALL, 13, {}).status == "ok"
        try:
            listener.accept()[0].close()
            accepted = True
        except OSError:
            accepted = False
        listener.close()
        assert accepted is reached, (tmp_path / f"{mode}.log").read_text()
    assert "through the high bits refused" in (tmp_path / "auto.log").read_text()


# Joins a session keyring of its own (as a login or a CI job gets one), puts a credential in it,
# asks the plug-in once in a worker of the given sandbox mode, and prints what the plug-in read and
# whether its planted key is in the keyring afterwards.
_KEYRING_RUN = """
import ctypes, json, sys
import numpy as np
from engine.asking.isolation import Runner
from tests.impls.plugin_shared import KEY_DESCRIPTION, PLANTED, _syscall
mode, log = sys.argv[1:]
try:
    _syscall("keyctl", ctypes.c_long(1), None)  # KEYCTL_JOIN_SESSION_KEYRING: a new, anonymous one
    _syscall("add_key", b"user", KEY_DESCRIPTION.encode(), b"hunter2", ctypes.c_long(7), ctypes.c_long(-3))
except OSError as exc:
    print(json.dumps({"skip": str(exc)}))
    sys.exit()
with Runner("tests/impls/plugin_shared.py:reaches_the_keyring", sandbox_mode=mode, log=log) as runner:
    status = runner.call(np.zeros(10, np.uint8), 13, {}).status
try:
    planted = _syscall("request_key", b"user", PLANTED.encode(), None, ctypes.c_long(0)) > 0
except OSError:
    planted = False
print(json.dumps({"status": status, "planted": planted}))
"""


@SANDBOXED
@FILTERED
def test_the_session_keyring_is_out_of_reach(tmp_path: Path) -> None:
    """Keyrings are not namespaced: the plug-in read a credential from the session keyring it
    inherited and planted a key that outlived the run. Now keyctl, add_key and request_key fail."""
    found = {}
    for mode in ("auto", "off"):
        log = tmp_path / f"{mode}.log"
        done = subprocess.run([sys.executable, "-c", _KEYRING_RUN, mode, str(log)], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        found[mode] = json.loads(done.stdout.splitlines()[-1])
        if "skip" in found[mode]:
            pytest.skip(f"no session keyring can be made here: {found[mode]['skip']}")
        found[mode]["log"] = log.read_text()
    assert found["off"]["planted"] and "read the credential: hunter2" in found["off"]["log"]  # the attack works
    assert found["auto"]["status"] == "ok" and not found["auto"]["planted"]
    assert "hunter2" not in found["auto"]["log"] and "reading the credential refused" in found["auto"]["log"]


@SANDBOXED
@FILTERED
def test_every_refused_kernel_interface_is_refused(tmp_path: Path) -> None:
    """Each system call of sandbox.REFUSED, made with invalid arguments: unsandboxed the kernel
    reaches its own checks (any errno but ENOSYS), sandboxed the filter answers ENOSYS first.
    Calls this kernel does not have at all (ENOSYS unsandboxed too) prove nothing and are left out."""
    errnos = {}
    for mode in ("auto", "off"):
        log = tmp_path / f"{mode}.log"
        with Runner(f"{SHARED}:calls_kernel_interfaces", sandbox_mode=mode, log=log) as runner:
            assert runner.call(SMALL, 13, {}).status == "ok"
        errnos[mode] = dict(line.removeprefix("interface ").split(": errno ") for line in log.read_text().splitlines()
                            if line.startswith("interface "))
    enosys = str(errno.ENOSYS)
    proven = {name for name, code in errnos["off"].items() if code != enosys}
    assert {"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
            "open_by_handle_at", "mount", "ptrace"} <= proven, errnos["off"]
    assert {name: errnos["auto"][name] for name in proven} == dict.fromkeys(proven, enosys)


def test_what_the_filter_denies_is_named_only_where_it_is_loaded() -> None:
    with_filter = sandbox.Sandbox("bubblewrap", program="bwrap", seccomp=b"\0" * 8)
    without = sandbox.Sandbox("bubblewrap", program="bwrap")
    assert set(sandbox.FILTERED) <= set(with_filter.denies())
    assert not set(sandbox.FILTERED) & set(without.denies())
    assert set(sandbox.REFUSED.values()) <= set(sandbox.FILTERED)


def test_the_sandbox_page_says_why_each_call_is_refused() -> None:
    page = (ROOT / "docs" / "explanation" / "sandbox.md").read_text(encoding="utf-8")
    assert [name for name in sandbox.REFUSED if f"`{name}`" not in page] == []
