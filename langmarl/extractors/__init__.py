"""Extractors: pull an answer, a move or code out of an LLM response."""

from langmarl.extractors.base import BaseExtractor, BaseExtractorStrategy
from langmarl.extractors.strategies import (
    ActionTagStrategy,
    BoxedStrategy,
    FencedCodeStrategy,
    LastNumberStrategy,
    StripStrategy,
    extract_action_tag,
    extract_boxed,
    extract_fenced_code,
    extract_last_number,
    fenced_blocks,
    python_blocks,
)

__all__ = [
    "ActionTagStrategy",
    "BaseExtractor",
    "BaseExtractorStrategy",
    "BoxedStrategy",
    "FencedCodeStrategy",
    "LastNumberStrategy",
    "StripStrategy",
    "extract_action_tag",
    "extract_boxed",
    "extract_fenced_code",
    "extract_last_number",
    "fenced_blocks",
    "python_blocks",
]
