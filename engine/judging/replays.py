"""Every run's counterexamples asked of another run's implementation.

Runs of different releases or runtimes each draw their own sample, so a run that passed a clause
may only have missed the input another run found. A page that puts runs side by side (history,
matrix, compare) therefore asks each implementation the minimized counterexamples of the other
runs' failures: in its own environment and sandbox, through its own adapter, in the model form
they failed in (a packed-only failure through exactly its recorded pack, a failure that needs
history after the models its card records), and judges the answers with the oracle. What it
finds goes into the run's folder as ``replays.json``, which the pages read beside the run's own
results.

``python -m engine.judging.replays RUN_DIR --from OTHER_DIR [OTHER_DIR ...]``, in the environment the run
was made in (nox's history and ecosystem sessions do this for every run they make)."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import spec
from engine.asking.calls import Node, Packed, Reply
from engine.asking.history import Ran, asked
from engine.asking.isolation import Runner
from engine.asking.loader import UsageError, located, model_based
from engine.asking.packing import MAX_NODES
from engine.asking.sandbox import MODES
from engine.contract.forms import SYMBOLIC
from engine.judging.judge import declared_shape
from results import CaseResult, PackNode, RawRun, Unreadable, load, read_json, replays
from results.files import Unsafe, write
from results.outcomes import CRASH, FAIL, OK, RAISED, TIMEOUT, UNSUPPORTED
from results.replays import FAILS, NOT_ASKED, PASSES, REPLAYS
from results.tensors import from_tensor
from results.terminal import error
from results.verdict import scope
from spec.oracle import expect, violations

CAP = 200  # counterexamples asked per pair of runs (a few seconds): the page states it, and what was left out
REPLAYED = (FAIL, CRASH, TIMEOUT)  # the failures worth asking elsewhere: wrong answers, crashes, hangs


@dataclass(frozen=True)
class Replay:
    """One counterexample of the run in ``source`` asked here."""

    source: str  # the other run's label: its implementation's version, or its --impl
    anchor: str  # the failure's card in the other run's report
    version: int
    clause: str
    type_name: str
    form: str | None
    packed: int | None  # the nodes of its recorded pack, for a packed-only failure
    outcome: str  # FAILS, PASSES or NOT_ASKED
    detail: str  # the clause it breaks here and how, or why it could not be asked


def label(raw: RawRun) -> str:
    """How the pages name a run (results.replays.label)."""
    return replays.label(raw.environment.get("version"), raw.info.impl, raw.environment.get("isa_cap"))


def counterexamples(raw: RawRun, document: dict, cap: int = CAP) -> tuple[list[tuple[str, CaseResult]], int]:
    """The failure cards of a run worth asking elsewhere (wrong answers, crashes and hangs on
    valid inputs), each as (its anchor, the raw result whose counterexample it shows), at most
    ``cap``; and how many were left out."""
    by_input = {(r.version, r.clause, r.type_name, r.form, tuple(r.counterexample.input.values)): r
                for r in raw.results if r.kind == "semantic" and r.counterexample is not None}
    rows: dict[tuple, list[tuple[str, CaseResult]]] = {}
    for card in document.get("failures", []):
        if card.get("kind") != "semantic" or card.get("outcome") not in REPLAYED:
            continue
        key = (card["version"], card["clause"], card["type"], card.get("form"),
               tuple(card["counterexample"]["input"]["values"]))
        if key in by_input:
            rows.setdefault(key[:3], []).append((str(card["anchor"]), by_input[key]))
    # Every row's first card before any row's second: a cap leaves out repeats, not rows.
    chosen = [card for depth in itertools.zip_longest(*rows.values()) for card in depth if card is not None]
    return chosen[:cap], max(0, len(chosen) - cap)


def _reply(runner: Runner, result: CaseResult, forms: bool) -> Reply:
    """The implementation's answer to the counterexample, asked as it failed: its recorded pack
    exactly, or its one-node model in its form (a plain function has neither: its input alone),
    after the models it needs run first where its card records a history."""
    ce = result.counterexample
    packed = ce.pack is not None and forms
    card = ce.pack.nodes if packed else [PackNode(ce.input, ce.attributes)]
    position = ce.pack.position if packed else 0
    models = [(m.version, (m.form or SYMBOLIC) if forms else None, m.nodes) for m in ce.history or []]
    models.append((result.version, ce.pack.form if packed else (result.form or SYMBOLIC) if forms else None, card))
    if any(not 1 <= len(nodes) <= MAX_NODES for _, _, nodes in models) or not 0 <= position < len(card):
        raise ValueError("no model the suite builds")  # a record another run could have forged
    calls, units = asked([Ran(version, form, packed=Packed(tuple(Node(from_tensor(n.input), n.attributes)
                                                                 for n in nodes), 0))
                          for version, form, nodes in models])
    return runner.call_many(calls, units=units, exact=True)[units[-1][position]]


def judged(result: CaseResult, reply: Reply | None, not_implemented: Sequence[str]) -> tuple[str, str]:
    """(outcome, detail) of one replayed counterexample, by the oracle (no ``reply`` where its type
    is not implemented here)."""
    if result.type_name in not_implemented:
        return NOT_ASKED, f"{result.type_name} is not implemented here"
    if reply.status == UNSUPPORTED:
        return NOT_ASKED, f"answered unsupported: {reply.error}"
    if reply.status == RAISED:
        return NOT_ASKED, f"the model was refused: {reply.error}"
    if reply.status != OK:  # a crash, a hang, an answer far too large
        return FAILS, f"{reply.status}: {reply.error}"
    vspec = spec.load(result.version)
    ce = result.counterexample
    data = from_tensor(ce.pack.nodes[ce.pack.position].input if ce.pack else ce.input)
    expectation = expect(vspec, data, ce.attributes)
    found = violations(vspec, expectation, data, reply.value, by_value=reply.by_value)
    declared = declared_shape(vspec, expectation, reply.declared)
    first = found[0] if found else declared
    return (PASSES, "answered right") if first is None else (FAILS, f"{first.clause.id} {first.problem}: "
                                                                    f"{first.message}")


def replay(runner: Runner, own: RawRun, others: Sequence[tuple[RawRun, dict]], cap: int = CAP) -> dict:
    """Every other run's counterexamples (each run given as its raw results and report document)
    asked of ``runner``'s implementation, whose own run is ``own``: the data of ``replays.json``."""
    forms = model_based(own.info.impl)
    not_implemented = _not_implemented(own)
    entries, left_out, started = [], {}, time.monotonic()
    for other, document in others:
        chosen, left_out[label(other)] = counterexamples(other, document, cap)
        for card, result in chosen:
            here = not_implemented.get(result.version, ())
            try:  # a type not implemented here is not asked at all
                reply = None if result.type_name in here else _reply(runner, result, forms)
                outcome, detail = judged(result, reply, here)
            except (ValueError, TypeError, KeyError, IndexError):  # another run's record, as untrusted as the run
                outcome, detail = NOT_ASKED, "its recorded input cannot be read"
            entries.append(Replay(label(other), card, result.version, result.clause, result.type_name,
                                  result.form, result.packed, outcome, detail))
    return {"run": label(own), "cap": cap, "left_out": left_out, "seconds": round(time.monotonic() - started, 2),
            "replays": [asdict(entry) for entry in entries]}


def _not_implemented(raw: RawRun) -> dict[int, tuple[str, ...]]:
    """Per version, the types the run found not implemented (results.verdict.scope)."""
    types = tuple(sorted({r.type_name for r in raw.results}))
    return {version: scope(raw.results, version, types).not_implemented for version in raw.info.versions}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.judging.replays", description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the run's report folder: its implementation is asked")
    parser.add_argument("--from", dest="others", type=Path, nargs="+", required=True,
                        help="the report folders whose counterexamples are asked")
    parser.add_argument("--cap", type=int, default=CAP, help=f"counterexamples per other run (default {CAP})")
    parser.add_argument("--sandbox", choices=MODES, default="require",
                        help="the worker's sandbox (default require: a report folder is untrusted; the runs "
                             "nox -s history and ecosystem have just made are asked as they ran, auto)")
    args = parser.parse_args(argv)
    try:
        own = load(args.run)
        named = read_json(args.run / "report.json").get("certificate", {}).get("implementation")
        if named != own.info.impl:  # what nox installed for is the report's word: run nothing else
            raise UsageError(f"{args.run}: report.json names {named!r} and its raw results {own.info.impl!r}; "
                             f"ask only a report folder a run wrote")
        others = [(load(folder), read_json(Path(folder) / "report.json")) for folder in args.others
                  if Path(folder).resolve() != args.run.resolve()]
        info = own.info
        runner = Runner(located(info.impl, info.started_in), timeout=float(info.timeout_s),
                        log=args.run / "replays.log", memory_limit=info.memory_limit_bytes, sandbox_mode=args.sandbox)
    except (Unreadable, OSError, UsageError, AttributeError, TypeError, ValueError) as exc:
        error(exc)
        return 2
    try:
        data = replay(runner, own, others, args.cap)
    finally:
        runner.close()
    try:
        write(args.run, REPLAYS, json.dumps(data, indent=1).encode())
    except (OSError, Unsafe) as exc:
        error(exc)
        return 2
    failing = sum(entry["outcome"] == FAILS for entry in data["replays"])
    print(f"{label(own)}: {len(data['replays'])} counterexamples of {len(others)} other run(s) asked in "
          f"{data['seconds']} s; {failing} fail here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
