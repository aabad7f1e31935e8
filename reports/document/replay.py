"""Exact display of recorded tensors and the copy-paste Python snippet that replays a failure.

Values are recorded as exact strings; arrays are rebuilt from those strings (floats through
float64, which holds every float16, bfloat16 and float32 value exactly; integers through Python
ints, so uint64 and int64 extremes survive), never from a rounded printout."""

from __future__ import annotations

import itertools
import re

import spec
from engine import runtimes
from engine.adapters.models import INPUT, recipe
from results import Counterexample, PackNode, Tensor
from results.tensors import from_tensor
from spec.oracle import Expectation, expect

_WRAPPED = re.compile(r"^(?:np|numpy|ml_dtypes)\.\w+\((.*)\)$")
_BOOLS = {"np.True_": "True", "np.False_": "False", "numpy.True_": "True", "numpy.False_": "False"}
_LINE_BREAKS = str.maketrans(dict.fromkeys("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))
DISPLAY_LIMIT = 512


def plain(value: str) -> str:
    """'np.float16(1.5)' -> '1.5': the value as written, without numpy's scalar wrapper."""
    value = str(value).strip()
    if value in _BOOLS:
        return _BOOLS[value]
    match = _WRAPPED.match(value)
    return match[1] if match else value


def display_values(tensor: Tensor) -> str:
    """Nested-list text of the exact values (C order), cut after DISPLAY_LIMIT values."""
    values = [plain(v) for v in tensor.values]
    shape = [int(n) for n in tensor.shape]
    if len(values) > DISPLAY_LIMIT or (shape and _product(shape) != len(values)):
        shown = ", ".join(values[:DISPLAY_LIMIT])
        rest = len(values) - DISPLAY_LIMIT
        return f"[{shown}{f', … ({rest} more)' if rest > 0 else ''}] (flat)"
    if not shape:
        return values[0] if values else "[]"
    return _nest(values, shape) if values else "[]"


def _product(shape: list[int]) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


def _nest(values: list[str], shape: list[int]) -> str:
    if len(shape) == 1:
        return "[" + ", ".join(values) + "]"
    step = _product(shape[1:])
    parts = [_nest(values[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def _dtype_expression(name: str) -> tuple[str, str]:
    """(Python expression for the dtype, family) of an ONNX type name from the catalogue."""
    entry = spec.catalogue().get(name)
    if entry is None:
        return f"np.dtype({name!r})", "other"
    numpy_name = entry.dtype.name
    if entry.dtype.kind == "V" or entry.family in ("float8",) or numpy_name == "bfloat16":
        return f"ml_dtypes.{numpy_name}", entry.family
    return f"np.dtype({numpy_name!r})", entry.family


def build_expression(tensor: Tensor) -> str:
    """Python expression rebuilding the tensor exactly from the list named ``values``."""
    dtype, family = _dtype_expression(tensor.type_name)
    shape = tuple(int(n) for n in tensor.shape)
    if family in ("float", "float8"):
        array = f"np.array([float(v) for v in values], dtype=np.float64).astype({dtype})"
    elif family in ("signed", "unsigned"):
        array = f"np.array([int(v) for v in values], dtype={dtype})"
    elif family == "bool":
        array = f"np.array([v in ('1', 'True', 'true') for v in values], dtype={dtype})"
    elif family == "complex":
        array = f"np.array([complex(v) for v in values], dtype={dtype})"
    else:
        array = f"np.array(values).astype({dtype})"
    return f"{array}.reshape({shape!r})"


def _values_literal(values: list[str]) -> str:
    """``values`` as a Python list expression, the shortest of: item by item; each run of equal
    values once (``['0.0'] * 64``: a large input of zeros with a few other values); the pattern
    they repeat once (``(['-inf', '1.0'] * 513)[:1025]``: a periodic input that cannot shrink)."""
    shown = [plain(v) for v in values]
    period = _period(shown)
    if period * 4 > len(shown) or period < 2:
        return _runs_or_items(shown)
    times = -(-len(shown) // period)
    repeated = f"({_runs_or_items(shown[:period])} * {times})"
    repeated = repeated if times * period == len(shown) else f"{repeated}[:{len(shown)}]"
    return min(repeated, _runs_or_items(shown), key=len)


def _runs_or_items(values: list[str]) -> str:
    runs = [(v, len(list(group))) for v, group in itertools.groupby(values)]
    if len(runs) * 4 <= len(values):
        return _wrapped([f"[{v!r}] * {n}" if n > 1 else f"[{v!r}]" for v, n in runs], " + ", "(", ")")
    return _wrapped([repr(v) for v in values], ", ", "[", "]")


def _period(values: list[str]) -> int:
    """The shortest p such that each value equals the one p before it (the length where none
    does): Knuth-Morris-Pratt's failure function over the values."""
    border = [0] * len(values)
    for i in range(1, len(values)):
        k = border[i - 1]
        while k and values[i] != values[k]:
            k = border[k - 1]
        border[i] = k + (values[i] == values[k])
    return len(values) - (border[-1] if values else 0)


def _wrapped(items: list[str], joint: str, opening: str, closing: str) -> str:
    """``items`` joined by ``joint`` inside ``opening`` and ``closing``, in lines of about 90 characters."""
    lines, line = [], ""
    for item in items:
        if line and len(line) + len(item) > 90:
            lines.append(line)
            line = ""
        line += item + joint
    if line:
        lines.append(line)
    if len(lines) <= 1:
        return opening + "".join(lines).removesuffix(joint) + closing
    lines[-1] = lines[-1].removesuffix(joint)
    return opening + "\n" + "".join(f"    {chunk.rstrip()}\n" for chunk in lines) + closing


def _comment(label: str, value: Tensor | str | None) -> str:
    text = display_values(value) if isinstance(value, Tensor) else str(value)
    text = text.translate(_LINE_BREAKS)
    if len(text) > 300:
        text = text[:300] + " …"
    return f"# {label}: {text}"


def _node_lines(nodes: list[PackNode]) -> list[str]:
    """Lines setting ``datas`` and ``node_attributes``: every node's input and attributes, in order."""
    lines = ["datas, node_attributes = [], []"]
    for node in nodes:
        lines += [f"values = {_values_literal(node.input.values)}", f"datas.append({build_expression(node.input)})",
                  f"node_attributes.append({dict(node.attributes)!r})"]
    return lines


def _data_lines(ce: Counterexample) -> list[str]:
    """Lines setting ``data`` and ``attributes``, the case's; for a failure in a packed model also
    ``datas`` and ``node_attributes``, every node's in order, the case's at POSITION."""
    if ce.pack is None:
        return [f"values = {_values_literal(ce.input.values)}", f"data = {build_expression(ce.input)}",
                f"attributes = {dict(ce.attributes)!r}"]
    return [*_node_lines(ce.pack.nodes), f"POSITION = {int(ce.pack.position)}  # the failing case's node",
            "data, attributes = datas[POSITION], node_attributes[POSITION]"]


def _history_head(ce: Counterexample) -> list[str]:
    """The comment before a history's models: what they are and why they run first."""
    return [f"# It fails only after {len(ce.history)} model(s) the worker that found it ran before it (a fresh",
            "# process answers it right): the shortest part of that history found, each model run first, as it ran."]


def _headline(version: int, clause: str | None, ce: Counterexample, where: str) -> str:
    """A comment line: its texts come from the report, so a line break in them must not end the
    comment and become code (repr keeps every character visible and on this line)."""
    if ce.pack is not None:
        where += f", node {int(ce.pack.position)} of a packed model of {len(ce.pack.nodes)} nodes"
    text = f"ArgMin-{int(version)} {clause or ''} ({ce.problem}) on {where}.".replace("  ", " ")
    return "# " + (text if text.isprintable() else repr(text))


def snippet(impl: str, version: int, ce: Counterexample, *, kind: str = "semantic", clause: str | None = None,
            form: str | None = None) -> str:
    """A Python script that replays one counterexample at ArgMin-``version`` through the suite's
    own plug-in loader and oracle: saved as a file, it runs from the root of the suite's checkout
    (or with PYTHONPATH set to it: no local path is written in it) with the interpreter that ran
    the suite, and fails (AssertionError) while the implementation still gets the input wrong.
    ``impl``: the --impl value with file paths absolute; ``kind``: the case's kind (semantic or
    rejection); ``form``: the model form it failed in, if any. A counterexample with a packed
    model is asked through exactly that model (the adapter's ``answer_model``, which the suite's
    own second ask takes too)."""
    if form is None:
        answer = "answer = fn(data, opset=VERSION, **attributes)"
        declared = ""
    else:
        answer = f"answer = fn.answer({form!r}, data, VERSION, attributes)"
        if ce.pack is not None:
            answer = f"answer = fn.answer_model({ce.pack.form!r}, datas, VERSION, node_attributes)[POSITION]"
        declared = " or declared_shape(vspec, expected, answer.declared)"
    lines = [
        _headline(version, clause, ce, f"{impl}" + (f", {form} model" if form else "")),
        "# Replays it with the argmin-conformance suite: run it from the root of its checkout (or with",
        "# PYTHONPATH set to it), with the Python that ran the suite.",
        "import sys",
        "",
        "import ml_dtypes  # noqa: F401 (bfloat16 inputs)",
        "import numpy as np",
        "",
        "sys.path.insert(0, '')  # the current directory: the checkout, where run from its root",
        "try:",
        "    import spec",
        "    from engine.asking.loader import resolve",
        *(["    from engine.judging.judge import declared_shape"] if form else []),
        "    from spec.oracle import expect, verify",
        "except ImportError as exc:",
        "    sys.exit(f'run this from the root of the argmin-conformance checkout, or with PYTHONPATH set '",
        "             f'to it ({exc})')",
        "",
        f"VERSION = {int(version)}",
        f"fn = resolve({str(impl)!r})",
        *_suite_history(ce, form is not None),
        *_data_lines(ce),
        "vspec = spec.load(VERSION)",
        "expected = expect(vspec, data, attributes)",
    ]
    if kind == "rejection":
        lines += _must_raise([answer], clause or "", "answer")
    else:
        value = "answer.value" if form else "answer"
        lines += [answer, f"violation = verify(vspec, expected, data, {value}){declared}",
                  "assert violation is None, f\"{violation.clause.id} {violation.problem}: {violation.message}\"",
                  f"print({value})"]
    lines += [_comment("expected", ce.expected), _comment("recorded", ce.actual), ""]
    return "\n".join(lines)


def _suite_history(ce: Counterexample, models: bool) -> list[str]:
    """Lines asking the models a failure needs before it (its history) through the plug-in, as
    the suite asked them: a one-node model (``models``: of its form; else the function itself), or
    exactly a packed model; what each answers is not checked, and a model refused does not stop it."""
    history = ce.history or []
    if not history:
        return []
    lines = [*_history_head(ce), "history = []"]
    for model in history:
        lines += [*_node_lines(model.nodes),
                  f"history.append(({int(model.version)}, {model.form!r}, datas, node_attributes))"]
    one = "fn.answer(form, datas[0], version, node_attributes[0])" if models \
        else "fn(datas[0], opset=version, **node_attributes[0])"
    return [*lines, "for version, form, datas, node_attributes in history:", "    try:",
            f"        {one} if len(datas) == 1 else fn.answer_model(form, datas, version, node_attributes)",
            "    except Exception:  # refused: the model ran all the same", "        pass", ""]


def _must_raise(run: list[str], clauses: str, name: str) -> list[str]:
    """Lines that run ``run`` and fail unless it raises: the spec requires a rejection. The
    clause comes from the report: it enters the code as a quoted value, never as code."""
    return ["try:", *(f"    {line}" for line in run), "except Exception as exc:",
            "    print('rejected, as the spec requires:', exc)", "else:",
            f"    raise AssertionError(f'ArgMin-{{VERSION}} must reject this input (' + {clauses!r} + '); '",
            f"                         f'it returned {{{name}!r}}')"]


# --- the standalone snippet: onnx and the runtime, nothing of the suite -------------------------

# A vendor's model plug-in: its import lines come from _plugin_import.
_MODEL_PLUGIN = ([], ["run = FUNCTION(model)", "result = np.asarray(run(*INPUTS)PICK)"])
_ASSIGNED = re.compile(r"^(\w+) = ")


def _runtime(impl: str) -> tuple[str, str | None] | None:
    """(registered runtime's word or "model", its argument) of a model-based --impl value; None
    for a function plug-in."""
    found = runtimes.find(impl)
    if found is not None:
        return found[0].word, found[1]
    return ("model", impl[len("model:"):]) if impl.startswith("model:") else None


def _plugin_import(target: str) -> tuple[list[str], str]:
    """Import lines for a model plug-in's MODULE_OR_PATH:FUNCTION, and the expression for the
    function. Module, path and name come from the report: they enter the code quoted."""
    where, _, name = target.rpartition(":")
    if where.endswith(".py") or "/" in where:
        lines = ["import importlib.util", "",
                 f"_found = importlib.util.spec_from_file_location('model_plugin', {where!r})",
                 "plugin = importlib.util.module_from_spec(_found)",
                 "_found.loader.exec_module(plugin)"]
    else:
        lines = ["import importlib", "", f"plugin = importlib.import_module({where!r})"]
    return lines, f"functools.reduce(getattr, {name.split('.')!r}, plugin)"


def _runtime_lines(runtime: str, argument: str | None, form: str | None, type_name: str,
                   output: str | None = None) -> tuple[list[str], list[str]]:
    """The runtime entry's lines (engine.runtimes.entry.Runtime) with their placeholders filled:
    the one-node model's input ``data``, or every node's (``datas``) and the output of node
    ``output`` (an expression; None: a one-node model)."""
    entry = runtimes.BY_WORD.get(runtime)
    imports, lines = (list(entry.imports), list(entry.lines)) if entry else _MODEL_PLUGIN
    feed = "data"
    if runtime == "onnxruntime" and _dtype_expression(type_name)[0].startswith(
            "ml_dtypes"):  # onnxruntime's numpy bridge does not take ml_dtypes arrays
        feed = f"ort.OrtValue.ortvalue_from_numpy_with_onnx_type(data, TensorProto.{type_name.upper()})"
    if output is None:
        inputs, feeds, output, pick = "[data]", f"{{{INPUT!r}: {feed}}}", "0", ""
    else:
        inputs, pick = "datas", f"[{output}]"
        feeds = f"{{f'{INPUT}_{{i}}': {feed} for i, data in enumerate(datas)}}"
    if form == "initializer":
        inputs, feeds = "[]", "{}"
    option = argument or (entry.default if entry else None)
    replacements = {"OPTION": repr(option),  # a value, quoted: a module name from a report is never pasted as code
                    "INPUTS": inputs, "FEEDS": feeds, "OUTPUT": output, "PICK": pick}
    if runtime == "model":
        extra, function = _plugin_import(argument or "")
        imports, replacements["FUNCTION"] = ["import functools", *extra], function
    fill = re.compile("|".join(sorted(replacements, key=len, reverse=True)))
    # What compiles the model comes before the first line that feeds it its inputs.
    ran = next((i for i, line in enumerate(lines) if "INPUTS" in line or "FEEDS" in line), len(lines))
    filled = [fill.sub(lambda m: replacements[m[0]], line) for line in lines]
    return [fill.sub(lambda m: replacements[m[0]], line) for line in imports], filled[:ran], filled[ran:]


def _compiled_once(compiling: list[str], form: str | None) -> list[str]:
    """``compiling`` (a runtime's lines that compile ``model``) run once per model: a model built
    again, byte for byte, runs on what was compiled for it the first time, as the suite's adapter
    runs a model it has compiled (not in the initializer form, which it compiles for every input)."""
    names = [found[1] for line in compiling if (found := _ASSIGNED.match(line))]
    if not names or form == "initializer":
        return compiling
    held = f"{', '.join(names)},"
    return ["if model.SerializeToString() in compiled_models:",
            f"    {held} = compiled_models[model.SerializeToString()]", "else:", *(f"    {line}" for line in compiling),
            f"    compiled_models[model.SerializeToString()] = {held}"]


def _standalone_history(ce: Counterexample, runtime: str, argument: str | None) -> list[str]:
    """Lines that build and run the models a failure needs before it (its history), each as the
    suite ran it (a one-node model of its form, or exactly a packed model); what each answers is
    not checked, and a model refused does not stop the script."""
    history = ce.history or []
    lines = [*_history_head(ce), "compiled_models = {}", ""] if history else []
    for number, model in enumerate(history, 1):
        packed = len(model.nodes) > 1
        _, compiling, running = _runtime_lines(runtime, argument, model.form, model.nodes[0].input.type_name,
                                               "0" if packed else None)
        run = [*_compiled_once(compiling, model.form), *running]
        version = int(model.version)
        built = f"model = packed_model({model.form!r}, datas, {version}, node_attributes)" if packed else \
            f"model = argmin_model({version}, data.dtype, data.ndim, attributes{_form_arguments(model.form)})"
        lines += [f"# history model {number} of {len(history)}", *_node_lines(model.nodes),
                  *([] if packed else ["data, attributes = datas[0], node_attributes[0]"]), built, "try:",
                  *(f"    {line}" for line in run), "except Exception:  # refused: the model ran all the same",
                  "    pass", ""]
    return lines


def _form_arguments(form: str | None) -> str:
    """The keyword arguments of argmin_model that build ``form`` (engine.adapters.models.form_model)."""
    return {"static": ", shape=data.shape", "initializer": ", initializer=data"}.get(form or "", "")


def _where(runtime: str, argument: str | None) -> str:
    """The runtime as the snippet's headline names it: "OpenVINO (CPU)", "the ONNX backend M"."""
    entry = runtimes.BY_WORD.get(runtime)
    if entry is None:
        return "the model plug-in"
    option = argument or entry.default
    if entry.option == "module":
        return f"{entry.label} {option}"
    return f"{entry.label} ({option})" if option else entry.label


def standalone(impl: str, version: int, ce: Counterexample, *, kind: str = "semantic", clause: str | None = None,
               form: str | None = None) -> str | None:
    """For a runtime the suite builds models for (built-ins, backend:, model:): a script that needs
    only numpy, onnx and the runtime (ml_dtypes for bfloat16), builds the one-node model inline
    (the packed model, for a counterexample with one) and asserts what the spec requires of the
    case's output; fit to attach to a bug report upstream. None for a function plug-in."""
    found = _runtime(impl)
    if found is None or ce.input.type_name not in spec.catalogue():
        return None
    runtime, argument = found
    imports, compiling, running = _runtime_lines(runtime, argument, form, ce.input.type_name,
                                                 None if ce.pack is None else "POSITION")
    where = _where(runtime, argument)
    history = ce.history or []
    run = [*(_compiled_once(compiling, form) if history else compiling), *running]
    lines = [
        _headline(version, clause, ce, f"{where}, {form or 'symbolic'} input"),
        "# Needs only numpy, onnx and the runtime (ml_dtypes for bfloat16): the model is built here.",
        "from __future__ import annotations",  # must come first: any import before it is a SyntaxError
        "",
        *(["import ml_dtypes"] if any("ml_dtypes." in build_expression(node.input)
                                      for node in [PackNode(ce.input, {}), *(n for m in history for n in m.nodes)])
          else []),
        "import numpy as np",
        "import onnx",
        "import onnx.helper",
        "import onnx.numpy_helper",
        "import onnx.shape_inference",
        "from onnx import TensorProto",
        *imports,
        "",
        "# The suite's own model builder (engine/adapters/models.py), as it ran.",
        *recipe(ce.pack is None or any(len(m.nodes) == 1 for m in history),
                ce.pack is not None or any(len(m.nodes) > 1 for m in history)),
        f"VERSION = {int(version)}",
        *_standalone_history(ce, runtime, argument),
        *_data_lines(ce),
        f"model = argmin_model(VERSION, data.dtype, data.ndim, attributes{_form_arguments(form)})" if ce.pack is None
        else f"model = packed_model({ce.pack.form!r}, datas, VERSION, node_attributes)",
        "",
    ]
    if kind == "rejection":
        lines += _must_raise(run, clause or "", "result")
    elif kind == "semantic":
        lines += [*run, *_assertions(expect(spec.load(version), from_tensor(ce.input), ce.attributes), ce)]
    else:
        return None  # undefined behaviour is never a failure
    return "\n".join([*lines, ""])


def _assertions(expectation: Expectation, ce: Counterexample) -> list[str]:
    """The whole answer, as the suite judges it: int64, the shape, every index within [0, n-1]
    (np.take_along_axis would read -1 as the last element), pointing at a minimum, and the tie
    rule where the version has one."""
    reference = expectation.required if expectation.required is not None else expectation.first
    axis = int(expectation.axis)
    lines = [f"expected_shape = {tuple(reference.shape)!r}",
             "assert result.dtype == np.int64 and result.shape == expected_shape, "
             "f'got {result.dtype} {result.shape}, expected int64 {expected_shape}'",
             f"n = data.shape[{axis}]",
             "assert ((result >= 0) & (result < n)).all(), "
             "f'returned {result.tolist()}: an index outside [0, {n - 1}]'"]
    if ce.problem == "declared-shape":
        lines += ["assert len(declared) == len(expected_shape) and all(\n"
                  "    not d.isdigit() or int(d) == n for d, n in zip(declared, expected_shape)), (\n"
                  "    f'the compiled model declares the output shape {declared}, expected {expected_shape}')"]
    if expectation.required is not None:
        rule = f"the {expectation.tie_rule} minimum"
        lines += [f"expected = np.array({reference.reshape(-1).tolist()!r}, dtype=np.int64).reshape(expected_shape)"
                  f"  # {rule}",
                  "assert (result == expected).all(), f'returned {result.tolist()}, expected {expected.tolist()}'"]
    else:  # ties are undefined here: any index of a minimum conforms
        index = "result" if expectation.keepdims else f"np.expand_dims(result, {axis})"
        lines += [f"picked = np.take_along_axis(data, {index}, {axis})",
                  f"assert (picked == data.min(axis={axis}, keepdims=True)).all(), "
                  "f'returned {result.tolist()}, which does not point at a minimum in every slice'"]
    return [*lines, "print(result)"]
