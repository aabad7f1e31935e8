"""The CI recipes in ci-examples/ stay runnable: every suite command in them takes the suite's
options (its shard among as many shards as the matrix has jobs), every baseline they name is one,
and the caches they keep hold the virtualenv, so a shard reinstalls nothing."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

import noxfile
from engine.config.options import validate
from reports.folders import baseline
from suites.__main__ import _parser

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "ci-examples"
# What each CI system puts where a job's shard number and the job count go.
VARIABLES = {"github-actions.yml": {"${{ matrix.shard }}": "{k}"},
             "gitlab-ci.yml": {'"$CI_NODE_INDEX/$CI_NODE_TOTAL"': "{k}/{n}", '"shard-$CI_NODE_INDEX"': "shard-{k}"}}


def _commands(recipe: dict) -> list[str]:
    """Every shell line of every job (GitHub's ``run`` steps, GitLab's ``script`` lists)."""
    jobs = recipe["jobs"].values() if "jobs" in recipe else [v for v in recipe.values() if isinstance(v, dict)]
    lines = []
    for job in jobs:
        lines += [step["run"] for step in job.get("steps", []) if "run" in step]
        lines += job.get("before_script", []) + job.get("script", [])
    return lines


def _jobs(recipe: dict) -> int:
    """How many shard jobs the recipe starts: the matrix's size, or GitLab's ``parallel``."""
    if "jobs" in recipe:
        return len(recipe["jobs"]["shard"]["strategy"]["matrix"]["shard"])
    return int(recipe["shard"]["parallel"])


def _nox_arguments(line: str, session: str) -> list[str]:
    """The arguments after ``nox -s SESSION --``, up to a shell operator."""
    words = shlex.split(line.split("||")[0])
    start = words.index(session)
    assert words[start - 2:start] == ["nox", "-s"] and words[start + 1] == "--", line
    return words[start + 2:]


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_every_shard_command_is_a_valid_run_of_its_part(name: str) -> None:
    text = (RECIPES / name).read_text(encoding="utf-8")
    recipe = yaml.safe_load(text)
    count = _jobs(recipe)
    runs = [line for line in _commands(recipe) if "nox -s conformance" in line]
    assert runs, name
    for k in range(1, count + 1):
        for line in runs:
            for variable, value in VARIABLES[name].items():
                line = line.replace(variable, value.format(k=k, n=count))
            args, passthrough = _parser().parse_known_args(_nox_arguments(line, "conformance"))
            assert not passthrough, line
            settings = validate(vars(args))
            assert settings.shard is not None and (settings.shard.index, settings.shard.count) == (k, count), line
            assert args.report_dir == f"shard-{k}", line


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_the_merge_job_names_a_real_baseline_and_the_sessions_exist(name: str) -> None:
    recipe = yaml.safe_load((RECIPES / name).read_text(encoding="utf-8"))
    merges = [line for line in _commands(recipe) if "nox -s merge" in line]
    assert merges, name
    for line in merges:
        args = _nox_arguments(line, "merge")
        source, expected = baseline.read(ROOT / args[args.index("--baseline") + 1])
        assert expected and "baseline.json" in source
    assert {"conformance", "merge"} <= set(noxfile.nox.registry.get())


def test_the_ci_page_says_where_the_recipes_baseline_comes_from() -> None:
    """docs/how-to/ci.md names the profile and suite commit of the run ci-examples/baseline.json was written from."""
    written = json.loads((RECIPES / "baseline.json").read_text(encoding="utf-8"))
    page = " ".join((ROOT / "docs" / "how-to" / "ci.md").read_text(encoding="utf-8").split())
    assert f"from the report of a {written['profile']} run at `{written['suite_commit'][:7]}`" in page


def _cached(recipe: dict) -> list[str]:
    """The folders the shard job keeps between runs."""
    if "jobs" in recipe:
        steps = recipe["jobs"]["shard"]["steps"]
        return [line.strip() for step in steps if step.get("uses", "").startswith("actions/cache@")
                for line in step["with"]["path"].splitlines()]
    return recipe["shard"]["cache"]["paths"]


@pytest.mark.parametrize("name", sorted(VARIABLES))
def test_the_shard_jobs_keep_the_virtualenv_and_the_compile_cache(name: str) -> None:
    recipe = yaml.safe_load((RECIPES / name).read_text(encoding="utf-8"))
    kept = [path.rstrip("/") for path in _cached(recipe)]
    assert ".nox" in kept, kept  # the conformance virtualenv (tools.sessions.venv reuses it)
    if "jobs" in recipe:
        assert "~/.cache/argmin-conformance" in kept, kept
    else:  # the compile cache follows XDG_CACHE_HOME into the kept folder
        assert recipe["variables"]["XDG_CACHE_HOME"] == "$CI_PROJECT_DIR/.cache" and ".cache" in kept, kept
