"""What noxfile needs to build a run's virtualenv: pip's failure as one line naming the problem
and the fix, and the lowest versions a list of requirements allows. Standard library only
(noxfile imports it before any virtualenv exists)."""

from __future__ import annotations

import re


def pip_failure(output: str) -> str:
    """One line for pip's failed install, from its output: a release the index does not have, a
    conflict between the requirements, or pip's own last error."""
    missing = re.search(r"No matching distribution found for (\S+)", output)
    if missing:
        listed = re.search(r"\(from versions: ([^)]*)\)", output)
        versions = [v.strip() for v in listed.group(1).split(",")] if listed else []
        versions = [v for v in versions if v and v != "none"]
        has = (f"it has {len(versions)} releases, {versions[0]} to {versions[-1]}" if versions
               else "it has no release for this Python and platform")
        return (f"{missing.group(1)} is not on the package index ({has}); pick a release it has "
                f"(`pip index versions NAME` lists them)")
    conflict = re.search(r"Cannot install (.+?) because these package versions have conflicting dependencies", output)
    if conflict:
        return (f"the requirements conflict ({' '.join(conflict.group(1).split())} cannot be installed together); "
                f"drop or change the --install or @RELEASE that pins one of them")
    errors = [line.removeprefix("ERROR:").strip() for line in output.splitlines() if line.startswith("ERROR:")]
    last = errors[-1] if errors else " ".join(output.split()[-30:]) or "no output"
    return f"pip could not install the run's requirements ({last}); fix that requirement, or the network, and run again"


def lowest(requirements: list[str]) -> list[str]:
    """Each requirement at the lowest version it allows: ``numpy>=1.26`` becomes ``numpy==1.26``
    (an environment marker stays); a requirement without a lower bound is kept as it is."""
    pinned = []
    for requirement in requirements:
        spec, semicolon, marker = requirement.partition(";")
        bound = re.fullmatch(r"\s*([A-Za-z0-9._\[\]-]+)\s*>=\s*([^,\s]+)\s*", spec)
        pinned.append(f"{bound.group(1)}=={bound.group(2)}{semicolon}{marker}" if bound else requirement)
    return pinned
