"""The run's options, declared once for both front doors (``python -m suites`` and plain
``pytest suites``), and their validation into one-line usage errors."""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import spec
from engine import runtimes
from engine.asking.isolation import ISOLATION_MODES, Runner
from engine.asking.limits import PROCESS_LIMIT
from engine.asking.loader import UsageError, check, folder_name, model_based, portable
from engine.asking.sandbox import MODES
from engine.asking.worker import DEFAULT_MEMORY_LIMIT
from engine.config import isa, shards
from engine.config.schedules import record as schedules_record
from engine.contract import forms
from engine.runtimes.entry import COMPILE_KEYS
from generators import profiles, schedule
from results import IMPLEMENTATION_LOG, RunInfo, Unreadable, read_json
from results.sizes import format_size
from results.verdict import CLAIMS

LANGS = ("en", "zh-TW")
PACKING = ("on", "off")
SCHEDULES = ("auto", "on", "off")
# Without --report-dir a run writes into REPORTS/<implementation> of the folder it was started in
# (default_report_dir): one folder per implementation, so a run replaces only its own earlier report.
REPORTS = "argmin-reports"
DEFAULT_COMPILE_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "argmin-conformance"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SMALLEST_LIMIT = 256 << 20  # a worker with numpy and a runtime holds about 100 MiB before any call

# name, metavar, help, default; every option takes one value.
OPTIONS = (
    ("--impl", "SPEC", "implementation under test: module:function, path/to/file.py:function, "
                       "model:MODULE_OR_PATH:FUNCTION, "
                       + ", ".join(runtime.usage for runtime in runtimes.RUNTIMES[:-1])
                       + f" or {runtimes.RUNTIMES[-1].usage}", runtimes.DEFAULT.word),
    ("--forms", "LIST", "model forms for implementations the suite builds models for: "
                        f"{','.join(forms.FORMS)} (default: all; {forms.SYMBOLIC} on the profile's volume, "
                        f"{' and '.join(forms.QUOTA_FORMS)} on a quota of cases stratified by shape)", None),
    ("--versions", "LIST", "comma-separated ArgMin versions to test", None),
    ("--dtypes", "LIST", "comma-separated element types: restricts the claim to this subset of T", None),
    ("--profile", "NAME", "generated cases per test, after the special-value floor: "
     + ", ".join(f"{name} ({n}, {profiles.LABELS[name]['en']})" for name, n in profiles.CASES.items()), "standard"),
    ("--seed", "N", "Hypothesis seed (random when omitted; the report records it)", None),
    ("--report-dir", "DIR", f"where the reports are written (default: {REPORTS}/IMPLEMENTATION in the folder the "
                            f"run is started in, one folder per implementation; a run there replaces only a report of "
                            f"the same --impl value)", None),
    ("--timeout", "SECONDS", "time allowed for one call of the implementation", "10"),
    ("--isolation", "MODE", "process (default: the implementation runs in a worker process) or none", "process"),
    ("--sandbox", "MODE", "auto (default: each worker process runs in a sandbox where the system offers one, Linux "
                          "with bubblewrap; the report says whether it did), require (stop when there is none) or off",
     "auto"),
    ("--memory-limit", "SIZE", f"memory the implementation's worker may hold, with what its processes and its "
                               f"sandbox's tmpfs mounts hold where a control group bounds them (default "
                               f"{format_size(DEFAULT_MEMORY_LIMIT)}; e.g. 512M, 16G, none); holding more is a crash, "
                               f"out of memory", format_size(DEFAULT_MEMORY_LIMIT)),
    ("--process-limit", "N", f"processes and threads the implementation's worker may run, where a control group "
                             f"bounds them (default {PROCESS_LIMIT}); starting more is a crash, out of processes",
     str(PROCESS_LIMIT)),
    ("--isa", "NAME", f"cap the instruction set of a built-in whose runtime offers a cap "
                      f"({', '.join(isa.offering())}): e.g. avx2 sets OpenVINO's ONEDNN_MAX_CPU_ISA=AVX2 in its "
                      f"worker's environment; native clears it (default: the run's environment decides; the report "
                      f"records the cap and the CPU's extensions)", None),
    ("--impl-version", "TEXT", "the version of a plug-in, for the certificate, where its module states none (a "
                               "module-level __version__ or a version() function); without either the certificate "
                               "says 'version not stated'", None),
    ("--pass-env", "NAMES", "comma-separated environment variables (or patterns, e.g. MYRT_*) the implementation's "
                            "worker gets from the run's environment, besides PATH, the locale, TZ and what a built-in "
                            "runtime declares; nothing else of it reaches the worker (the report lists the names)",
     None),
    ("--sandbox-read", "PATHS", f"folders the implementation's sandbox may read, separated by '{os.pathsep}', besides "
                                f"/usr, the interpreter, its packages, the suite and the plug-in's folder (e.g. "
                                f"/opt/myruntime)", None),
    ("--lang", "LANG", "report language: en or zh-TW", "en"),
    ("--packing", "on|off", "on (default): valid and census cases in every model form are asked "
                            "through packed models, many independent ArgMin nodes compiled as one (a failure is "
                            "narrowed down to its case and asked again alone); off: one model per case", "on"),
    ("--compile-key", "node|shape|model", "what one compile of the implementation is paid for, which decides whether "
                                          "each test draws its cases within a schedule: node (TVM, IREE, OpenVINO; "
                                          "the default for model: and backend: plug-ins), shape (tinygrad) or model "
                                          "(onnxruntime, onnx.reference, tract: no schedule); a built-in states its "
                                          "own", None),
    ("--schedule", "auto|on|off", "auto (default): where the implementation compiles per node or per shape (see "
                                  "--compile-key), each test of the quick and standard profiles draws its cases "
                                  "within a schedule of "
                                  + " / ".join(f"{n} ({p})" for p, n in schedule.SIZES.items() if p != "certify")
                                  + " signatures (and, per shape, shapes) that covers every rank, axis spelling and "
                                    "attribute value and rotates with the seed; on: at every profile (certify "
                                  + f"{schedule.SIZES['certify']}); off: every case draws its signature freely",
     "auto"),
    ("--compile-cache", "DIR|off", "where runtimes that compile keep the models they compiled, one folder per "
                                   "runtime and release, so that a second process or a later run loads them instead "
                                   f"of compiling again (default {DEFAULT_COMPILE_CACHE}); off: compile everything",
     str(DEFAULT_COMPILE_CACHE)),
    ("--shard", "K/N", "run only the K-th of N parts of this run (balanced by expected cost; the same tests, "
                       "seeds and cases as on one machine); `nox -s merge` makes one report of the N "
                       "shards' folders", None),
    ("--baseline", "DIR|FILE", "a previous report (its folder or report.json), or an expectations file from "
                               "`nox -s baseline`: exit 0 when every failure found is in it, 1 for a new one (the "
                               "verdicts are unchanged)", None),
    ("--claim", "TYPES", "implemented (default: the headline covers the types of T the implementation implements, "
                         "and names the others) or all (every type of T, or of --dtypes, must be implemented: a type "
                         "not implemented is a failure)", "implemented"),
)


@dataclass(frozen=True)
class Settings:
    impl: str
    versions: tuple[int, ...]
    type_names: tuple[str, ...] | None  # --dtypes: the claim restricted to these ONNX types
    profile: str
    seed: int | None
    report_dir: Path
    timeout: float
    isolation: str
    lang: str
    memory_limit: int | None  # resident bytes the worker process may hold; None: no limit
    forms: tuple[str, ...] | None = None  # model forms (engine.contract.forms); None for a plain function plug-in
    claim: str = "implemented"  # --claim (results.verdict.CLAIMS)
    packing: bool = True  # --packing: packed models for valid and census cases (engine.asking.packing)
    compile_cache: Path | None = None  # --compile-cache: the folder of every runtime's compile cache; None: off
    sandbox: str = "auto"  # --sandbox (engine.asking.sandbox.MODES): where worker processes run
    shard: shards.Shard | None = None  # --shard K/N: this process runs the K-th of N parts of the run
    baseline: Path | None = None  # --baseline: the failures this run is compared with (reports.baseline)
    process_limit: int = PROCESS_LIMIT  # --process-limit: processes and threads a worker may run (engine.asking.limits)
    pass_env: tuple[str, ...] = ()  # --pass-env: variables of the run's environment its workers get
    sandbox_read: tuple[str, ...] = ()  # --sandbox-read: folders a worker's sandbox shows besides what it needs
    impl_version: str | None = None  # --impl-version: a plug-in's version as its vendor states it
    isa: str | None = None  # --isa (engine.config.isa.parse): the cap's value, "native", or None where not given
    compile_key: str = "model"  # --compile-key (engine.runtimes.entry.COMPILE_KEYS): what a compile is paid for
    schedule: str = "auto"  # --schedule (SCHEDULES): whether tests draw within a schedule (``schedule_size``)
    report_dir_given: bool = True  # False: report_dir is default_report_dir's, which check_report_dir guards

    @property
    def schedule_size(self) -> int | None:
        """Entries of each test's schedule (generators.schedule), or None: every case draws freely."""
        on = self.schedule == "on" or (self.schedule == "auto" and self.compile_key != "model"
                                       and self.profile != "certify")
        return schedule.SIZES[self.profile] if on and self.forms else None


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def memory_limit(text: str) -> int | None:
    """Bytes from a --memory-limit value (512M, 8G, 1.5G, 8GiB, 4 GiB, none); raises UsageError."""
    value = text.strip().upper().removesuffix("IB").removesuffix("B")
    if value == "NONE":
        return None
    unit = value[-1:] if value[-1:] in _UNITS else ""
    try:
        size = int(float(value.removesuffix(unit)) * _UNITS[unit])
    except (ValueError, OverflowError):
        raise UsageError(f"--memory-limit {text!r} is not a size; use e.g. --memory-limit 8G, 512M or none") from None
    if size < _SMALLEST_LIMIT:
        raise UsageError(f"--memory-limit {text!r} is too small: a worker process holds about 100 MiB before its "
                         f"first call; use at least {format_size(_SMALLEST_LIMIT)}, e.g. --memory-limit 1G")
    return size


def validate(values: dict[str, str | None]) -> Settings:
    """Settings from raw option values (keys as dest names: impl, versions, ...); raises
    UsageError or spec.SpecError, each with one line naming the problem and the fix."""
    versions = _versions(values.get("versions"))
    loaded = [spec.load(v) for v in versions]  # a spec file that fails its schema stops the run here
    type_names = _type_names(values.get("dtypes"), loaded)
    profile = values.get("profile") or "standard"
    if profile not in profiles.PROFILES:
        raise UsageError(f"unknown profile {profile!r}; choose from {', '.join(profiles.PROFILES)}")
    seed, timeout = _seed(values.get("seed")), _timeout(values.get("timeout"))
    isolation = _one_of(values, "isolation", "isolation", ISOLATION_MODES)
    limit = memory_limit(values.get("memory_limit") or format_size(DEFAULT_MEMORY_LIMIT))
    lang = _one_of(values, "lang", "report language", LANGS)
    claim = _one_of(values, "claim", "claim", CLAIMS)
    packing = _one_of(values, "packing", "packing", PACKING)
    sandboxing = _one_of(values, "sandbox", "sandbox mode", MODES)
    impl = values.get("impl") or runtimes.DEFAULT.word
    check(impl)  # its form only: the implementation is loaded where it runs (isolation.Runner.load)
    cache = values.get("compile_cache") or str(DEFAULT_COMPILE_CACHE)
    given = values.get("report_dir")
    return Settings(impl, versions, type_names, profile, seed, Path(given) if given else default_report_dir(impl),
                    timeout, isolation, lang, limit, _forms(impl, values.get("forms")), claim, packing == "on",
                    None if cache == "off" else Path(cache).expanduser(),
                    sandboxing, shards.parse(values.get("shard")), _baseline(values.get("baseline")),
                    _process_limit(values.get("process_limit")), _names(values.get("pass_env")),
                    _folders(values.get("sandbox_read")), _impl_version(impl, values.get("impl_version")),
                    isa.parse(impl, values.get("isa")), _compile_key(impl, values.get("compile_key")),
                    _one_of(values, "schedule", "schedule", SCHEDULES), report_dir_given=bool(given))


def _versions(text: str | None) -> tuple[int, ...]:
    """--versions: the ArgMin versions named (every one the spec holds when not set)."""
    known = spec.versions()
    if not text:
        return known
    try:
        versions = tuple(int(v) for v in _split(text))
    except ValueError:
        raise UsageError(f"--versions {text!r} is not a list of numbers; use e.g. --versions 12,13") from None
    unknown = [v for v in versions if v not in known]
    if unknown:
        raise UsageError(f"unknown ArgMin version {unknown[0]}; choose from {', '.join(map(str, known))}")
    return versions


def _type_names(text: str | None, loaded: list[spec.VersionSpec]) -> tuple[str, ...] | None:
    """--dtypes: the element types named, each a type of some selected version (None when not set)."""
    if not text:
        return None
    type_names = tuple(_split(text))
    allowed = sorted({name for vspec in loaded for name in vspec.type_names})
    unknown = [d for d in type_names if d not in allowed]
    if unknown:
        raise UsageError(f"unknown element type {unknown[0]!r}; choose from {', '.join(allowed)}")
    return type_names


def _seed(text: str | None) -> int | None:
    if text in (None, ""):
        return None
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"--seed {text!r} is not an integer; use e.g. --seed 1234") from None


def _timeout(text: str | None) -> float:
    try:
        timeout = float(text or 10)
    except ValueError:
        raise UsageError(f"--timeout {text!r} is not a number of seconds; use e.g. --timeout 10") from None
    if timeout <= 0:
        raise UsageError("--timeout must be positive; use e.g. --timeout 10")
    return timeout


def _compile_key(impl: str, text: str | None) -> str:
    """--compile-key, or what a built-in states (node for model: plug-ins, model for a function)."""
    if text:
        if text not in COMPILE_KEYS:
            raise UsageError(f"--compile-key {text!r} is not a compile key; choose one of {', '.join(COMPILE_KEYS)}")
        return text
    found = runtimes.find(impl)
    if found is not None:
        return found[0].compile_key
    return "node" if model_based(impl) else "model"


def default_report_dir(impl: str) -> Path:
    """Where a run of ``impl`` writes without --report-dir: REPORTS/<its folder name> in the
    current folder (the one nox was started in)."""
    return Path.cwd() / REPORTS / folder_name(impl)


def check_report_dir(settings: Settings) -> str:
    """What the terminal says of the report folder before the run. The default folder of an
    implementation never receives another --impl value's run (two plug-in files of one name): a
    report there of another is a UsageError naming --report-dir; a folder given with --report-dir
    is written as told."""
    folder, existing = settings.report_dir, settings.report_dir / "report.json"
    try:
        before = read_json(existing).get("run", {}).get("impl") if existing.is_file() else None
    except (OSError, ValueError, Unreadable, AttributeError):
        before = "an unreadable report"
    if not settings.report_dir_given and before not in (None, settings.impl):
        raise UsageError(f"{folder}, the default report folder of --impl {settings.impl!r}, holds the report of "
                         f"{before!r}; name a folder for this run with --report-dir DIR, or move that report away")
    how = "given with --report-dir" if settings.report_dir_given else \
        f"the default: {REPORTS}/ in the folder the run was started in, one folder per implementation; --report-dir " \
        f"DIR writes elsewhere"
    replaces = "" if before is None else "; this run replaces its earlier report there" if before == settings.impl \
        else f"; this run replaces the report of {before!r} there"
    return f"report folder: {folder} ({how}){replaces}"


def _impl_version(impl: str, text: str | None) -> str | None:
    if text is None:
        return None
    if runtimes.find(impl) is not None:
        raise UsageError(f"--impl-version applies to plug-ins; the built-in {impl!r} is recorded at its runtime's own "
                         f"version: drop --impl-version")
    if not text.strip() or not text.isprintable() or len(text) > 80:
        raise UsageError(f"--impl-version {text!r} is not a version; give up to 80 printable characters, e.g. "
                         f"--impl-version 2.1.0")
    return text.strip()


def _process_limit(text: str | None) -> int:
    if not text:
        return PROCESS_LIMIT
    if not text.strip().isdigit() or int(text) < 16:
        raise UsageError(f"--process-limit {text!r} is not a number of processes of at least 16; use e.g. "
                         f"--process-limit {PROCESS_LIMIT}")
    return int(text)


def _names(text: str | None) -> tuple[str, ...]:
    """--pass-env's names: letters, digits, _ and the pattern characters * and ?."""
    names = tuple(_split(text or ""))
    for name in names:
        if not re.fullmatch(r"[A-Za-z_*?][A-Za-z0-9_*?]*", name):
            raise UsageError(f"--pass-env {name!r} is not an environment variable's name; use e.g. --pass-env "
                             f"MYRT_HOME,MYRT_*")
    return names


def _folders(text: str | None) -> tuple[str, ...]:
    """--sandbox-read's folders, each of which must exist."""
    folders = tuple(part for part in (text or "").split(os.pathsep) if part)
    for folder in folders:
        if not Path(folder).expanduser().exists():
            raise UsageError(f"--sandbox-read {folder!r}: no such file or folder; name folders that exist, separated "
                             f"by '{os.pathsep}'")
    return tuple(str(Path(folder).expanduser().resolve()) for folder in folders)


def _baseline(text: str | None) -> Path | None:
    """The --baseline file or report folder, which must exist (it is read by the reports,
    reports.baseline: a folder by its report.json)."""
    if not text:
        return None
    if not (Path(text).is_file() or (Path(text) / "report.json").is_file()):
        what = "a folder without a report.json" if Path(text).is_dir() else "no such file or folder"
        raise UsageError(f"--baseline {text!r}: {what}; pass a report folder, its report.json or a file from "
                         f"`nox -s baseline -- REPORT --out FILE`")
    return Path(text)


def _one_of(values: dict[str, str | None], name: str, label: str, choices: tuple[str, ...]) -> str:
    """The value of ``--name``, one of ``choices`` (the first when it is not set); UsageError otherwise."""
    value = values.get(name) or choices[0]
    if value not in choices:
        raise UsageError(f"unknown {label} {value!r}; choose {' or '.join(choices)} (e.g. --{name} {choices[-1]})")
    return value


def _forms(impl: str, text: str | None) -> tuple[str, ...] | None:
    if not model_based(impl):
        if text:
            raise UsageError(f"--forms applies to implementations the suite builds models for (built-ins, backend:, "
                             f"model:), not to {impl!r}; drop it or use --impl model:MODULE_OR_PATH:FUNCTION")
        return None
    try:
        return forms.parse(text) if text else forms.FORMS
    except ValueError as exc:
        raise UsageError(f"--forms {text!r}: unknown model form {str(exc)!r}; choose from {', '.join(forms.FORMS)}") \
            from None


def implementation(settings: Settings) -> Runner:
    """The implementation under test, called as the settings say. Under process isolation what it
    writes to stdout and stderr goes to the report folder's implementation.log, not the terminal."""
    settings.report_dir.mkdir(parents=True, exist_ok=True)
    return Runner(settings.impl, isolation=settings.isolation, timeout=settings.timeout,
                  memory_limit=settings.memory_limit, log=settings.report_dir / IMPLEMENTATION_LOG,
                  compile_cache=compile_cache_folder(settings), sandbox_mode=settings.sandbox,
                  readable=settings.sandbox_read, pass_env=settings.pass_env, processes=settings.process_limit,
                  set_env=isa.changes(settings.impl, settings.isa))


def compile_cache_folder(settings: Settings) -> Path | None:
    """The implementation's own folder of the compile cache, made here; None where it has none
    (--compile-cache off, a runtime that keeps no compiled models, a plug-in) or it cannot be made."""
    found = runtimes.find(settings.impl)
    cap = isa.recorded(settings.impl, settings.isa)
    name = found[0].cache_name(found[1], cap and cap["value"]) if found and settings.compile_cache else None
    if name is None:
        return None
    folder = settings.compile_cache / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder


def choose_seed(settings: Settings) -> Settings:
    """A run without --seed still gets one, so its report says how to reproduce it (xdist
    workers inherit the controller's through ARGMIN_SEED). Certify is derandomized: no seed."""
    if settings.seed is not None or settings.profile == "certify":
        return settings
    return replace(settings, seed=int(os.environ.get("ARGMIN_SEED") or random.SystemRandom().randrange(2**31)))


def run_info(settings: Settings, started: float, complete: bool = True, reason: str | None = None,
             workers: int = 1, planned: list[str] | None = None) -> RunInfo:
    """The run's record of its own settings; ``started`` is a time.time() value; ``workers``: the
    processes that run the tests; ``planned``: the tests it collected (their keys)."""
    return RunInfo(impl=settings.impl, versions=list(settings.versions),
                   type_names=list(settings.type_names) if settings.type_names else None, profile=settings.profile,
                   seed=settings.seed,
                   started=datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
                   duration_s=round(time.time() - started, 3), complete=complete, incomplete_reason=reason,
                   isolation=settings.isolation, timeout_s=settings.timeout, lang=settings.lang,
                   memory_limit_bytes=settings.memory_limit, forms=list(settings.forms) if settings.forms else None,
                   impl_portable=portable(settings.impl), started_in=os.getcwd(), claim=settings.claim,
                   packing=PACKING[not settings.packing],
                   profile_label=dict(profiles.LABELS[settings.profile]),
                   profile_description=profiles.describe(settings.profile, settings.schedule_size,
                                                         settings.compile_key),
                   workers=workers,
                   schedule=schedules_record(settings),
                   compile_cache=_compile_cache_state(settings),
                   shard=None if settings.shard is None else shards.record(settings, settings.shard),
                   planned=planned)


def _compile_cache_state(settings: Settings) -> str | None:
    """"on" or "off" for a runtime that keeps compiled models; None for any other implementation."""
    found = runtimes.find(settings.impl)
    if not (found and found[0].compile_cache):
        return None
    return "on" if compile_cache_folder(settings) is not None else "off"
