"""Measuring our pages in real headless Chromium, although they forbid scripts.

The page under test is never modified: a probe page of our own embeds it, byte for byte, in an
iframe of exactly the width to test (``srcdoc``, so it is same-origin with the probe and keeps
its own Content-Security-Policy), runs a measuring function over the framed document once it has
loaded, and writes the result as JSON into its own DOM, which ``--dump-dom`` prints. An iframe
is used because headless Chromium will not make a window narrower than 500 px, and a phone is 390."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

INSTALL = "headless Chromium is needed: install Debian's package with `apt-get install -y chromium`"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]

_PROBE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<style>body {{ margin: 0 }} iframe {{ border: 0; display: block }}</style></head>
<body>{frames}<pre id="probe">pending</pre>
<script>
const measure = {measure};
// The window's load event waits for every frame to load.
window.addEventListener("load", () => {{
  const results = {{}};
  for (const frame of document.querySelectorAll("iframe")) {{
    try {{ results[frame.name] = measure(frame.contentDocument, frame.contentWindow); }}
    catch (error) {{ results[frame.name] = {{error: String(error)}}; }}
  }}
  document.getElementById("probe").textContent = JSON.stringify(results);
}});
</script></body></html>"""
_FRAME = '<iframe name="{name}" width="{width}" height="{height}" srcdoc="{page}"></iframe>'

# Page overflow: the document's scroll width against its viewport, and, to say where it comes
# from, the elements that stick out and are not inside a horizontally scrolling box.
OVERFLOW = """(doc, win) => {
  const width = doc.documentElement.clientWidth;
  const scrolls = (el) => { for (let e = el.parentElement; e; e = e.parentElement) {
      if (["auto", "scroll"].includes(win.getComputedStyle(e).overflowX)) return true; } return false; };
  const wide = [];
  for (const el of doc.body.querySelectorAll("*")) {
    const right = el.getBoundingClientRect().right;
    if (right > width + 0.5 && !scrolls(el)) {
      wide.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(right)}`);
    }
  }
  return {scrollWidth: doc.documentElement.scrollWidth, width: width, wide: wide.slice(0, 12)};
}"""

# WCAG 2 contrast of every piece of visible text against what is behind it: the background
# colours of the element and its ancestors composited (alpha included), and where a gradient is
# painted over them (hatching) its darkest stop as well.
CONTRAST = """(doc, win) => {
  const rgba = (text) => {
    const p = text.match(/[\\d.]+/g).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => under.map((v, i) => top[i] * top[3] + v * (1 - top[3]));
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const style = win.getComputedStyle(e);
      const stops = (style.backgroundImage.match(/rgba?\\([^)]*\\)/g) || []).map(rgba);
      if (stops.length) layers.push(stops.reduce((a, b) => (b[3] > a[3] ? b : a)));
      const colour = rgba(style.backgroundColor);
      if (colour[3] > 0) { layers.push(colour); if (colour[3] >= 1) break; }
    }
    return layers.reverse().reduce((rgb, layer) => over(layer, rgb), [255, 255, 255]);
  };
  const luminance = (rgb) => {
    const c = rgb.map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4));
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const failures = []; let checked = 0;
  for (const el of doc.body.querySelectorAll("*")) {
    const text = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim();
    if (!text || !el.getClientRects().length) continue;
    const style = win.getComputedStyle(el);
    const bg = behind(el);
    const fg = over(rgba(style.color), bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
    const needed = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
    checked += 1;
    if (ratio < needed) {
      failures.push(`${ratio.toFixed(2)} < ${needed}: ${el.tagName.toLowerCase()}.${el.className} `
                    + `"${text.slice(0, 30)}" ${style.color} on rgb(${bg.map(Math.round)})`);
    }
  }
  return {checked: checked, failures: failures.slice(0, 20)};
}"""

# The words a reader sees (text and tooltips), leaving out what is marked translate="no":
# values and identifiers from the data.
WORDS = """(doc, win) => {
  const body = doc.body.cloneNode(true);
  body.querySelectorAll('[translate="no"], style, script').forEach((e) => e.remove());
  const titles = [...body.querySelectorAll("[title]")].map((e) => e.getAttribute("title"));
  doc.body.replaceWith(body);
  return {text: body.innerText, titles: titles, title: doc.title};
}"""


def chromium() -> str:
    found = shutil.which("chromium") or (Path("/usr/bin/chromium").is_file() and "/usr/bin/chromium")
    if not found:
        pytest.fail(INSTALL, pytrace=False)
    return found


def measure(pages: dict[str, str], width: int, script: str, workdir: Path, height: int = 900) -> dict[str, Any]:
    """Run ``script`` (a JavaScript function of a framed document and its window) over each of
    ``pages`` (name -> HTML text), each framed at ``width`` CSS pixels, in one browser; the JSON
    result per name."""
    workdir.mkdir(parents=True, exist_ok=True)
    probe = workdir / "probe.html"
    frames = "".join(_FRAME.format(name=html.escape(name), width=width, height=height,
                                   page=html.escape(page, quote=True)) for name, page in pages.items())
    probe.write_text(_PROBE.format(frames=frames, measure=script), encoding="utf-8")
    command = [chromium(), *FLAGS, f"--user-data-dir={workdir / 'profile'}", f"--window-size={width + 40},{height}",
               "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found and found[1] != "pending", f"the probe did not run: {done.stdout[-2000:]}"
    results = json.loads(html.unescape(found[1]))
    errors = {name: result["error"] for name, result in results.items() if "error" in result}
    assert not errors, errors
    return results
