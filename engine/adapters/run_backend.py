"""ArgMin through an ONNX Backend API module: ``prepare(model, device)`` then ``rep.run``."""

from __future__ import annotations

import importlib
import unittest
from types import ModuleType

import onnx

from .compiled import Compiled, ModelArgMin
from .run_onnxruntime import from_onnxruntime


class BackendArgMin(ModelArgMin):
    def __init__(self, module: ModuleType | str, device: str = "CPU") -> None:
        super().__init__()
        self.module = importlib.import_module(module) if isinstance(module, str) else module
        self.device = device

    def compile(self, model: onnx.ModelProto) -> Compiled:
        rep = self.module.prepare(model, device=self.device)
        return Compiled(lambda *inputs: list(rep.run(list(inputs))))

    def translate(self, exc: Exception) -> Exception:
        if isinstance(exc, unittest.SkipTest):  # the Backend API's way to say "not supported here"
            return NotImplementedError(f"{self.module.__name__} skipped the model: {exc}")
        return from_onnxruntime(exc)
