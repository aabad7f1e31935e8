"""The report's own words: a sample report's pages, byte for byte, in both languages."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from reports import aggregate
from reports.render import render_report
from tests.report_fixtures.runs import ENVIRONMENT, failing_run

REPO = Path(__file__).resolve().parent.parent
# The sha256 of the sample's pages (see _sample_page). A page that changed on purpose (a template, a
# message, a replay snippet) gets its new digest here, from the failure message.
PAGES = {
    "en": "00be4f056894786b5fd862886256dae206bcb4e1a2a0fed7c833cdb4f3e52cad",
    "zh-TW": "647399ea04f9f86ddcdfd43e57b49f34758afa30f879f8a127c1618c7357aae9",
}


def _sample_page(lang: str) -> str:
    """The failing sample's page with what differs between machines fixed: the clock, the installed
    packages, the checkout's folder (in the replay snippets)."""
    raw = failing_run()
    raw = dataclasses.replace(raw, environment={**ENVIRONMENT, "packages": {"onnx": "1.17.0", "numpy": "2.0.0"}})
    document = {**aggregate(raw), "generated": "2026-11-29T17:01:00+00:00"}
    return render_report(document, lang).replace(str(REPO), "/checkout")


@pytest.mark.parametrize("lang", sorted(PAGES))
def test_a_sample_report_reads_as_it_did(lang: str) -> None:
    digest = hashlib.sha256(_sample_page(lang).encode("utf-8")).hexdigest()
    assert digest == PAGES[lang], f"the sample {lang} page changed: its sha256 is now {digest}"
