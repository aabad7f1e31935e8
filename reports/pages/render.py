"""Report documents -> self-contained HTML (Jinja2, autoescaping every value).

The pages carry their CSS inline and a Content-Security-Policy that forbids scripts and every
network fetch, so even a value that slipped past escaping could not run or phone home. They need
no JavaScript: what is folded away uses <details>."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from reports.document.aggregate import clause_anchor
from reports.document.parts import AttributeSide, ClauseRow, CoverageCell, Document, Statement
from results.outcomes import SEVERITY
from results.sizes import format_size

from .i18n import Translator, messages
from .standing import scope_text, strictness_text, type_policy

TEMPLATES = Path(__file__).resolve().parent / "templates"
# Environment entries the report shows elsewhere (implementation, certificate, the instruction set's
# own rows) or leaves out: the paths of the implementation's file and of the Python executable say
# nothing to a reader.
ENV_SHOWN = ("impl", "module", "package", "version", "package_version", "file", "executable", "git_commit",
             "git_dirty", "spec_sha256", "sandbox", "cpu_isa", "isa_cap")


@cache
def _environment() -> jinja2.Environment:
    # auto_reload off: a template compiled once (see preload) is never read from disk again.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, auto_reload=False,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["heat"] = heat
    env.filters["percent"] = percent
    env.filters["seconds"] = lambda s: f"{float(s):.1f}"
    env.filters["size"] = format_size
    env.filters["anchor"] = clause_anchor
    return env


def preload() -> None:
    """Compile every template and read the message files now. A run calls this before the
    implementation under test loads, so that the report rendered at its end reads no template or
    message file the implementation could have changed meanwhile."""
    env = _environment()
    for name in env.list_templates():
        env.get_template(name)
    messages()


def percent(reached: int, possible: int) -> str:
    return f"{100 * reached / possible:.0f}%" if possible else "–"


def heat(reached: int, possible: int) -> str:
    """Background colour for a coverage fraction: pale red (nothing) to pale green (everything),
    light enough for dark text at WCAG AA contrast."""
    if possible <= 0:
        return "#f1f3f5"
    share = reached / possible
    return f"hsl({round(share * 130)}, 60%, {round(90 - share * 6)}%)"


def group_share(cells: list[CoverageCell], version: int, group: str) -> tuple[int, int]:
    """[reached, possible] of one partition group over every type of a version."""
    pairs = [cell["groups"][group] for cell in cells if cell["version"] == version and group in cell["groups"]]
    return sum(p[0] for p in pairs), sum(p[1] for p in pairs)


def _accepted(side: AttributeSide, t: Translator) -> str:
    """An attribute's accepted values as the spec states them: {0, 1}, or a range in terms of r."""
    if side["values"] is not None:
        return "{" + ", ".join(map(str, side["values"])) + "}"
    if side["range"] is not None:
        low, high, stated = side["range"]
        return f"[{low}, {high}]" + ("" if stated else f" ({t('implied')})")
    return "—"


def _statement(statement: Statement, lang: str) -> str:
    return statement.get(lang) or statement.get("en", "")


def _page(template: str, lang: str, **context: object) -> str:
    t = Translator(lang)
    return _environment().get_template(template).render(
        t=t, lang=lang, statement=lambda s: _statement(s, lang), severity=SEVERITY,
        policy=t.policy, problem=lambda name: t.label("problem-", name), accepted=lambda side: _accepted(side, t),
        scope_text=lambda v: scope_text(t, v["scope"], v["type_restriction"] is not None),
        strictness_text=lambda v: strictness_text(t, v["strictness"]), type_policy=lambda ty: type_policy(t, ty),
        **context)


def render_report(document: Document, lang: str = "en") -> str:
    """The HTML report of one aggregated run."""
    by_version: dict[int, list[ClauseRow]] = {}
    for clause in document["clauses"]:
        by_version.setdefault(clause["version"], []).append(clause)
    cells = {(c["version"], c["type"]): c for c in document["matrix"]}
    return _page("report.html", lang, doc=document, clauses_by_version=by_version, cells=cells,
                 group_share=group_share, env_shown=ENV_SHOWN)


def render_matrix(page: dict, lang: str = "en") -> str:
    """The HTML page of several runs side by side (see matrix.matrix)."""
    return _page("matrix.html", lang, page=page)


def render_comparison(comparison: dict, lang: str = "en") -> str:
    """The HTML page of a run-to-run comparison (see compare.compare)."""
    return _page("compare.html", lang, cmp=comparison)


def render_history(page: dict) -> str:
    """The HTML page of one runtime's releases side by side (see history.history); English only."""
    return _environment().get_template("history.html").render(lang="en", page=page, t=Translator("en"))


def render_adequacy(document: dict) -> str:
    """The HTML page of an adequacy scoring (see zoo.adequacy)."""
    return _environment().get_template("adequacy.html").render(lang="en", doc=document)
