"""What schedules save, counted rather than timed: the models and nodes a runtime that compiles
per node compiles, by suite and model form, with the schedule (``--schedule auto``) and drawing
every signature freely (``--schedule off``), and the cases each asks. The runtime is the fake
compiler (tests/impls/model_packing.py's numpy interpreter as a ``model:`` plug-in, counted by
the adapter as every built-in is), run in-process, so the counts do not depend on the machine.

Run from the checkout: ``python benchmarks/bench_schedule.py [--profile standard] [--versions
1,11,12,13]``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.config.options import validate  # noqa: E402
from engine.config.plan import SUITES, plan  # noqa: E402
from engine.judging.run import run_task  # noqa: E402
from engine.judging.session import Nonconformance, Session  # noqa: E402
from generators import profiles  # noqa: E402

FAKE = "model:tests/impls/model_packing.py:correct"


def count(profile: str, versions: str, schedule: str, dtypes: str = "", seed: str = "7") -> tuple[Counter, ...]:
    """(models, nodes) compiled per (suite, form), and cases judged per suite, of one in-process run
    of the fake compiler (``dtypes``: of these types only)."""
    settings = validate({"impl": FAKE, "profile": profile, "seed": seed, "versions": versions, "dtypes": dtypes,
                         "isolation": "none", "compile_cache": "off", "schedule": schedule,
                         "report_dir": str(ROOT / "reports" / "out")})
    profiles.register()
    session, models, nodes, cases = Session(settings), Counter(), Counter(), Counter()
    try:
        for suite in SUITES:
            for task in plan(settings, suite):
                with contextlib.suppress(Nonconformance):
                    run_task(session, task, f"{suite}[{task.id}]")
                results, _, usage, _ = session.take_new()
                cases.update(result.suite for result in results)
                for used in usage:
                    models[used.suite, used.form] += used.compiles
                    nodes[used.suite, used.form] += used.nodes
    finally:
        session.close()
    return models, nodes, cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--versions", default="1,11,12,13")
    args = parser.parse_args()
    free, scheduled = (count(args.profile, args.versions, mode) for mode in ("off", "auto"))
    print(f"fake compiler, {args.profile}, ArgMin {args.versions}: models / nodes compiled, drawing freely -> within "
          f"schedules")
    for key in sorted(free[1] | scheduled[1]):
        ratio = free[1][key] / scheduled[1][key] if scheduled[1][key] else float("inf")
        print(f"  {key[0]:<10} {key[1]:<12} {free[0][key]:>6,} / {free[1][key]:>6,} -> {scheduled[0][key]:>6,} / "
              f"{scheduled[1][key]:>6,}  nodes {ratio:.1f}x fewer")
    total_free, total = sum(free[1].values()), sum(scheduled[1].values())
    print(f"  {'whole run':<23} {sum(free[0].values()):>6,} / {total_free:>6,} -> {sum(scheduled[0].values()):>6,} / "
          f"{total:>6,}  nodes {total_free / total:.1f}x fewer")
    print(f"  cases judged: {dict(free[2])} -> {dict(scheduled[2])}")


if __name__ == "__main__":
    main()
