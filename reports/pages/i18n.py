"""Our own words in the reports, in English and Traditional Chinese. The tables are data, one file a
language beside this module (messages/en.yaml, messages/zh-TW.yaml), so that a translator edits
text, not code. Clause statements are not here: they come from the spec files. Everything a reader
sees is in one of these tables or in the spec; what comes from the implementation or the data
(values, error texts, identifiers) is marked ``translate="no"`` in the pages."""

from __future__ import annotations

import reprlib
from functools import cache
from pathlib import Path

from spec.load import read_yaml

LANGUAGES = ("en", "zh-TW")
MESSAGE_DIR = Path(__file__).resolve().parent / "messages"


class MessagesError(Exception):
    """A message file is missing or malformed; the message is one line naming the file and what is wrong."""


def read(folder: Path = MESSAGE_DIR) -> dict[str, dict[str, str]]:
    """Every language's table: ``folder/<language>.yaml``, a mapping of keys to texts."""
    return {lang: _table(folder / f"{lang}.yaml") for lang in LANGUAGES}


def _table(path: Path) -> dict[str, str]:
    table = read_yaml(path, MessagesError)
    if not isinstance(table, dict):
        found = "nothing" if table is None else f"a {type(table).__name__}"
        raise MessagesError(f"{path}: expected 'key: text' lines, found {found}")
    for key, text in table.items():
        if not (isinstance(key, str) and isinstance(text, str)):
            raise MessagesError(f"{path}: {reprlib.repr(key)}: {reprlib.repr(text)} is not a key and a text; quote "
                                f"what YAML reads as something else ('...')")
    return table


@cache
def messages() -> dict[str, dict[str, str]]:
    """The tables, read once: a run reads them before it loads the implementation under test
    (reports.render.preload), so that no file the implementation could change is read later."""
    return read()


class Translator:
    """``t("key", n=3)``: the message in the chosen language, English where a key is missing."""

    def __init__(self, lang: str) -> None:
        if lang not in LANGUAGES:
            raise ValueError(f"unknown report language {lang!r}; use one of: {', '.join(LANGUAGES)}")
        self.lang = lang
        tables = messages()
        self._own, self._english = tables[lang], tables["en"]

    def __call__(self, key: str, **values: object) -> str:
        text = self._own.get(key) or self._english.get(key, key)
        return text.format(**values) if values else text

    def has(self, key: str) -> bool:
        return key in self._english

    def label(self, prefix: str, name: str) -> str:
        """The words for a name from the data (a profile, a problem), or the name itself."""
        return self(prefix + name) if self.has(prefix + name) else name

    def policy(self, name: str) -> str:
        """A census policy: ``as-keepdims-0`` reads "read as keepdims=0"."""
        if name.startswith("as-") and "-" in name[3:]:
            attribute, value = name[3:].rsplit("-", 1)
            return self("policy-as", attribute=attribute, value=value)
        return self.label("policy-", name)
