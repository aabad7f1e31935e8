"""The HTML pages in a real browser (headless Chromium): they load without console errors (CSP
violations, blocked fetches, script errors all land there) and show the verdicts; they never
scroll sideways at 1400 px or on a 390 px phone; every text meets WCAG AA contrast; and the
Traditional Chinese report has no English words beyond identifiers, type names and numbers."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import spec
from engine.asking.sandbox import DENIES
from reports import aggregate, write_reports
from reports.__main__ import main
from reports.pages.render import render_report
from tests.browser import CONTRAST, FLAGS, OVERFLOW, WORDS, chromium, measure
from tests.report_fixtures.runs import failing_run, hostile_run, passing_run, refusing_run

ROOT = Path(__file__).resolve().parent.parent


def _load(page: Path, profile: Path) -> tuple[str, list[str]]:
    """(the DOM after loading, the console lines Chromium logged)."""
    command = [chromium(), *FLAGS, f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000", "--dump-dom", page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
    return done.stdout, [line for line in done.stderr.splitlines() if "CONSOLE" in line]


def test_console_errors_are_detected(tmp_path: Path) -> None:
    """The probe itself works: a page that logs an error is caught."""
    page = tmp_path / "probe.html"
    page.write_text("<!DOCTYPE html><p>x</p><script>console.error('probe-error-42')</script>", encoding="utf-8")
    _, console = _load(page, tmp_path / "profile")
    assert any("probe-error-42" in line for line in console)


def test_failing_report_loads_cleanly_and_shows_verdicts(tmp_path: Path) -> None:
    html = write_reports(failing_run(), tmp_path / "report")["html"]
    dom, console = _load(html, tmp_path / "profile")
    assert console == []
    assert 'data-version="1" data-verdict="conformant"' in dom
    assert 'data-version="13" data-verdict="non-conformant"' in dom
    assert "Non-conformant" in dom and "-3.3895313892515355e+38" in dom


def test_chinese_report_loads_cleanly(tmp_path: Path) -> None:
    html = write_reports(passing_run(), tmp_path / "report", lang="zh-TW")["html"]
    dom, console = _load(html, tmp_path / "profile")
    assert console == []
    assert dom.count('data-verdict="conformant"') == 2 and "符合" in dom


def _pages(tmp_path: Path) -> dict[str, str]:
    """Our pages at their worst: long unbroken words from the implementation, merged failure
    cards, every section filled, both languages, and the runtime matrix over three runs."""
    pages = {"hostile": render_report(aggregate(hostile_run())), "refusing": render_report(aggregate(refusing_run())),
             "failing-zh": render_report(aggregate(failing_run()), "zh-TW")}
    for name, raw in (("ort", refusing_run()), ("stub", failing_run()), ("passing", passing_run())):
        write_reports(raw, tmp_path / name)
    out = tmp_path / "matrix.html"
    assert main(["matrix", *(str(tmp_path / n) for n in ("ort", "stub", "passing")), "--out", str(out)]) == 0
    pages["matrix"] = out.read_text(encoding="utf-8")
    return pages


@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_no_page_scrolls_sideways(width: int, tmp_path: Path) -> None:
    measured = measure(_pages(tmp_path), width, OVERFLOW, tmp_path / "probe")
    assert len(measured) == 4
    for name, found in measured.items():
        assert found["scrollWidth"] <= found["width"], (name, found)


def test_the_overflow_probe_sees_a_page_that_scrolls_sideways(tmp_path: Path) -> None:
    found = measure({"wide": '<!DOCTYPE html><div style="width: 600px">wide</div>'}, 390, OVERFLOW, tmp_path)["wide"]
    assert found["scrollWidth"] > found["width"] and found["wide"] == ["div. 608"]  # 600 px and the body's margin


def test_every_text_meets_wcag_aa_contrast(tmp_path: Path) -> None:
    for name, found in measure(_pages(tmp_path), 1400, CONTRAST, tmp_path / "probe").items():
        assert found["checked"] > 100 and found["failures"] == [], (name, found["failures"])


def test_the_contrast_probe_sees_grey_on_grey(tmp_path: Path) -> None:
    page = ('<!DOCTYPE html><p style="color: #9aa1ad; background: #f1f3f5">not run</p>'
            '<p style="color: #fff; background: rgba(0, 0, 0, .1)">faint</p><p>fine</p>')
    found = measure({"grey": page}, 800, CONTRAST, tmp_path)["grey"]
    assert found["checked"] == 3 and len(found["failures"]) == 2 and found["failures"][0].startswith("2.3")


# Where the verdicts and the first failure card end on a page (CSS pixels from the top), and how
# tall what the sandbox's record takes once opened.
FIRST_SCREEN = """(doc, win) => {
  const bottom = (selector) => Math.round(doc.querySelector(selector).getBoundingClientRect().bottom + win.scrollY);
  const details = doc.querySelector("#how-it-ran");
  const found = {verdicts: bottom("#verdicts"), card_heading: bottom("article.failure h4"),
                 closed: details.getBoundingClientRect().height};
  details.open = true;
  return {...found, opened: details.getBoundingClientRect().height};
}"""
# A sandbox as a Linux run records it: every denial, the filter, each bound and the names passed.
SANDBOX = {"mechanism": "bubblewrap 0.11.0", "denies": list(DENIES), "reason": None,
           "seccomp": "seccomp: socket families by an allowlist (no Unix-domain sockets); no io_uring (libseccomp)",
           "bounds": [{"what": what, "limit": limit, "by": by, "reason": None} for what, limit, by in
                      (("memory", 4 << 30, "cgroup-v2"), ("processes", 32768, "cgroup-v2"),
                       ("tmpfs", 4 << 30, "bubblewrap"), ("output", 8 << 20, "pipe"))],
           "passed_env": ["LANG", "PATH"]}


def test_the_verdicts_and_the_first_finding_are_on_the_first_screen(tmp_path: Path) -> None:
    """At 1400 x 1000 the certificate's facts are one compact block and the sandbox's record is
    behind a disclosure, so the first failure card's heading is on the first screen; opened,
    the record is all there."""
    run = failing_run()
    run.environment["sandbox"] = SANDBOX
    found = measure({"report": render_report(aggregate(run))}, 1400, FIRST_SCREEN, tmp_path, height=1000)["report"]
    assert found["verdicts"] < found["card_heading"] <= 1000, found
    assert found["closed"] < 40 and found["opened"] > 300, found


# What may stay in Latin letters in the zh-TW report: names of the standard and its data (True and
# False are the values the ONNX text gives select_last_index; L, I and S name the extents of the
# tile grid).
IDENTIFIERS = {"ArgMin", "ONNX", "True", "False", "IEEE", "NaN", "SHA", "Python", "PYTHONPATH", "T", "r", "n", "L",
               "I", "S", "inf", "int", "int64", "axis", "keepdims", "select_last_index", "NotImplementedError",
               "numpy", "onnx", "reference", "checker"}  # packages, and the modules onnx.reference and onnx.checker


def _latin_words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z][A-Za-z0-9_]*", text))


def test_the_chinese_report_has_no_english_words(tmp_path: Path) -> None:
    runs = {"failing": failing_run(), "refusing": refusing_run(), "hostile": hostile_run()}
    pages = {name: render_report(aggregate(raw), "zh-TW") for name, raw in runs.items()}
    for name, seen in measure(pages, 1400, WORDS, tmp_path).items():
        allowed = IDENTIFIERS | set(spec.catalogue()) | {c.id for v in spec.load_all() for c in v.clauses}
        allowed |= _latin_words(runs[name].info.impl)  # the page's title names the implementation
        words = _latin_words(" ".join([seen["text"], seen["title"], *seen["titles"]]))
        assert "符合性" in seen["text"] and len(seen["text"]) > 2000
        assert words - allowed == set(), name


def test_the_word_probe_finds_english(tmp_path: Path) -> None:
    page = render_report(aggregate(failing_run()), "en")
    words = _latin_words(measure({"en": page}, 1400, WORDS, tmp_path)["en"]["text"])
    assert {"Failures", "conformant", "Clause"} <= words


@pytest.mark.e2e
def test_a_standard_run_against_onnxruntime_is_small_and_fits_a_phone(tmp_path: Path) -> None:
    """The real thing: README's standard run. The page stays under 250 KB, the raw results under
    2 MB, and neither width scrolls sideways."""
    done = subprocess.run([sys.executable, "-m", "suites", "--profile", "standard", "--seed", "7", "--report-dir",
                           str(tmp_path / "run")], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]  # onnxruntime refuses some types
    html = tmp_path / "run" / "report.html"
    assert html.stat().st_size <= 250_000
    assert (tmp_path / "run" / "raw.json.gz").stat().st_size <= 2_000_000
    page = html.read_text(encoding="utf-8")
    assert page.count('class="failure"') <= 3  # one card per root cause, not one per type and version
    for width in (1400, 390):
        found = measure({"run": page}, width, OVERFLOW, tmp_path / str(width))["run"]
        assert found["scrollWidth"] <= found["width"], (width, found)
