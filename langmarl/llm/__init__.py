"""The LLM layer: configs and presets, the client, token accounting, the embedded model.

Names load lazily, so ``from langmarl.llm import LLMConfig`` does not import ``openai``.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "LLMClient": "langmarl.llm.client",
    "LLMConfig": "langmarl.llm.config",
    "PRESETS": "langmarl.llm.presets",
    "get_llm_config": "langmarl.llm.presets",
    "list_available_models": "langmarl.llm.presets",
    "TokenTracker": "langmarl.llm.tracker",
    "UsageLedger": "langmarl.llm.tracker",
    "ChatRequest": "langmarl.llm.types",
    "ChatResult": "langmarl.llm.types",
    "Message": "langmarl.llm.types",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig
    from langmarl.llm.presets import PRESETS, get_llm_config, list_available_models
    from langmarl.llm.tracker import TokenTracker, UsageLedger
    from langmarl.llm.types import ChatRequest, ChatResult, Message
