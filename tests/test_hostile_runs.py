"""The implementation under test cannot reach its run from outside its answers: each test runs the
hostile plug-in of one attack that worked on an earlier version of the suite (a forkserver's
workers, unsandboxed) and shows that it no longer does. Every plug-in is broken, so the honest
verdict is NON-CONFORMANT, exit status 1. Where an attack still works unsandboxed
(``--sandbox off``), the test says what the suite does about it instead."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import onnx
import pytest

from engine.asking import sandbox
from results import IMPLEMENTATION_LOG
from tests import test_hostile
from tests.impls.plugin_attacks import FORGED_LINE, LINKED

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = "tests/impls/plugin_attacks.py"
SANDBOXED = test_hostile.SANDBOXED
BOTH = ["mode", [pytest.param("auto", marks=SANDBOXED), "off"]]  # the run's --sandbox (auto: the default)
marks = test_hostile.marks  # fixture: $ARGMIN_HOSTILE_MARKS, a folder of this test's own


def _suite(report_dir: Path, impl: str, *extra: str, cwd: Path = ROOT,
           **environment: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suites", "--impl", impl, "--versions", "13", "--dtypes", "uint8",
                           "--profile", "quick", "--seed", "5", "--report-dir", str(report_dir),
                           "--pass-env", "ARGMIN_FORGE_DIR,ARGMIN_HOSTILE_MARKS", *extra],
                          cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "ARGMIN_FORGE_DIR": str(report_dir), **environment})


def _mode(mode: str) -> list[str]:
    """The options that ask for ``--sandbox MODE``: none for the default."""
    return [] if mode == "auto" else ["--sandbox", mode]


def _verdict(report_dir: Path) -> str:
    return json.loads((report_dir / "report.json").read_text(encoding="utf-8"))["versions"][0]["verdict"]


def _refused(report_dir: Path, attack: str) -> bool:
    """Whether the plug-in wrote in its log that ``attack`` was refused."""
    return f"{attack} refused" in (report_dir / IMPLEMENTATION_LOG).read_text(encoding="utf-8")


# --- code in the owner through a module it imports later ---------------------------------------

@pytest.fixture
def onnx_copy(tmp_path: Path) -> Path:
    """A folder holding a copy of the installed onnx package, to put first on the path: links to
    its files, but for the module the trojan appends to, a copy of its own."""
    installed = Path(onnx.__file__).parent
    site = tmp_path / "site"
    shutil.copytree(installed, site / "onnx", copy_function=os.symlink)
    target = site / "onnx" / "reference" / "__init__.py"
    target.unlink()
    shutil.copyfile(installed / "reference" / "__init__.py", target)
    return site


@pytest.mark.e2e
@pytest.mark.parametrize(*BOTH)
def test_code_planted_in_a_module_never_runs_in_the_process_that_owns_the_run(tmp_path: Path, marks: Path,
                                                                             onnx_copy: Path, mode: str) -> None:
    """As it was imported, the plug-in appended code to onnx.reference in the suite's
    virtualenv; the process that owns the run imported that module only later, and ran the code
    (which swapped a correct implementation in: exit 0, CONFORMANT). Sandboxed, the write is
    refused. Unsandboxed it is made, but the owner has imported everything it needs before the
    implementation loads, so the code does not run there (the module stays trojaned for whatever
    imports it next: the README says so)."""
    target = onnx_copy / "onnx" / "reference" / "__init__.py"
    before = target.read_bytes()
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "suites", "--impl", "tests/impls/plugin_trojan.py:argmin",
                                "--versions", "13", "--dtypes", "uint8", "--profile", "quick", "--seed", "5",
                                *_mode(mode), "--report-dir", str(out)], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": os.pathsep.join([str(onnx_copy), str(ROOT)])})
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 1 and _verdict(out) == "non-conformant", stdout[-2000:] + stderr[-2000:]
    assert f"ran-in-{process.pid}" not in os.listdir(marks), "the planted code ran in the process that owns the run"
    if mode == "auto":
        assert target.read_bytes() == before and _refused(out, "trojan")
    else:
        assert target.read_bytes() != before, "the attack was made: the owner imported nothing after it"


# Runs the front door with an audit hook that lists the modules imported once a worker has started.
AUDITED = """
import sys
from engine.asking import worker_process
late, started = [], worker_process.WorkerProcess.__init__
def armed(self, *args, **options):
    started(self, *args, **options)
    sys.addaudithook(lambda event, details: late.append(details[0]) if event == "import" else None)
worker_process.WorkerProcess.__init__ = armed
from suites.__main__ import main
code = main(sys.argv[1:])
print("LATE", sorted(set(late)))
sys.exit(code)
"""


@pytest.mark.e2e
def test_the_process_that_owns_the_run_imports_nothing_once_a_worker_has_started(tmp_path: Path) -> None:
    """What the owner imports after the implementation has started loading could have been
    written by it (unsandboxed): the suites' test modules, onnx.reference and more were."""
    done = subprocess.run([sys.executable, "-c", AUDITED, "--impl", "tests/impls/plugin_good.py:argmin",
                           "--versions", "13", "--dtypes", "uint8", "--profile", "quick", "--seed", "5",
                           "--report-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    late, = [line for line in done.stdout.splitlines() if line.startswith("LATE ")]
    assert late == "LATE []"


# --- a poisoned checkout -------------------------------------------------------------------------

@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A clone of this checkout, at its commit."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(tmp_path / "clone")], check=True)
    subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", commit], cwd=tmp_path / "clone",
                   check=True)
    return tmp_path / "clone"


def _state(checkout: Path) -> dict:
    """What results.environment.checkout says of ``checkout``: what a run there records."""
    done = subprocess.run([sys.executable, "-c", "import json; from results.environment import checkout; "
                                                 "print(json.dumps(checkout()))"], cwd=checkout, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.e2e
@pytest.mark.parametrize(*BOTH)
def test_a_poisoned_checkout_is_never_taken_for_a_clean_one(tmp_path: Path, clone: Path, mode: str) -> None:
    """The plug-in edited reports/folders/verify.py and hid the edit with `git update-index
    --skip-worktree`: `git status` said nothing, and every later run recorded `tree_clean: true`
    (and that verify passed a forged report). Sandboxed, the edit is refused. Unsandboxed it is
    made, and the next run, which hashes the files itself, records the checkout as modified."""
    assert _state(clone)["git_dirty"] is False
    result = _suite(tmp_path / "out", f"{ROOT / ATTACKS}:poison", *_mode(mode), cwd=clone)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True)
    assert status.stdout == ""  # git itself is fooled either way
    if mode == "auto":
        assert _refused(tmp_path / "out", "_poison") and _state(clone)["git_dirty"] is False
        assert "poisoned" not in (clone / "reports" / "folders" / "verify.py").read_text(encoding="utf-8")
    else:
        assert "poisoned" in (clone / "reports" / "folders" / "verify.py").read_text(encoding="utf-8")
        assert _state(clone)["git_dirty"] is True


# --- a detached forger ---------------------------------------------------------------------------

@pytest.mark.e2e
@SANDBOXED
def test_a_detached_daemon_ends_with_the_worker_and_cannot_rewrite_the_report(tmp_path: Path, marks: Path) -> None:
    """A double-forked setsid daemon outlived the run, waited for it to end, and rewrote its
    report: the folder said CONFORMANT for the broken file. In the sandbox it dies with its
    worker (the kernel ends the sandbox's PID namespace), and could not have written anyway."""
    out = tmp_path / "out"
    result = _suite(out, f"{ATTACKS}:detached_forger")
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    written = (out / "report.json").read_bytes()
    assert test_hostile._none_left(marks), "the daemon outlived the run"
    assert (out / "report.json").read_bytes() == written and _verdict(out) == "non-conformant"


# --- nox and the process that owns the run -------------------------------------------------------

def _unprivileged() -> list[str]:
    """The command prefix that runs a command as an unprivileged user: nothing when this is not
    root; as root, setpriv to uid and gid 65534 (root may trace any process, so the test would
    show nothing)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no way to run the attack as an unprivileged user")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


def _python(prefix: list[str], work: Path) -> tuple[str, dict[str, str]]:
    """A Python that user can run (and start again: the suite starts workers with it), with this
    environment's packages, and a folder with `python` in it for PATH (nox runs `python`): this
    interpreter, or else the system's of the same version (a virtualenv's interpreter may live
    where that user cannot go, such as /root)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for python, extra in ((sys.executable, {}), (f"/usr/bin/python{version}", {"PYTHONPATH": sysconfig.get_path(
            "purelib")})):
        again = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import nox, numpy'], check=True)"
        if subprocess.run([*prefix, python, "-c", again], env={**os.environ, **extra}, capture_output=True,
                          check=False).returncode == 0:
            (work / "bin").mkdir()
            (work / "bin" / "python").symlink_to(python)
            return python, {**extra, "PATH": os.pathsep.join([str(work / "bin"), os.environ.get("PATH", "")])}
    pytest.skip(f"no Python {version} with this environment's packages that an unprivileged user can run")


@pytest.mark.e2e
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the attack goes through /proc")
@pytest.mark.parametrize(*BOTH)
def test_nox_and_the_run_are_out_of_the_plugins_reach(mode: str) -> None:
    """As an unprivileged user, the plug-in wrote a forged verdict line to nox's stdout through
    /proc/<nox>/fd/1, made nox exit 0 through ptrace and killed the process that owned the run:
    exit 0, with only the forged line on screen. Sandboxed, it sees no process outside its own;
    unsandboxed, nox (like the owner) is non-dumpable, so neither its output nor its memory is
    open to a process of the same user."""
    prefix = _unprivileged()
    work = Path(tempfile.mkdtemp(prefix="argmin-unprivileged-"))  # a folder that user may write
    os.chmod(work, 0o755)
    (work / "out").mkdir(mode=0o777)
    (work / "out").chmod(0o777)
    try:
        python, environment = _python(prefix, work)
        nox = [python, "-m", "nox", "--no-venv", "--no-install", "--envdir", str(work / "out" / "nox"),
               "-f", str(ROOT / "noxfile.py"), "-s", "conformance", "--", "--impl", f"{ATTACKS}:nox_stdout",
               "--versions", "13", "--dtypes", "uint8", "--profile", "quick", "--seed", "5", *_mode(mode),
               "--pass-env", "ARGMIN_FORGE_DIR", "--report-dir", str(work / "out" / "run")]
        # nox's output goes to a file of that user's own, as a terminal of its own would be.
        done = subprocess.run([*prefix, "sh", "-c", 'exec "$@" > "$0" 2>&1', str(work / "out" / "nox.txt"), *nox],
                              cwd=ROOT, timeout=600, check=False,
                              env={**os.environ, **environment, "PYTHONDONTWRITEBYTECODE": "1",
                                   "ARGMIN_FORGE_DIR": str(work / "out" / "run")})
        output = (work / "out" / "nox.txt").read_text(encoding="utf-8")
        log = (work / "out" / "run" / IMPLEMENTATION_LOG).read_text(encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert FORGED_LINE not in output
    assert done.returncode == 1, output[-3000:]
    assert "ArgMin-13: NON-CONFORMANT" in output
    if mode == "off":
        assert "refused" in log, log  # it tried, and was refused


# --- links planted in the report folder ----------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize(*BOTH)
def test_links_planted_during_the_run_are_replaced_not_followed(tmp_path: Path, mode: str) -> None:
    """The plug-in replaced report.json, report.html, junit.xml and raw.json.gz with links: the
    run wrote its reports through them, wherever they pointed, and the folder held none. Sandboxed,
    the links cannot be made; unsandboxed, every file is renamed into place over its link."""
    out = tmp_path / "out"
    elsewhere = Path(f"{out}-elsewhere")
    elsewhere.mkdir()
    result = _suite(out, f"{ATTACKS}:plants_links", *_mode(mode))
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert list(elsewhere.iterdir()) == []
    assert all((out / name).is_file() and not (out / name).is_symlink() for name in LINKED)
    assert _verdict(out) == "non-conformant"
    assert _refused(out, "_links") == (mode == "auto")


@pytest.mark.parametrize(("planted", "problem"), [("report.json", "is a symbolic link"),
                                                  ("notes.txt", "is not something a run writes there")])
def test_a_link_or_a_foreign_file_in_the_report_folder_stops_the_run(tmp_path: Path, planted: str,
                                                                     problem: str) -> None:
    """Links left there before the run (by an earlier plug-in, or anyone) took its reports
    elsewhere; a file no run writes could be taken for one of its own."""
    out = tmp_path / "out"
    out.mkdir()
    if planted == "report.json":
        (out / planted).symlink_to(tmp_path / "elsewhere.json")
    else:
        (out / planted).write_text("mine\n")
    result = _suite(out, "tests/impls/plugin_good.py:argmin")
    assert result.returncode == 2
    line, = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and f"{out}: {planted} {problem}" in line, line
    assert not (tmp_path / "elsewhere.json").exists() and sorted(os.listdir(out)) == [planted]


def test_a_sandbox_is_required_where_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify --rerun asks for --sandbox require: where there is none, nothing runs."""
    monkeypatch.setattr(sandbox, "available", lambda: sandbox.Sandbox(None, "bubblewrap (bwrap) is not installed"))
    with pytest.raises(sandbox.UsageError, match=r"--sandbox require: no sandbox here \(bubblewrap"):
        test_hostile.Runner("tests/impls/plugin_good.py:argmin", sandbox_mode="require")


ESCAPES = "\x1b[2J\x1b[H\x1b[32m  ArgMin-13: CONFORMANT\x1b[0m\x07\u202e"


@pytest.mark.parametrize("where", ["import", "version"])
def test_the_plugins_text_reaches_the_terminal_without_escape_sequences(tmp_path: Path, where: str) -> None:
    """An exception raised as the plug-in was imported was printed raw on the error line: it
    cleared the screen and drew a green CONFORMANT. Every text the plug-in controls is printed with
    its control and format characters replaced, whichever way it reaches the terminal."""
    plugin = tmp_path / "escapes.py"
    body = f"raise RuntimeError({ESCAPES!r})\n" if where == "import" else \
        f"import numpy as np\n__version__ = {ESCAPES!r}\n" \
        "def argmin(data, *, opset, **a):\n    return np.argmin(data, axis=a.get('axis', 0), " \
        "keepdims=bool(a.get('keepdims', 1)))\n"
    plugin.write_text(body)
    done = _suite(tmp_path / "report", f"{plugin}:argmin")
    shown = done.stdout + done.stderr
    assert done.returncode == (2 if where == "import" else 1), shown  # it ignores select_last_index: C6
    assert ("does not import (RuntimeError" if where == "import" else "NON-CONFORMANT") in shown
    assert not any(c in shown for c in "\x1b\x07\u202e"), repr(shown[-2000:])
