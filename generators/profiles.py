"""Hypothesis settings profiles: ``quick`` (a smoke test: the project's own tests and CI),
``standard`` (a vendor's everyday run) and ``certify`` (the run a certificate names: derandomised
and database-free, so its cases depend only on the suite's version).

Every profile first checks the special-value floor (generators/floor.py) of each (version, type)
test, whatever its budget; the budget is what the Hypothesis search adds. ``LABELS`` and
``describe`` say what each profile proves, for the verdict lines and the report.

Every profile sets ``deadline=None``: the suites enforce their own timeouts, and a long reduced
axis legitimately takes longer than a short one. The size and speed health checks are
suppressed because long axes are deliberate, and the strategies never filter.

Budgets (``CASES``) are counted in cases per test. The suites draw ``BATCH`` cases per
Hypothesis example (see ``strategies._decoded``), so ``max_examples`` is the budget divided by it.
The cases of one example share an element budget (``shapes.batch_budget``), so the input elements
a test generates are bounded too (``elements``): what a slow implementation's run costs is known
before it starts."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from .quotas import CENSUS_QUOTA, FORM_QUOTA, rejection_quota
from .shapes import batch_budget
from .strategies import BATCH

PROFILES = ("quick", "standard", "certify")
ENV = "ARGMIN_PROFILE"
_SUPPRESSED = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much)
CASES = {"quick": 32, "standard": 200, "certify": 2000}
LABELS = {"quick": {"en": "smoke test", "zh-TW": "冒煙測試"},
          "standard": {"en": "everyday run", "zh-TW": "日常執行"},
          "certify": {"en": "certification run", "zh-TW": "認證執行"}}
_PROVES = {
    "quick": {"en": "it shows the suite runs against the implementation and catches gross bugs; it certifies nothing",
              "zh-TW": "只證明套件能對此實作執行並抓出明顯錯誤，不構成任何認證"},
    "standard": {"en": "a vendor's everyday check", "zh-TW": "供廠商日常檢查"},
    "certify": {"en": "the profile a certificate names; derandomized, so anyone can rerun the same cases",
                "zh-TW": "證書所指名的設定檔；去隨機化，任何人都能重跑相同的案例"},
}


def seed_text(seed: int | None, profile: str) -> str:
    """The seed as the terminal and the report's English page show it: a certify run has none
    (it is derandomized: its cases depend on the suite's version alone)."""
    if seed is not None:
        return str(seed)
    return "none (derandomized)" if profile == "certify" else "—"


def examples(name: str) -> int:
    """Hypothesis examples (batches of BATCH cases) per test: one more than the budget divides
    into, since the first one Hypothesis tries is the simplest (all bytes zero), one input
    repeated across its batch."""
    return CASES[name] // BATCH + 1


def elements(name: str) -> int:
    """The most input elements the generated cases of one test hold in profile ``name`` (one
    search; each example's batch at its full budget). Rejection and census tests hold less."""
    return examples(name) * batch_budget(BATCH)


def describe(name: str, schedule: int | None = None, key: str = "node") -> dict[str, str]:
    """What profile ``name`` checks and proves, by language (for the run record and the report);
    ``schedule``: the entries of each test's schedule where the run draws within schedules
    (generators.schedule), compiled per ``key`` (node or shape)."""
    cases, bound = f"{CASES[name]:,}", f"{elements(name):,}"
    form, census = FORM_QUOTA[name], CENSUS_QUOTA[name]
    rejection = rejection_quota(name, schedule is not None)
    within = {"en": "", "zh-TW": ""}
    if schedule is not None:
        what = {"node": ("signatures", "簽章"),
                "shape": ("signatures, each with one shape", "簽章（各有一個形狀）")}[key]
        within = {"en": f", drawn in the symbolic form within a schedule of {schedule} {what[0]} per version and type "
                        f"(every rank, axis spelling and attribute value and their pairs, rotated by the seed; the "
                        f"implementation compiles per {key})",
                  "zh-TW": f"，符號形式的案例取自每個版本與型別 {schedule} 個{what[1]}的排程"
                           f"（涵蓋每個秩、軸的寫法與屬性值及其兩兩組合，隨種子輪替；實作依"
                           f"{'節點' if key == 'node' else '形狀'}編譯）"}
    return {"en": f"{LABELS[name]['en']}: the special-value floor, then {cases} generated cases per test"
                  f"{within['en']}, holding at most {bound} input elements; stratified quotas instead of volume: "
                  f"{form} valid cases per test in the static and initializer model forms, {rejection} invalid models "
                  f"per rejection clause and form, {census} census inputs per topic other than NaN (empty inputs, "
                  f"attribute values outside their lists); {_PROVES[name]['en']}",
            "zh-TW": f"{LABELS[name]['zh-TW']}：先檢查特殊值底線，再於每項測試產生 {cases} 個案例"
                     f"{within['zh-TW']}，合計至多 {bound} 個輸入元素；以分層配額取代數量："
                     f"靜態與初始值模型形式每項測試 {form} 個有效案例、"
                     f"每個拒絕條款與形式 {rejection} 個無效模型、"
                     f"每個 NaN 以外的普查主題（空輸入、列表外的屬性值）{census} 個案例；"
                     f"{_PROVES[name]['zh-TW']}"}


def register() -> None:
    """Register the three profiles with Hypothesis (idempotent)."""
    for name in PROFILES:
        extra = {"derandomize": True, "database": None} if name == "certify" else {}
        settings.register_profile(name, max_examples=examples(name), deadline=None,
                                  suppress_health_check=_SUPPRESSED, **extra)


def load(name: str | None = None) -> settings:
    """Load a profile: ``name``, else the ARGMIN_PROFILE environment variable, else quick.
    Returns its settings, so a caller can also use them as a parent: ``settings(load(name), ...)``."""
    chosen = name or os.environ.get(ENV) or "quick"
    if chosen not in PROFILES:
        raise ValueError(f"unknown Hypothesis profile {chosen!r}: choose one of {', '.join(PROFILES)} "
                         f"(argument or {ENV})")
    register()
    settings.load_profile(chosen)
    return settings.get_profile(chosen)
