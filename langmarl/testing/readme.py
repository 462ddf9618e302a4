"""The code blocks of README.md and docs/ as examples, each classified by the marker above it.

Every fenced block of README.md and of each page under docs/ carries an HTML comment,
invisible when rendered, on the line before its opening fence:

    <!-- example: quick -->                 runs offline as written, well under a minute
    <!-- example: slow, ~9 min -->          runs offline as written, too long for the tests
    <!-- example: needs OPENAI_API_KEY -->  needs a key, a server or a run id filled in
    <!-- example: fragment -->              output, a file layout or an API sketch: not a program

``tests/test_readme_examples.py`` runs each quick one in a fresh directory (a reader may
jump to any section, so no block relies on another) and refuses a block without a marker, so
every new example has to say how it runs. A slow marker states the measured duration; a
needs marker says what is missing. A block may not lean on the reader's environment either:
an environment variable it reads (``$NAME``, ``os.environ``, or the API key of an LLM preset
that it or a config file it names uses) is set in the block itself, or the block is a
``needs`` block naming the variable (:func:`unset_variables`); a shell block that runs
``langmarl`` or ``python`` activates the venv itself (:func:`needs_venv`).

The parser is line-based rather than the extractors' ``fenced_blocks`` (which reads LLM
replies): these fences start a line, and the marker and line number matter here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast, get_args

ExampleKind = Literal["quick", "slow", "needs", "fragment"]
KINDS: tuple[str, ...] = get_args(ExampleKind)

_FENCE = re.compile(r"^```\s*(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*example:\s*(\w+)\s*(?:,\s*)?(.*?)\s*-->\s*$")
_DURATION = re.compile(r"~\s*\d+(?:\.\d+)?\s*(?:s|min|h)\b")
_MARKER_HELP = (
    "put one of `<!-- example: quick -->`, `<!-- example: slow, ~N min -->`, "
    "`<!-- example: needs WHAT -->`, `<!-- example: fragment -->` on the line before the fence"
)
ACTIVATE = "source .venv/bin/activate"
"""The line a shell example starts with when it runs ``langmarl`` or the venv's ``python``."""

_SHELL_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_PYTHON_REF = re.compile(r"""(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*["']([A-Za-z_]\w*)["']""")
_PYTHON_SET = r"""environ\s*\[\s*["']{name}["']\s*\]\s*=|environ\.setdefault\(\s*["']{name}["']"""
_CONFIG_PATH = re.compile(r"\bconfigs/[\w./-]+\.(?:json|ya?ml)\b")
_RUNS_VENV = re.compile(r"(?:^|[\s;&|(`$])(?:langmarl|python)(?=\s|$)", re.MULTILINE)


class ReadmeExampleError(ValueError):
    """A code block without a valid marker; the message names its page, line and the fix."""


@dataclass(frozen=True)
class Example:
    """One fenced code block of the README or of a docs page.

    Attributes:
        line: 1-based line of the opening fence.
        language: The fence's tag (``bash``, ``python``, or ``""``).
        code: The block's body as written.
        kind: How it runs (see the module docstring).
        note: The rest of the marker: a slow block's duration, what a ``needs`` block needs.
        page: The file it is in, relative to the repository (``README.md``, ``docs/jobs.md``).
    """

    line: int
    language: str
    code: str
    kind: ExampleKind
    note: str
    page: str = "README.md"

    @property
    def name(self) -> str:
        """A short id for test reports, e.g. ``README.md:L180-bash``."""
        return f"{self.page}:L{self.line}-{self.language or 'text'}"


def parse_examples(text: str, page: str = "README.md") -> list[Example]:
    """Every fenced block of a Markdown text with its marker, in document order.

    Raises:
        ReadmeExampleError: a block has no marker or a malformed one, a slow block states no
            duration, a ``needs`` block does not say what it needs, or a fence is not closed.
    """
    lines = text.splitlines()
    examples: list[Example] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ReadmeExampleError(f"{page}: line {index + 1}: this ``` fence is never closed")
        kind, note = _marker(lines[index - 1] if index else "", index + 1, page)
        body = "\n".join(lines[index + 1 : end]) + "\n"
        examples.append(Example(index + 1, fence.group(1), body, kind, note, page))
        index = end + 1
    return examples


def example_pages(root: Path) -> list[Path]:
    """README.md and every Markdown page of the docs site under ``root``, README first."""
    docs = sorted(p for p in (root / "docs").rglob("*.md") if "_hooks" not in p.parts)
    return [root / "README.md", *docs]


def documented_examples(root: Path) -> list[Example]:
    """Every example of :func:`example_pages`, page by page.

    Raises:
        ReadmeExampleError: as :func:`parse_examples`, naming the page.
    """
    examples: list[Example] = []
    for path in example_pages(root):
        page = path.relative_to(root).as_posix()
        examples.extend(parse_examples(path.read_text(encoding="utf-8"), page))
    return examples


def _marker(line: str, fence_line: int, page: str) -> tuple[ExampleKind, str]:
    """The kind and note of the marker ``line`` above the fence at ``fence_line``."""
    where = f"{page}: line {fence_line}"
    found = _MARKER.match(line.strip())
    if not found:
        raise ReadmeExampleError(f"{where}: the code block has no marker: {_MARKER_HELP}")
    kind, note = found.group(1), found.group(2)
    if kind not in KINDS:
        raise ReadmeExampleError(
            f"{where}: unknown example kind {kind!r}; use one of {', '.join(KINDS)}"
        )
    if kind == "slow" and not _DURATION.search(note):
        raise ReadmeExampleError(
            f"{where}: a slow example states its measured duration, e.g. "
            f"`<!-- example: slow, ~3 min -->` (got {note!r})"
        )
    if kind == "needs" and not note:
        raise ReadmeExampleError(
            f"{where}: say what the example needs, e.g. "
            "`<!-- example: needs OPENAI_API_KEY -->` or `<!-- example: needs a server -->`"
        )
    return cast(ExampleKind, kind), note


def unset_variables(example: Example, root: Path) -> set[str]:
    """Environment variables the example reads without setting them itself.

    Counted: ``$NAME``/``${NAME}`` in a shell block, ``os.environ[...]``/``.get``/``getenv``
    in a Python block, and the API-key variable of every LLM preset that needs a key and is
    named in the block or in a config file under ``configs/`` that the block names. A
    shell variable the block assigns (``NAME=…``, ``export NAME=…``) is set.
    """
    code = example.code
    if example.language == "bash":
        read = set(_SHELL_REF.findall(code))
        read = {name for name in read if not re.search(rf"(?:^|[\s;&(]){name}=", code, re.M)}
    else:
        read = set(_PYTHON_REF.findall(code))
        read = {name for name in read if not re.search(_PYTHON_SET.format(name=name), code)}
    texts = [code] + [
        (root / path).read_text(encoding="utf-8")
        for path in set(_CONFIG_PATH.findall(code))
        if (root / path).is_file()
    ]
    for preset, variable in _keyed_presets().items():
        pattern = rf"(?<![\w.-]){re.escape(preset)}(?![\w.-])"
        if any(re.search(pattern, text) for text in texts):
            read.add(variable)
    return read


def needs_venv(example: Example) -> bool:
    """A shell example that runs ``langmarl`` or ``python`` (the venv's, not ``python3``)."""
    return example.language == "bash" and bool(_RUNS_VENV.search(example.code))


def activates_venv(example: Example) -> bool:
    """The example activates the venv before its first command (``source .venv/bin/activate``)."""
    commands = [
        line.strip()
        for line in example.code.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    return bool(commands) and commands[0] in (ACTIVATE, ". .venv/bin/activate")


@functools.cache
def _keyed_presets() -> dict[str, str]:
    """LLM preset name -> the environment variable holding its API key (keyed presets only)."""
    from langmarl.llm.config import LLMConfig
    from langmarl.llm.preset_table import PRESETS

    keyed = {}
    for name in PRESETS:
        config = LLMConfig.from_preset(name)
        if config.provider != "local" and config.requires_api_key:
            keyed[name] = config.api_key_env_var
    return keyed
