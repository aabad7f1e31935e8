"""``python -m spec diff OLD NEW`` prints what changed between two ArgMin versions;
``python -m spec show N`` prints one version's types, attributes and clauses (each marked stated
or inferred); ``python -m spec quotes`` checks every clause's quotes against the ONNX text of the
installed onnx package (exit status 1 when one is not found)."""

from __future__ import annotations

import argparse
import sys

from . import SpecError, load, versions
from .diff import diff


def _show(version: int) -> None:
    vspec = load(version)
    print(f"{vspec.operator}-{vspec.version} ({vspec.domain}, {vspec.support_level})")
    print("T:", ", ".join(vspec.type_names))
    for attribute in vspec.attributes.values():
        print(f"attribute {attribute.name}: default {attribute.default}, accepted {attribute.accepted()}, "
              f"since {attribute.since}")
    for clause in vspec.clauses:
        print(f"{clause.id:<4} {clause.kind:<10} {clause.basis:<16} {clause.title:<24} {clause.text()}")


def _quotes() -> int:
    from .provenance import missing  # imports onnx: only this command needs it

    problems = [line for version in versions() for line in missing(load(version))]
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    quotes = sum(len(c.source.quotes) for version in versions() for c in load(version).clauses)
    print(f"{quotes - len(problems)} of {quotes} quotes found word for word in the installed onnx package's text")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    between = commands.add_parser("diff", help="what changed between two versions")
    between.add_argument("old", type=int)
    between.add_argument("new", type=int)
    one = commands.add_parser("show", help="one version's contents")
    one.add_argument("version", type=int)
    commands.add_parser("quotes", help="check the clauses' quotes against the installed onnx package")
    args = parser.parse_args(argv)
    try:
        if args.command == "show":
            _show(args.version)
            return 0
        if args.command == "quotes":
            return _quotes()
        changes = diff(load(args.old), load(args.new))
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"ArgMin-{args.old} -> ArgMin-{args.new}: {len(changes)} change(s)"
          f" (versions with spec files: {', '.join(map(str, versions()))})")
    for change in changes:
        print(f"  {change}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
