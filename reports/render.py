"""Report documents -> self-contained HTML (Jinja2, autoescaping every value).

The pages carry their CSS inline and a Content-Security-Policy that forbids scripts and every
network fetch, so even a value that slipped past escaping could not run or phone home."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from .aggregate import SEVERITY
from .i18n import Translator

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["heat"] = heat
    env.filters["seconds"] = lambda s: f"{float(s):.1f}"
    return env


def heat(reached: int, possible: int) -> str:
    """Background colour for a coverage fraction: pale red (nothing) to green (everything)."""
    if possible <= 0:
        return "#f1f3f5"
    share = reached / possible
    return f"hsl({round(share * 130)}, 55%, {round(88 - share * 18)}%)"


def _statement(statement: dict, lang: str) -> str:
    return statement.get(lang) or statement.get("en", "")


def _page(template: str, lang: str, **context: object) -> str:
    return _environment().get_template(template).render(
        t=Translator(lang), lang=lang, statement=lambda s: _statement(s, lang),
        severity=SEVERITY, **context)


def render_report(document: dict, lang: str = "en") -> str:
    """The HTML report of one aggregated run."""
    by_version: dict[int, list[dict]] = {}
    for clause in document["clauses"]:
        by_version.setdefault(clause["version"], []).append(clause)
    cells = {(c["version"], c["type"]): c for c in document["matrix"]}
    return _page("report.html", lang, doc=document, clauses_by_version=by_version, cells=cells)


def render_comparison(comparison: dict, lang: str = "en") -> str:
    """The HTML page of a run-to-run comparison (see compare.compare)."""
    return _page("compare.html", lang, cmp=comparison)


def render_adequacy(document: dict) -> str:
    """The HTML page of an adequacy scoring (see zoo.adequacy)."""
    return _environment().get_template("adequacy.html").render(lang="en", doc=document)
