"""The CPU's instruction set and the cap on a runtime's: read from /proc/cpuinfo (x86 and Arm),
recorded in report.json (which the schema validates) and its certificate, set in the worker's
environment by ``--isa`` (refused in one line where no cap is offered), and named wherever runs of
different instruction sets or caps are put side by side (compare, the matrix, merge, verify)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from engine.asking.isolation import Runner
from engine.asking.loader import UsageError
from engine.config import isa
from engine.config.options import compile_cache_folder, implementation, validate
from engine.runtimes import BY_WORD
from reports import aggregate, write_reports
from reports.__main__ import main
from reports.folders.merge import MergeError, merge
from reports.folders.verify import rerun_command
from results import cpu, save
from results.environment import collect, suite_state
from tests.report_fixtures.runs import failing_run
from tests.test_nothing_shared import SHARED, SMALL

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "reports" / "document" / "report.schema.json").read_text(encoding="utf-8"))
CAPPED = {"variable": "ONEDNN_MAX_CPU_ISA", "value": "AVX2", "by": "--isa"}

# Two logical CPUs of an AVX-512 Xeon, abridged: the extensions come from the first "flags" line.
X86 = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu vme de pse tsc msr sse sse2 ssse3 fma cx16 pcid sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand \
avx2 bmi2 avx512f avx512dq adx avx512ifma clflushopt avx512cd sha_ni avx512bw avx512vl avx_vnni avx512_bf16 \
avx512vbmi umip avx512_vbmi2 gfni vaes avx512_vnni avx512_bitalg avx512_vpopcntdq amx_bf16 avx512_fp16 amx_tile amx_int8
bogomips\t: 4000.00

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu sse sse2
"""
X86_EXTENSIONS = ["sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512dq", "avx512bw",
                  "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"]
# A 64-bit Arm server (Neoverse V1): no model name line; SVE and SVE2 among its Features.
ARM64 = """processor\t: 0
BogoMIPS\t: 2100.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop \
sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp sve2 sveaes svei8mm \
svebf16 i8mm bf16 dgh rng
CPU implementer\t: 0x41
"""
ARM32 = ("processor\t: 0\nmodel name\t: ARMv7 Processor rev 4 (v7l)\n"
         "Features\t: half thumb fastmult vfp edsp neon vfpv3 tls\n")


@pytest.mark.parametrize(("text", "expected"), [
    (X86, X86_EXTENSIONS),
    (ARM64, ["asimd", "asimdhp", "asimddp", "i8mm", "bf16", "sve", "sve2"]),
    (ARM32, ["neon"]),
    ("", []),  # no /proc/cpuinfo (macOS, Windows)
    ("processor\t: 0\nflags\t\t: fpu vme\n", []),  # an x86 CPU without any extension recorded
], ids=["x86", "arm64", "arm32", "none", "old-x86"])
def test_the_extensions_are_read_from_cpuinfo_in_a_fixed_order(text: str, expected: list[str]) -> None:
    assert cpu.extensions(text) == expected


def test_the_model_name_comes_from_cpuinfo_else_from_python() -> None:
    assert cpu.model_name(X86) == "Intel(R) Xeon(R) Platinum 8480+"
    assert cpu.model_name(ARM64)  # no "model name" line: what the platform module says, never empty


def _environment(monkeypatch: pytest.MonkeyPatch, cap: dict | None) -> dict:
    monkeypatch.setattr(cpu, "cpuinfo", lambda: X86)
    sandbox = {"mechanism": None, "denies": [], "reason": "--sandbox off"}
    return collect({"impl": "openvino", "module": "openvino", "version": "2024.4.0"}, suite_state(), sandbox, cap)


@pytest.mark.parametrize("cap", [None, CAPPED], ids=["native", "capped"])
def test_report_json_records_the_instruction_set_and_validates(cap: dict | None, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    environment = _environment(monkeypatch, cap)
    assert environment["cpu_isa"] == X86_EXTENSIONS and environment["isa_cap"] == cap
    run = failing_run()
    paths = write_reports(replace(run, environment={**run.environment, **environment}), tmp_path)
    document = json.loads(paths["json"].read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    assert document["environment"]["cpu_isa"] == document["certificate"]["cpu_isa"] == X86_EXTENSIONS
    assert document["certificate"]["isa_cap"] == cap
    html = paths["html"].read_text(encoding="utf-8")
    assert "avx512_fp16 amx_tile" in html and ("ONEDNN_MAX_CPU_ISA=AVX2" in html) == bool(cap)


@pytest.mark.parametrize(("where", "key", "value"), [
    ("certificate", "isa_cap", {"variable": "ONEDNN_MAX_CPU_ISA", "value": "AVX2"}),  # no "by"
    ("environment", "isa_cap", "AVX2"), ("environment", "cpu_isa", "avx2 avx512f"),
])
def test_the_schema_refuses_an_instruction_set_that_is_not_one(where: str, key: str, value: object) -> None:
    document = aggregate(failing_run())
    document[where][key] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(document)


@pytest.mark.parametrize(("impl", "value", "words"), [
    ("onnxruntime", "avx2", "the built-in 'onnxruntime' offers no cap"),
    ("zoo.correct:numpy_argmin", "avx2", "'zoo.correct:numpy_argmin' is a plug-in"),
    ("openvino", "avx3", "--isa 'avx3' is not a cap oneDNN takes"),
])
def test_isa_where_no_cap_is_offered_is_one_line(impl: str, value: str, words: str) -> None:
    with pytest.raises(UsageError) as caught:
        validate({"impl": impl, "isa": value})
    message = str(caught.value)
    assert words in message and "\n" not in message
    if "avx3" not in value:
        assert "built-ins that offer one: openvino" in message


def test_isa_takes_the_runtimes_values_in_any_case() -> None:
    assert validate({"impl": "openvino@2024.4.0", "isa": "avx512_core_fp16"}).isa == "AVX512_CORE_FP16"
    assert validate({"impl": "openvino", "isa": "Native"}).isa == isa.NATIVE
    assert validate({"impl": "openvino"}).isa is None


def test_isa_sets_the_runtimes_variable_in_the_worker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The variable reaches the worker whatever the run's environment holds: set over a value of
    the run's, its older spelling (DNNL_) cleared. The plug-in prints its whole environment."""
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "ALL")
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "SSE41")
    settings = validate({"impl": "openvino", "isa": "avx2"})
    changes = isa.changes(settings.impl, settings.isa)
    assert changes == {"ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": None}
    log = tmp_path / "implementation.log"
    with Runner(f"{SHARED}:leaks_the_environment", log=log, pass_env=["*_MAX_CPU_ISA"], set_env=changes) as runner:
        assert runner.call(SMALL, 13, {}).status == "ok"
        assert "ONEDNN_MAX_CPU_ISA" in runner.record()["passed_env"]
    seen = log.read_text()
    assert "ONEDNN_MAX_CPU_ISA=AVX2" in seen and "ONEDNN_MAX_CPU_ISA=ALL" not in seen and "DNNL_MAX" not in seen


def test_isa_native_clears_the_cap_and_the_record_says_what_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "avx512_core")
    assert isa.recorded("openvino", None) == {"variable": "ONEDNN_MAX_CPU_ISA", "value": "AVX512_CORE",
                                              "by": "environment"}
    assert isa.recorded("openvino", "AVX2") == CAPPED
    assert isa.changes("openvino", isa.NATIVE) == {"ONEDNN_MAX_CPU_ISA": None, "DNNL_MAX_CPU_ISA": None}
    assert isa.recorded("openvino", isa.NATIVE) is None and isa.recorded("onnxruntime", None) is None


def test_the_built_in_openvino_worker_gets_the_cap_and_its_own_compile_cache(tmp_path: Path) -> None:
    settings = validate({"impl": "openvino", "isa": "avx2", "report_dir": str(tmp_path / "run"),
                         "compile_cache": str(tmp_path / "cache")})
    native = replace(settings, isa=None)
    assert compile_cache_folder(settings).name == BY_WORD["openvino"].cache_name(None) + "-isa-AVX2"
    assert compile_cache_folder(native) != compile_cache_folder(settings)
    with implementation(settings) as runner:
        assert "ONEDNN_MAX_CPU_ISA" in runner.record()["passed_env"]


def _report(folder: Path, extensions: list[str], cap: dict | None, lang: str = "en") -> Path:
    run = failing_run()
    write_reports(replace(run, environment={**run.environment, "cpu_isa": extensions, "isa_cap": cap}), folder, lang)
    return folder


AVX512 = ["sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl"]


@pytest.mark.parametrize(("second", "differs"), [
    ((AVX512, None), ""), ((AVX512, CAPPED), "cap"), ((AVX512[:6], None), "extensions"),
], ids=["same", "capped", "another-cpu"])
def test_pages_of_runs_side_by_side_say_when_the_instruction_sets_differ(second: tuple, differs: str,
                                                                         tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    old, new = _report(tmp_path / "old", AVX512, None), _report(tmp_path / "new", *second)
    for command, out in (("matrix", "--out"), ("history", "--out"), ("compare", "--html")):
        page = tmp_path / f"{command}.html"
        assert main([command, str(old), str(new), out, str(page)]) == 0
        html = page.read_text(encoding="utf-8")
        assert (f'data-isa-differs="{differs}"' in html) == bool(differs), command
        assert ("Not one instruction set" in html) == bool(differs)
    said = capsys.readouterr().out
    assert ("DIFFERENT CAPS ON THE INSTRUCTION SET: old none, new ONEDNN_MAX_CPU_ISA=AVX2" in said) == \
        (differs == "cap")
    assert ("DIFFERENT INSTRUCTION SETS: only the old run's CPU has avx512f, avx512bw, avx512vl" in said) == \
        (differs == "extensions")
    assert ("NOT ONE INSTRUCTION SET" in said) == bool(differs)


def test_the_chinese_matrix_says_so_too(tmp_path: Path) -> None:
    old, new = _report(tmp_path / "old", AVX512, None), _report(tmp_path / "new", AVX512, CAPPED)
    assert main(["matrix", str(old), str(new), "--out", str(tmp_path / "m.html"), "--lang", "zh-TW"]) == 0
    html = (tmp_path / "m.html").read_text(encoding="utf-8")
    assert 'data-isa-differs="cap"' in html and "指令集上限不同" in html


def _shard(folder: Path, index: int, extensions: list[str]) -> Path:
    run = failing_run()
    info = replace(run.info, shard={"index": index, "count": 2, "plan_sha256": "0" * 64, "tests": [],
                                    "plan_tests": 2})
    save(replace(run, info=info, environment={**run.environment, "cpu_isa": extensions}), folder)
    return folder


def test_merge_refuses_shards_run_on_different_instruction_sets(tmp_path: Path) -> None:
    with pytest.raises(MergeError, match="instruction set"):
        merge([_shard(tmp_path / "1", 1, AVX512), _shard(tmp_path / "2", 2, AVX512[:6])])


@pytest.mark.parametrize(("impl", "cap", "expected"), [
    ("openvino@2024.4.0", CAPPED, ["--isa", "avx2"]), ("openvino", None, ["--isa", "native"]),
    ("onnxruntime", None, []),
])
def test_verify_reruns_under_the_recorded_cap(impl: str, cap: dict | None, expected: list[str],
                                              tmp_path: Path) -> None:
    document = aggregate(failing_run())
    document["certificate"].update(implementation=impl, cpu_isa=AVX512, isa_cap=cap)
    command = rerun_command(document, tmp_path)
    given = command[command.index("--isa"):][:2] if "--isa" in command else []
    assert given == expected
