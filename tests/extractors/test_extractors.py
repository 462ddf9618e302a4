"""Extraction strategies (pure functions) and the multi-stage pipeline."""

from __future__ import annotations

import pytest

from langmarl.extractors import (
    ActionTagStrategy,
    BaseExtractor,
    BaseExtractorStrategy,
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I pick the center. <Action> 5", "5"),
        ("<Action>3</Action> then <Action> 7", "7"),
        ("<action> 9\nbecause", "9"),
        ("no tag here", None),
        ("<Action>   \n", None),
        ("", None),
    ],
)
def test_action_tag(text: str, expected: str | None) -> None:
    assert extract_action_tag(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"so \boxed{42}.", "42"),
        (r"\boxed{\frac{1}{2}} and finally \boxed{ x^{2} }", "x^{2}"),
        (r"\fbox{7}", "7"),
        (r"\boxed{unclosed", None),
        (r"\boxed{}", None),
        ("nothing", None),
    ],
)
def test_boxed(text: str, expected: str | None) -> None:
    assert extract_boxed(text) == expected


def test_fenced_blocks_in_order_with_tags_and_optionally_unclosed() -> None:
    text = "```json\n{}\n```\ntext\n```Python extra\nx = 1\n```\n```py\ncut off"
    assert fenced_blocks(text) == [("json", "{}\n"), ("python", "x = 1\n")]
    assert fenced_blocks(text, unclosed=True)[-1] == ("py", "cut off")
    assert python_blocks(text, unclosed=True) == ["x = 1\n", "cut off"]
    assert fenced_blocks("no code") == []


def test_fenced_code_prefers_python_and_takes_the_last() -> None:
    text = "```bash\nls\n```\n```python\nprint(1)\n```\ntext\n```py\nprint(2)\n```"
    assert extract_fenced_code(text) == "print(2)"
    assert extract_fenced_code("```\nx = 1\n```") == "x = 1"
    assert extract_fenced_code("```bash\nls\n```") is None
    assert extract_fenced_code("```bash\nls\n```", language=None) == "ls"
    assert extract_fenced_code("```python\nunterminated") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is 1,234.5 apples", "1234.5"),
        ("-3 and then 2e3", "2e3"),
        ("x = .5", ".5"),
        ("no digits", None),
    ],
)
def test_last_number(text: str, expected: str | None) -> None:
    assert extract_last_number(text) == expected


async def test_strategies_wrap_the_functions() -> None:
    assert await ActionTagStrategy().extract("<Action> 4") == "4"
    assert await BoxedStrategy().extract(r"\boxed{3}") == "3"
    assert await FencedCodeStrategy().extract("```python\na\n```") == "a"
    assert await LastNumberStrategy().extract("1 2 3") == "3"
    assert await StripStrategy().extract("  a ") == "a"
    assert await StripStrategy().extract("   ") is None


async def test_pipeline_tries_strategies_in_order_and_chains_stages() -> None:
    extractor = BaseExtractor([[BoxedStrategy(), LastNumberStrategy()], [LastNumberStrategy()]])
    await extractor.setup()
    assert extractor.is_setup
    assert await extractor.extract(r"first 1, then \boxed{x = 12}") == "12"
    assert await extractor.extract("only 7 here") == "7"
    assert await extractor.extract("nothing") is None
    assert await extractor.extract(None) is None  # type: ignore[arg-type]
    await extractor.cleanup()
    assert not extractor.is_setup


class _Broken(BaseExtractorStrategy):
    async def extract(self, text: str) -> str | None:
        raise RuntimeError("bug")


async def test_a_raising_strategy_counts_as_no_match() -> None:
    extractor = BaseExtractor([[_Broken(), LastNumberStrategy()]])
    assert await extractor.extract("3") == "3"


def test_empty_pipeline_is_rejected() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        BaseExtractor([])
    with pytest.raises(ValueError, match="non-empty"):
        BaseExtractor([[]])
