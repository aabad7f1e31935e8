"""Sessions: ``conformance`` (the front door), ``tests`` (the project's own tests, minutes),
``e2e`` (the long end-to-end runs), ``lint`` (ruff), ``docs`` (the documentation site, built
strictly), ``minimums`` (tests at the lowest dependency versions pyproject allows), the report
tools ``verify``, ``merge``, ``baseline``, ``render``, ``compare``, ``matrix``, ``rebuild`` and
``export``, and ``ecosystem``, ``history``, ``adequacy``, ``bench``.

Paths a session is given are the user's: relative ones are read from the folder nox was started
in (``session.invoked_from``), not the checkout nox changes into. The suite and the report tools
run there, with the checkout first on their import path."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nox

# The --impl grammar is read from the suite itself (engine.asking.loader imports only the standard
# library); the checkout leaves the import path again so its generic folder names shadow nothing.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine.asking.loader import DEFAULT_IMPL, runtime_commands, runtime_distributions
from engine.runtimes import BUILT_IN, find, split_release
from engine.runtimes.entry import release_key
from tools.installs import lowest
from tools.sessions import RUNTIME, checked, debian, inside, label, options, recorded_impl, run, several, stop, venv

sys.path.pop(0)

ROOT = Path(__file__).resolve().parent
nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["tests", "lint"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
# What the built-in runtimes' tests need on PATH (tinygrad compiles its kernels with clang).
_RUNTIME_COMMANDS = sorted({command for runtime in BUILT_IN for command in runtime.commands})


def _pytest(session: nox.Session, marks: str) -> None:
    session.install(*RUNTIME, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("pytest", "tests", "-n", "auto", "-m", marks, *session.posargs, env={"ARGMIN_PROFILE": "quick"})


@nox.session
def tests(session: nox.Session) -> None:
    """The project's own tests, at the quick Hypothesis profile (the e2e runs are apart)."""
    debian(session, ["chromium"], "the report tests")
    debian(session, _RUNTIME_COMMANDS, "the built-in runtimes' tests")
    _pytest(session, "not e2e")


@nox.session
def e2e(session: nox.Session) -> None:
    """The long end-to-end runs: every zoo entry through the whole suite, adequacy, every command the docs show."""
    debian(session, ["chromium"], "the report tests")
    debian(session, _RUNTIME_COMMANDS, "the built-in runtimes' tests")
    _pytest(session, "e2e")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the whole checkout, with the rules pyproject.toml selects."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site from docs/ into site/; strict, so a broken link or anchor fails. Its
    reference pages are made from the code as it builds (tools/reference.py), so the suite's own
    dependencies are installed too."""
    session.install(*RUNTIME, *nox.project.dependency_groups(PYPROJECT, "docs"))
    # Banners of mkdocs-gen-files (urging another builder) and Material (its end of life, May 2027: see
    # pyproject.toml), not about these docs, are left out of the build's output.
    session.run("mkdocs", "build", "--strict", *session.posargs,
                env={"DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"})


@nox.session(venv_backend="none")
def conformance(session: nox.Session) -> None:
    """Run the suites against one implementation: ``nox -s conformance -- --impl SPEC [options]``.

    ``--install REQUIREMENT_OR_PATH`` (repeatable) pip-installs the implementation under test into
    the session first; a built-in's runtime (openvino, tract) is installed when it is asked for.
    Each set of installs has its own virtualenv, kept between runs. Exit status: 0 conformant,
    1 non-conformant, 2 the run could not be carried out."""
    own, args = options(session, ("--install", {"action": "append", "default": []}),
                         ("--impl", {"default": DEFAULT_IMPL}))
    installs = [str(Path(session.invoked_from, i)) if os.path.exists(Path(session.invoked_from, i)) else i
                for i in own.install if i]
    with inside(session.invoked_from):  # a plug-in file is the user's
        impl = checked(own.impl)
    debian(session, list(runtime_commands(impl)), impl)
    python = venv(session, [*RUNTIME, *installs, *runtime_distributions(impl)], label(impl))
    sys.exit(run(session, python, "suites", ["--impl", impl, *args]))


@nox.session(venv_backend="none")
def ecosystem(session: nox.Session) -> None:
    """Every built-in runtime at one profile and seed, each in its own virtualenv, on one page:
    ``nox -s ecosystem -- [--profile quick] [--seed 1] [--only tvm,iree] [--out runs/ecosystem]
    [suite options, e.g. --versions 13]``. Writes OUT/<runtime>/ and OUT/matrix.html. Exit status
    2 when a run could not be carried out (its column is missing from the page), else 0."""
    words = [runtime.word for runtime in BUILT_IN]
    own, args = options(session, ("--profile", {"default": "quick"}), ("--seed", {"default": "1"}),
                         ("--only", {"default": ",".join(words)}), ("--out", {"default": "runs/ecosystem"}))
    chosen = [word for word in own.only.split(",") if word]
    unknown = sorted(set(chosen) - set(words))
    if unknown:
        stop(f"--only {unknown[0]!r} is not a built-in; choose from {', '.join(words)}")
    for word in chosen:
        debian(session, list(runtime_commands(word)), word)
    out = Path(session.invoked_from, own.out)
    several(session, [(word, out / word, []) for word in chosen], own.profile, own.seed, args,
            ("matrix", out / "matrix.html"))


@nox.session(venv_backend="none")
def history(session: nox.Session) -> None:
    """One built-in across its releases, each in its own virtualenv (as ``--impl WORD@RELEASE``) at
    one profile and seed, on one page: ``nox -s history -- --impl openvino --releases
    2023.1.0,2024.4.0,2026.4.1 [--isas avx2,native] [--profile quick] [--seed 1] [--out runs/history/WORD]
    [suite options, e.g. --versions 12,13]``. Writes OUT/<release>/ (OUT/<release>-<isa>/, a column each,
    with --isas: each release under each cap, ``--isa``) and OUT/history.html with its data in
    OUT/history.json. Exit status 2 when a release could not be carried out (its column is
    missing from the page), else 0. Without --impl, the page from report folders already made:
    ``nox -s history -- DIR DIR ... --out PAGE.html``."""
    if session.posargs and not any(a.split("=")[0] == "--impl" for a in session.posargs):
        sys.exit(run(session, venv(session, RUNTIME), "reports", ["history", *session.posargs]))
    own, args = options(session, ("--impl", {"default": ""}), ("--releases", {"default": ""}), ("--isas", {}),
                         ("--profile", {"default": "quick"}), ("--seed", {"default": "1"}), ("--out", {}))
    found = find(own.impl)
    if found is None or split_release(own.impl)[1] is not None or found[0].oldest is None:
        stop(f"--impl {own.impl!r} is not a built-in without a release; name one of "
              f"{', '.join(r.word for r in BUILT_IN)} and list its releases with --releases")
    wanted = sorted({release for release in own.releases.split(",") if release}, key=release_key)
    if not wanted:
        stop(f"--releases names no release; write e.g. --releases {found[0].oldest},RELEASE")
    out = Path(session.invoked_from, own.out or f"runs/history/{found[0].word}")
    isas = [isa for isa in (own.isas or "").split(",") if isa] or [None]
    runs = [(checked(f"{own.impl}@{release}", isa), out / "-".join(filter(None, (release, isa))),
             ["--isa", isa] if isa else []) for release in wanted for isa in isas]  # all checked before installing
    debian(session, list(runtime_commands(own.impl)), own.impl)
    several(session, runs, own.profile, own.seed, args, ("history", out / "history.html"))


# --- the report tools: each runs `python -m reports COMMAND` in the suite's own virtualenv -------

# Each tool: (its arguments, what it does; its exit status is the session's).
_REPORT_TOOLS = {
    "merge": ("SHARD_DIR [SHARD_DIR ...] --out DIR [--baseline DIR_OR_FILE]",
              "One report from a run's --shard K/N folders: exit status as the run's: 0 conformant, 1 not "
              "(or, with a baseline, a new failure), 2 shards that cannot be merged or a shard missing."),
    "baseline": ("REPORT_DIR_OR_JSON --out FILE", "A --baseline expectations file from a report: its failures."),
    "render": ("RAW_OR_REPORT --out DIR [--lang zh-TW]",
               "A report's HTML, JSON and JUnit again, from its raw results or report.json (another language, say)."),
    "compare": ("OLD NEW [--html OUT.html]", "What changed between two runs; exit status 1 on a regression."),
    "matrix": ("RUN_DIR_OR_REPORT.json [...] [--out PAGE.html]", "Several runs on one page."),
    "rebuild": ("REPORT_DIR", "Reports marked incomplete for a run that died before its end, from what it streamed."),
    "export": ("REPORT_DIR --out DIR [--passing N]",
               "A report's failures as ONNX backend node tests (each report folder's regressions/), for a runtime's "
               "own CI; --passing N adds passing cases, where the run recorded their inputs."),
}


def _report_tool(command: str, usage: str, doc: str) -> None:
    """Register ``nox -s COMMAND``: ``python -m reports COMMAND`` with the session's arguments, in
    the suite's own virtualenv (made once, then reused), in the folder nox was started in."""
    def tool(session: nox.Session) -> None:
        if not session.posargs:
            stop(f"usage: nox -s {command} -- {usage}")
        sys.exit(run(session, venv(session, RUNTIME), "reports", [command, *session.posargs]))
    tool.__doc__ = f"{doc} ``nox -s {command} -- {usage}``"
    nox.session(name=command, venv_backend="none")(tool)


for _command, (_usage, _doc) in _REPORT_TOOLS.items():
    _report_tool(_command, _usage, _doc)


@nox.session(venv_backend="none")
def verify(session: nox.Session) -> None:
    """Check a report without the implementation: ``nox -s verify -- REPORT_DIR_OR_JSON
    [--certificate] [--rerun [--yes] [--shard K/N]]``. With --rerun, the implementation the report
    names is first checked as --impl is; then the checks run, and the rerun is shown and confirmed;
    only then is what it needs installed, into a virtualenv of its own, and the run made again,
    sandboxed. Exit status: 0 every check holds, 1 one fails, 2 the report cannot be checked."""
    args = list(session.posargs)
    if not args or args[0].startswith("-"):
        stop("name a report: nox -s verify -- REPORT_DIR_OR_JSON [--certificate] [--rerun [--yes] [--shard K/N]]")
    if "--rerun" not in args:
        sys.exit(run(session, venv(session, RUNTIME), "reports", ["verify", *args]))
    with inside(session.invoked_from):  # a plug-in file the report names is looked for from there
        impl = checked(recorded_impl(Path(args[0])))  # a word --impl refuses: nothing installed
    code = run(session, venv(session, RUNTIME), "reports", ["verify", *args, "--confirm-only"])
    if code != 0:  # the checks failed, or the rerun was not confirmed: nothing installed
        sys.exit(code)
    python = venv(session, [*RUNTIME, *runtime_distributions(impl)], label(impl))
    sys.exit(run(session, python, "reports", ["verify", *(a for a in args if a != "--yes"), "--yes"]))


@nox.session(venv_backend="none")
def replay(session: nox.Session) -> None:
    """Each run asked the other runs' counterexamples, in the virtualenv and sandbox of the
    implementation its report names: ``nox -s replay -- RUN_DIR RUN_DIR [...]``. Writes each
    folder's replays.json, which ``matrix`` and ``history`` pages of the same folders read
    (``history`` and ``ecosystem`` do this themselves)."""
    folders = [str(Path(session.invoked_from, folder)) for folder in session.posargs]
    if len(folders) < 2:
        stop("usage: nox -s replay -- RUN_DIR RUN_DIR [...] (at least two report folders of runs)")
    for folder in folders:
        with inside(session.invoked_from):  # a plug-in file the report names is looked for from there
            impl = checked(recorded_impl(Path(folder)))  # a word --impl refuses: nothing installed
        python = venv(session, [*RUNTIME, *runtime_distributions(impl)], label(impl))
        if code := run(session, python, "engine.judging.replays", [folder, "--from", *folders]):
            sys.exit(code)


# --- the project's own measurements --------------------------------------------------------------

# The tests `minimums` runs: those whose code leans on numpy, onnx, ml_dtypes, Hypothesis and the
# report libraries directly (the spec, generators, oracle, census and reports, with whole runs of
# onnxruntime); the rest, and the other runtimes' own tests, are left to `tests`.
MINIMUM_TESTS = ("test_generators", "test_oracle", "test_spec_files", "test_census", "test_reports", "test_history",
                 "test_installs")


@nox.session
def minimums(session: nox.Session) -> None:
    """The suite's own dependencies at the lowest versions pyproject allows (``numpy>=1.26`` is
    installed as ``numpy==1.26``), with onnxruntime as the implementation the tests run: the
    tests in MINIMUM_TESTS at the quick profile, so a lower bound that no longer works is found."""
    session.install(*lowest(RUNTIME), "onnxruntime")
    # python -m puts the checkout on the path before pytest 8.0 loads the report plugin (addopts),
    # which pytest 8.0 does ahead of the pythonpath setting.
    session.run("python", "-m", "pytest", *(f"tests/{name}.py" for name in MINIMUM_TESTS), "-n", "auto",
                "-m", "not e2e", *session.posargs, env={"ARGMIN_PROFILE": "quick"})


@nox.session
def adequacy(session: nox.Session) -> None:
    """The suite scored on the zoo next to ONNX's own cases: ``nox -s adequacy -- [--profile quick] [--jobs N]``."""
    session.install(*RUNTIME)
    session.run("python", "-m", "zoo.adequacy", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The project's speed figures, each next to its target: the suite's own costs, certify against
    onnxruntime, the seven built-in runtimes side by side at the standard profile, cold and warm
    (all versions: hours), and where a judged case's time goes per runtime: ``nox -s bench --
    [--repeat N] [--skip-runs] [--runtimes onnxruntime,tvm] [--runtimes-profile certify]
    [--runtimes-schedule auto,off] [--impls +tvm,tinygrad,iree] [--versions 13] [--profile quick]``."""
    debian(session, _RUNTIME_COMMANDS, "the built-in runtimes")
    session.install(*RUNTIME, *nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("python", "benchmarks/bench_all.py", *session.posargs)
