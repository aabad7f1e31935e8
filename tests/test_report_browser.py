"""The HTML report in a real browser (headless Chromium): it loads without console errors (CSP
violations, blocked fetches, script errors all land there) and shows the verdicts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reports import write_reports
from tests.report_fixtures.runs import failing_run, passing_run

INSTALL = "headless Chromium is needed: install Debian's package with `apt-get install -y chromium`"


def _chromium() -> str:
    found = shutil.which("chromium") or (Path("/usr/bin/chromium").is_file() and "/usr/bin/chromium")
    if not found:
        pytest.fail(INSTALL, pytrace=False)
    return found


def _load(page: Path, profile: Path) -> tuple[str, list[str]]:
    """(the DOM after loading, the console lines Chromium logged)."""
    command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
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
