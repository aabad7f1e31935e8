"""The documentation site's reference pages, made from the code when the site is built
(mkdocs-gen-files runs this file, see mkdocs.yml): every option from the parser's table
(engine.config.options.OPTIONS), every nox session from noxfile.py's sessions and docstrings,
report.json's fields from its JSON Schema and the clauses of each version from spec/. None of it
is written by hand anywhere in docs/."""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_RST_LITERAL = re.compile(r"``(.+?)``", re.S)


def _plain(text: str) -> str:
    """Text as Markdown shows it as written, outside its `code`: ``__version__`` not bold,
    ``OUT/<release>/`` not a tag, a | not a table's column."""
    parts = re.split(r"(`[^`]*`)", text)  # text, code, text, ...
    return "".join(part if i % 2 else re.sub(r"([\\*_|])", r"\\\1", part).replace("<", "&lt;")
                   for i, part in enumerate(parts))


def _markdown(docstring: str) -> str:
    """A docstring as Markdown: its ``literals`` as `code`, the rest as plain text, its lines
    rejoined into paragraphs."""
    paragraphs = inspect.cleandoc(docstring).split("\n\n")
    return "\n\n".join(_plain(_RST_LITERAL.sub(r"`\1`", " ".join(p.split()))) for p in paragraphs)


def _user_paths(text: str) -> str:
    """A default as a user reads it: the checkout's folders relative to it, the home folder as ~."""
    return text.replace(f"{ROOT}/", "").replace(str(Path.home()), "~")


def options() -> str:
    from engine.config.options import OPTIONS

    lines = ["# Options", "",
             "Every option of a run, as `python -m suites --help` states it. `nox -s conformance -- ...`, "
             "`python -m suites ...` and `pytest suites ...` take the same options; any other option goes to "
             "pytest (`-n 0`, `-k EXPR`, `-x`). Each takes one value, written `--option VALUE` or "
             "`--option=VALUE`.", ""]
    for name, metavar, text, default in OPTIONS:
        lines += [f"## `{name} {metavar}` {{#{name.removeprefix('--')}}}", "",
                  _plain(_user_paths(text[0].upper() + text[1:])) + ".", ""]
        if default is not None:
            lines += [f"Default: `{_user_paths(default)}`.", ""]
    return "\n".join(lines)


def sessions() -> str:
    import noxfile

    registry = noxfile.nox.registry.get()
    undocumented = [name for name, func in registry.items() if not (func.__doc__ or "").strip()]
    if undocumented:
        raise SystemExit(f"nox sessions without a docstring, which the reference is made of: {undocumented}")
    default = " and ".join(f"`{name}`" for name in noxfile.nox.options.sessions)
    lines = ["# nox sessions", "",
             f"Every session of `noxfile.py`, in its order, from its docstring. `nox` alone runs {default}; what "
             "follows `--` goes to the session (`nox -s tests -- -k docs`). Paths a session is given are read from "
             "the folder nox was started in, so `nox -f` with the path of the checkout's noxfile.py works from any "
             "folder.", ""]
    for name, func in registry.items():
        lines += [f"## `nox -s {name}` {{#{name}}}", "", _markdown(func.__doc__), ""]
    return "\n".join(lines)


def report_fields() -> str:
    import jsonschema2md

    schema = json.loads((ROOT / "reports" / "document" / "report.schema.json").read_text(encoding="utf-8"))
    body = "".join(jsonschema2md.Parser(header_level=1).parse_schema(schema))
    body = body.split("\n", 1)[1]  # its own title: this page's is below
    body = re.sub(r"^( +)", lambda m: m.group(1) * 2, body, flags=re.M)  # Python-Markdown nests lists by 4 spaces
    body = re.sub(r" \(\[Test\]\(https://regexr\.com/[^)]*\)\)", "", body)  # no link out per pattern
    return "\n".join(["# report.json", "",
                      "Every field of a run's `report.json`, from its JSON Schema, "
                      f"`reports/document/report.schema.json` (`{schema['properties']['schema']['const']}`), "
                      "which `nox -s verify` holds every report to. "
                      "Fields are listed in the schema's order; *required* fields are in every report.", "",
                      body])


def clauses() -> str:
    import spec

    lines = ["# Clauses", "",
             "Every clause of every version, from the spec files (`spec/argmin-N.yaml`), as `python -m spec show N` "
             "prints them. *Kind*: semantic (judged), rejection (strictness) or undefined (census); *rests on*: "
             "stated by the ONNX text, inferred from it, a constraint on models, or onnx.checker's rule. How they "
             "weigh in a verdict: [the specification](../explanation/specification.md).", ""]
    for vspec in spec.load_all():
        lines += [f"## ArgMin-{vspec.version} {{#argmin-{vspec.version}}}", "",
                  f"Domain `{vspec.domain}`, support level {vspec.support_level}. T: "
                  + ", ".join(vspec.type_names) + ".", ""]
        lines += [f"- attribute `{a.name}`: default {a.default}, accepted {a.accepted()}, since {a.since}"
                  for a in vspec.attributes.values()]
        lines += ["", "| clause | kind | rests on | title | statement |", "|---|---|---|---|---|"]
        lines += [f"| {c.id} | {c.kind} | {c.basis} | {c.title} | {_plain(c.text())} |" for c in vspec.clauses]
        lines.append("")
    return "\n".join(lines)


PAGES: dict[str, Callable[[], str]] = {"reference/options.md": options, "reference/sessions.md": sessions,
                                        "reference/report-json.md": report_fields, "reference/clauses.md": clauses}


def write() -> None:
    import mkdocs_gen_files

    sys.path.insert(0, str(ROOT))  # the suite and noxfile.py are imported from the checkout
    for path, make in PAGES.items():
        with mkdocs_gen_files.open(path, "w") as page:
            page.write(make())
        mkdocs_gen_files.set_edit_path(path, "tools/reference.py")


if __name__ == "<run_path>":  # mkdocs-gen-files runs this file with runpy.run_path
    write()
