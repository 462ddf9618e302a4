"""Which causal LM the in-process engine serves: the embedded SmolLM2 by default, or any
Hugging Face causal LM named by ``model_string`` — a local directory, a LoRA adapter (a
weight-space checkpoint's ``agent-K`` folder), or a hub id.

::

    "SmolLM2-135M-Instruct" / "smollm2" / "local"   the embedded model (weights.py)
    runs/x/checkpoints/step-000016/agent-0          a MAGRPO agent: adapter merged into its
                                                    base, or the full fine-tuned model
    ./my-model                                      save_pretrained output (config.json)
    HuggingFaceTB/SmolLM2-360M-Instruct             fetched from the hub (needs the network)

So an agent trained in the weight space can act, judge or optimize in the language space:
``"llm": {"preset": "local", "model_string": "runs/x/checkpoints/step-000016/agent-0"}``.

An adapter's recorded base is used when it exists; a base recorded as the embedded model's
cache directory on another machine (or under another cache root) is recognised by its name and
resolved to this machine's copy.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.llm.local.weights import MODEL_NAME, load_model, quiet_progress

log = logging.getLogger(__name__)

EMBEDDED_NAMES = frozenset({"smollm2", "local", "embedded", MODEL_NAME})
"""``model_string`` values that mean the embedded SmolLM2."""
ADAPTER_FILE = "adapter_config.json"
MODEL_FILE = "config.json"
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")

SourceKind = Literal["embedded", "directory", "adapter", "hub"]


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from, and the name requests report (``ChatResult.model``)."""

    kind: SourceKind
    location: str
    """The directory or hub id ("" for the embedded model)."""

    @property
    def label(self) -> str:
        return MODEL_NAME if self.kind == "embedded" else self.location


def _checkpoint_hint(path: Path) -> str:
    agents = sorted(p.name for p in path.iterdir() if p.is_dir() and p.name.startswith("agent-"))
    if agents:
        return (
            f" It is a weight-space checkpoint with one model per agent: point model_string "
            f"at one of them, e.g. {path / agents[0]}"
        )
    return ""


def resolve_model(model_string: str | None) -> ModelSource:
    """The source ``model_string`` names.

    Raises:
        ConfigError: for a directory that holds no model (naming what it lacks) or a string
            that is neither a directory nor a hub id.
    """
    if not model_string or model_string in EMBEDDED_NAMES:
        return ModelSource("embedded", "")
    path = Path(model_string).expanduser()
    if path.is_dir():
        if (path / ADAPTER_FILE).is_file():
            return ModelSource("adapter", str(path.resolve()))
        if (path / MODEL_FILE).is_file():
            return ModelSource("directory", str(path.resolve()))
        raise ConfigError(
            f"model_string {model_string!r} is a directory without {MODEL_FILE} or "
            f"{ADAPTER_FILE}: not a saved model.{_checkpoint_hint(path)}"
        )
    if path.exists() or model_string.startswith((".", "/", "~")) or not HUB_ID.match(model_string):
        raise ConfigError(
            f"model_string {model_string!r} is neither a model directory nor a Hugging Face "
            f"hub id ('org/name'); use {MODEL_NAME!r} for the embedded model"
        )
    return ModelSource("hub", model_string)


def _adapter_base(adapter: Path) -> str:
    config = json.loads((adapter / ADAPTER_FILE).read_text(encoding="utf-8"))
    base = str(config.get("base_model_name_or_path") or "")
    if not base or Path(base).name == MODEL_NAME:
        return MODEL_NAME  # trained on the embedded model (this machine's copy, wherever)
    return base


def _pretrained(location: str) -> tuple[Any, Any]:
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "local", "A local model") from None
    try:
        with quiet_progress():
            tokenizer = AutoTokenizer.from_pretrained(location)
            model = AutoModelForCausalLM.from_pretrained(location)
    except OSError as exc:
        raise ConfigError(
            f"could not load the model {location!r}: {exc}. A hub id needs the network (or "
            "the Hugging Face cache); a directory needs save_pretrained's files"
        ) from exc
    return model, tokenizer


def _with_adapter(adapter: Path, cache_dir: str | Path | None) -> tuple[Any, Any]:
    try:
        from peft import PeftModel
    except ImportError:
        raise MissingDependencyError("peft", "weights", "A LoRA adapter as a model") from None
    base, tokenizer = load_source(resolve_model(_adapter_base(adapter)), cache_dir)
    if (adapter / "tokenizer_config.json").is_file():
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(adapter)
    with quiet_progress():
        merged = PeftModel.from_pretrained(base, adapter).merge_and_unload()
    return merged, tokenizer


def load_source(source: ModelSource, cache_dir: str | Path | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of ``source`` in eval mode, on the CPU (an adapter merged into
    its base, so generation costs what the base costs)."""
    if source.kind == "embedded":
        return load_model(cache_dir)
    if source.kind == "adapter":
        model, tokenizer = _with_adapter(Path(source.location), cache_dir)
    else:
        model, tokenizer = _pretrained(source.location)
    model.eval()
    log.info("local engine: loaded %s (%s)", source.label, source.kind)
    return model, tokenizer
