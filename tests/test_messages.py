"""The report's own words: the message files (reports/pages/messages/*.yaml) with the same keys and
fields in both languages, and one line for a missing or malformed file wherever it is read."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from reports import aggregate, pytest_plugin
from reports.__main__ import main
from reports.pages import i18n, render
from tests.report_fixtures.runs import passing_run


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_both_languages_have_every_message_with_the_same_fields() -> None:
    tables = i18n.messages()
    assert tables["en"].keys() == tables["zh-TW"].keys()
    assert all(tables["zh-TW"][k] != tables["en"][k] for k in ("title", "conformant", "failures"))
    differ = {k: (_fields(text), _fields(tables["zh-TW"][k])) for k, text in tables["en"].items()
              if _fields(text) != _fields(tables["zh-TW"][k])}
    assert not differ, differ


BROKEN = {
    "missing": (None, "cannot read the file"),
    "not-yaml": ("title: [ArgMin\n", "line 2, column 1: not valid YAML"),
    "empty": ("", "expected 'key: text' lines, found nothing"),
    "a-list": ("- title\n", "expected 'key: text' lines, found a list"),
    "not-a-text": ("title: ArgMin\nconformant: yes\n", "'conformant': True is not a key and a text"),
    "not-utf-8": (b"title: \xff\n", "not UTF-8 text (byte 7)"),
}


def _broken(folder: Path, name: str) -> Path:
    """A copy of the message files with zh-TW.yaml broken as BROKEN[name] says."""
    for lang in i18n.LANGUAGES:
        (folder / f"{lang}.yaml").write_bytes((i18n.MESSAGE_DIR / f"{lang}.yaml").read_bytes())
    text, _ = BROKEN[name]
    path = folder / "zh-TW.yaml"
    if text is None:
        path.unlink()
    else:
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_message_file_is_one_line_naming_it(name: str, tmp_path: Path) -> None:
    path = _broken(tmp_path, name)
    with pytest.raises(i18n.MessagesError) as caught:
        i18n.read(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ") and BROKEN[name][1] in message, message


def test_the_command_line_and_a_run_say_it_in_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _broken(tmp_path, "not-yaml")
    monkeypatch.setattr(i18n, "messages", lambda: i18n.read(tmp_path))
    monkeypatch.setattr(render, "messages", i18n.messages)
    report = tmp_path / "report.json"
    report.write_text(json.dumps(aggregate(passing_run())), encoding="utf-8")
    assert main(["render", str(report), "--out", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith(f"error: {path}: line 2, column 1: not valid YAML: "), said
    with pytest.raises(pytest.UsageError, match=f"^{re.escape(str(path))}: line 2, column 1: not valid YAML"):
        pytest_plugin.pytest_configure(None)
