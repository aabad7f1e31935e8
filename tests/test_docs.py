"""The docs say what the program does: every page reachable from the index, the figures README
quotes are performance.md's current ones, every command shown names a session and options that
exist, the glossary is linked where its words are first used, the architecture's picture names
every module of the engine and the reports where it is, and the first hour's template plug-in
runs as written."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import noxfile
import spec
from engine.asking.loader import describe, resolve
from engine.config.options import OPTIONS
from tools import reference

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
FIGURE = re.compile(r"\d[\d,.]*(?:\s(?:to|and)\s\d[\d,.]*)?\s?(?:s\b|min\b|minutes\b|×|µs\b|ms\b)")


def _text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    """The text under ``## heading`` up to the next heading of that level."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def _pictured(text: str) -> dict[str, set[str]]:
    """The architecture's picture of the engine and the reports: each folder it draws (``engine``,
    ``engine/asking``, ...) with the module names on its lines."""
    picture = _section(text, "The picture").split("```\nengine/", 1)[1].split("```", 1)[0]
    drawn: dict[str, set[str]] = {}
    top = room = "engine"
    for line in ("engine/" + picture).splitlines():
        if re.match(r"\w+/", line):
            top = room = line.split("/")[0]
        elif re.match(r"  \w+/", line):
            room = f"{top}/{line.split('/')[0].strip()}"
        elif re.match(r"  \w+\.py", line):  # a module beside the rooms (the reports' front doors)
            room = top
        drawn.setdefault(room, set()).update(re.findall(r"\b[\w]+\.py\b", line))
    return drawn


def test_the_architectures_picture_names_every_module_of_the_engine_and_the_reports_where_it_is() -> None:
    drawn = _pictured(_text("docs/explanation/architecture.md"))
    folders = {path.parent.relative_to(ROOT).as_posix() for top in ("engine", "reports")
               for path in (ROOT / top).rglob("*.py")}
    modules = {folder: {p.name for p in (ROOT / folder).glob("*.py") if p.name != "__init__.py"}
               for folder in folders}
    assert drawn == modules


def test_the_index_and_the_site_list_every_page() -> None:
    index = _text("docs/index.md")
    nav = _text("mkdocs.yml")
    for page in [*PAGES, *reference.PAGES]:
        assert page in nav, f"mkdocs.yml's nav lacks {page}"
        if page != "index.md":
            assert f"({page})" in index or f"({page}#" in index, f"docs/index.md does not link {page}"


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_every_figure_quoted_is_in_the_current_table(page: str) -> None:
    current = _section(_text("docs/explanation/performance.md"), "Current figures")
    quoted = FIGURE.findall(_text(page))
    assert all(figure in current for figure in quoted), \
        [f for f in quoted if f not in current]


def test_performance_opens_with_the_current_figures_and_their_targets() -> None:
    text = _text("docs/explanation/performance.md")
    assert text.index("## Current figures") < text.index("## History")
    rows = [line for line in _section(text, "Current figures").splitlines() if line.startswith("| ")][2:]
    assert len(rows) >= 8
    for row in rows:  # figure, value, command, commit and machine, target
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 5 and cells[1] and cells[2] and re.search(r"`[0-9a-f]{7}`", cells[3]), row


def _numbers(kind: str | None = None) -> list[int]:
    """The clause numbers of every version's spec file, of one kind or all."""
    return sorted({c.number for v in spec.load_all() for c in v.clauses if kind in (None, c.kind)})


def test_every_clause_range_the_docs_state_is_the_specs() -> None:
    """"C1 to C20", "C1–C9" (semantic), "C10–C13" (rejection): a range the pages state is every
    clause of spec/, or every clause of one kind, never a number the spec files have moved past.
    Findings, which name the clauses a runtime failed, are left out."""
    ranges = {(numbers[0], numbers[-1]) for numbers in (_numbers(), _numbers("semantic"), _numbers("rejection"))}
    stated = [(page.name, int(first), int(last)) for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
              if page.name != "findings.md"
              for first, last in re.findall(r"\bC(\d+) ?(?:–|to) ?C(\d+)\b", page.read_text(encoding="utf-8"))]
    assert len(stated) >= 5
    assert [entry for entry in stated if entry[1:] not in ranges] == []


def _commands() -> list[tuple[str, str]]:
    """(page, command line) for every line of README, the docs and the reference made from the code
    (the sessions' docstrings, the options' help) that runs nox."""
    found = []
    texts = [(page, _text(page)) for page in ["README.md", *(f"docs/{p}" for p in PAGES)]]
    for page, text in [*texts, ("reference/options.md", reference.options()),
                       ("reference/sessions.md", reference.sessions())]:
        for line in text.splitlines():
            for command in re.findall(r"nox (?:-f \S+ )?-s [^`|\n]*", line):
                found.append((page, command.split("  #")[0].strip().rstrip(".,;:)")))
    return found


SESSION_OPTIONS = {"conformance": {"--install", "--impl"},
                   "ecosystem": {"--profile", "--seed", "--only", "--out"},
                   "history": {"--impl", "--releases", "--isas", "--profile", "--seed", "--out"}}
PYTEST_OPTIONS = {"-n", "-k", "-x", "--durations", "-p", "-q", "--dist"}


def test_every_command_the_docs_show_names_a_session_and_options_that_exist() -> None:
    sessions = set(noxfile.nox.registry.get())
    suite = {name for name, *_ in OPTIONS}
    for page, command in _commands():
        words = shlex.split(command.replace("...", "").replace("\\", " "))
        name = words[words.index("-s") + 1]
        assert name in sessions, f"{page}: {command!r} names no nox session"
        if name in SESSION_OPTIONS and "--" in words:
            allowed = suite | SESSION_OPTIONS[name] | PYTEST_OPTIONS
            options = {w.split("=")[0] for w in words[words.index("--") + 1:] if w.startswith("-")}
            assert options <= allowed, f"{page}: {command!r} uses {sorted(options - allowed)}"


def test_the_reference_lists_every_option_session_and_clause() -> None:
    options, sessions, clauses = reference.options(), reference.sessions(), reference.clauses()
    assert all(f"## `{name} {metavar}` {{#{name[2:]}}}" in options for name, metavar, *_ in OPTIONS)
    assert all(f"## `nox -s {name}` {{#{name}}}" in sessions for name in noxfile.nox.registry.get())
    for vspec in spec.load_all():
        table = clauses[clauses.index(f"## ArgMin-{vspec.version} "):].split("\n## ")[0]
        assert all(f"| {c.id} | {c.kind} | {c.basis} | {c.title} |" in table for c in vspec.clauses), vspec.version


def test_the_reference_shows_paths_as_a_user_has_them() -> None:
    """A default under the checkout or the home folder is not the machine's that built the site."""
    text = reference.options()
    assert str(ROOT) not in text and str(Path.home()) not in text


def test_the_reference_shows_text_as_written() -> None:
    """Words from the code are plain text on the page: no emphasis, tag or table column made of
    them, and code left as it is."""
    assert reference._plain("a __version__ in OUT/<release>/, on|off, `nox -s a_b`") == \
        r"a \_\_version\_\_ in OUT/&lt;release>/, on\|off, `nox -s a_b`"
    assert reference._markdown("Run ``x_y``:\n    more\n\nNext.") == "Run `x_y`: more\n\nNext."


def test_a_session_without_a_docstring_stops_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def undocumented() -> None:
        pass

    monkeypatch.setattr(noxfile.nox.registry, "get", lambda: {"undocumented": undocumented})
    with pytest.raises(SystemExit, match=r"without a docstring.*undocumented"):
        reference.sessions()


def test_the_docs_show_report_tools_as_nox_sessions() -> None:
    """``python -m reports`` needs the suite's dependencies, which the Python at hand may lack."""
    for page in ["README.md", *(f"docs/{p}" for p in PAGES if p != "explanation/performance.md")]:
        assert "python -m reports" not in _text(page), page
    for tool in ("verify", "merge", "baseline", "render", "compare", "matrix", "rebuild", "history", "export"):
        assert tool in noxfile.nox.registry.get(), tool


def test_readmes_model_example_says_what_it_installs() -> None:
    """onnxruntime is not a suite dependency: the example that uses it installs it."""
    example = [c for _, c in _commands() if "model:tests/impls/model_onnxruntime.py" in c]
    assert example and all("--install onnxruntime" in c for c in example), example


@pytest.mark.parametrize(("term", "pages"), [("census", ["README.md"]), ("clause", ["README.md"]),
                                            ("signature model", ["docs/how-to/plugins.md"])])
def test_a_term_is_linked_to_the_glossary_at_its_first_use(term: str, pages: list[str]) -> None:
    for page in pages:
        text = _text(page)
        first = text.lower().index(term)
        assert text[first - 1] == "[" and "glossary.md#" in text[first:first + 80], (page, text[first - 40:first + 80])


def test_every_glossary_anchor_linked_is_a_term() -> None:
    glossary = _text("docs/reference/glossary.md")
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).strip().replace(" ", "-")
               for h in re.findall(r"^## (.+)$", glossary, re.M)}
    for page in ["README.md", *(f"docs/{p}" for p in PAGES)]:
        for anchor in re.findall(r"glossary\.md#([\w-]+)", _text(page)):
            assert anchor in anchors, (page, anchor)


TEMPLATE = DOCS / "tutorial" / "my_runtime.py"  # the tutorial's plug-in, which the pages include as it is


def _template(folder: Path) -> Path:
    """The template plug-in, saved as a user would save it."""
    path = folder / TEMPLATE.name
    path.write_text(TEMPLATE.read_text(encoding="utf-8"), encoding="utf-8")
    return path


@pytest.mark.parametrize("page", ["docs/how-to/plugins.md", "docs/tutorial/certify-in-an-hour.md"])
def test_the_pages_show_the_template_as_it_is(page: str) -> None:
    assert '```python\n--8<-- "tutorial/my_runtime.py"\n```' in _text(page)


def test_the_template_states_its_version_and_has_the_checked_signature(tmp_path: Path) -> None:
    impl = f"model:{_template(tmp_path)}:compile"
    described = describe(impl, resolve(impl))
    assert described["version"] == "0.1.0" and described["version_stated_by"] == "__version__", described


@pytest.mark.e2e
def test_the_template_runs_as_written_from_a_folder_outside_the_checkout(tmp_path: Path) -> None:
    """From the folder that holds it, as the first hour says: CONFORMANT at ArgMin-13, and the
    certificate names the version the template states; `nox -s verify -- out --rerun`, from the
    same folder, runs it again (the plug-in named by its relative path) to the same digest."""
    _template(tmp_path)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])  # its `python` is ours
    nox = [sys.executable, "-m", "nox", "--no-venv", "--no-install", "-f", str(ROOT / "noxfile.py"),
           "-s", "conformance"]
    done = subprocess.run([*nox, "--", "--install", "onnxruntime", "--impl", "model:my_runtime.py:compile",
                           "--profile", "quick", "--versions", "13", "--dtypes", "float,int32", "--report-dir", "out"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False,
                          env={**os.environ, "PATH": path})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["certificate"]["implementation_version"] == "0.1.0"
    assert [v["verdict"] for v in report["versions"]] == ["conformant"]
    verify = [*nox[:-1], "verify", "--", "out", "--rerun", "--yes"]
    done = subprocess.run(verify, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False,
                          env={**os.environ, "PATH": path})
    assert "PASS rerun: a new run gives the same results digest" in done.stdout, done.stdout[-3000:] + done.stderr


TUTORIAL = "docs/tutorial/certify-in-an-hour.md"
CLONE_URL = "URL_OF_THIS_REPOSITORY"  # the one word of the tutorial's commands a reader fills in


def _tutorial_steps() -> list[tuple[str, int]]:
    """Every line of the tutorial's shell blocks, in order, with the exit status it says (0 unless
    the line ends in ``# exit status N``)."""
    steps = []
    for block in re.findall(r"```sh\n(.*?)```", _text(TUTORIAL), re.S):
        for line in block.splitlines():
            command, _, comment = line.partition("  #")
            status = re.search(r"exit status (\d)", comment)
            steps.append((command.strip(), int(status.group(1)) if status else 0))
    return steps


def test_the_tutorial_starts_from_a_clone_and_ends_with_a_customers_verify() -> None:
    commands = [command for command, _ in _tutorial_steps()]
    assert commands[0] == f"git clone {CLONE_URL} argmin-conformance" and sum(CLONE_URL in c for c in commands) == 1
    assert "-s verify -- certificate --certificate" in commands[-1], commands[-1]


@pytest.mark.e2e
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    """Every command of the tutorial, in order, in one shell, from a fresh clone of this checkout
    (its committed state: what a reader clones): each exits as the page says, the quick run is
    CONFORMANT at ArgMin-13 with the template's version on its certificate, and the certify run is
    a certificate."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])  # `python`, `nox`: ours
    script = ["set -u"] + [f'{command.replace(CLONE_URL, shlex.quote(str(ROOT)))}; echo "$?" >> {tmp_path}/statuses'
                           for command, _ in _tutorial_steps()]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=5400, check=False, env={**os.environ, "PATH": path})
    statuses = [int(s) for s in (tmp_path / "statuses").read_text().split()]
    assert statuses == [status for _, status in _tutorial_steps()], done.stdout[-5000:] + done.stderr[-3000:]
    folder = tmp_path / "my-runtime"
    quick = json.loads((folder / "quick" / "report.json").read_text(encoding="utf-8"))
    assert quick["certificate"]["implementation_version"] == "0.1.0"
    assert [v["verdict"] for v in quick["versions"]] == ["conformant"]
    certificate = json.loads((folder / "certificate" / "report.json").read_text(encoding="utf-8"))
    assert certificate["certificate"]["status"] == "certificate", certificate["certificate"]["reasons"]
