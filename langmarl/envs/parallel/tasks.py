"""Task sets that split into independent sub-tasks: multi-part arithmetic and
several questions over one shipped document.

Tasks are generated deterministically from a seed, so splits are reproducible. Every task
lists its parts as numbered lines, which is also what the plan parser's fallback detects.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, Field

from langmarl.core.errors import ConfigError
from langmarl.envs.parallel.documents import DOCUMENTS

TaskKind = Literal["arithmetic", "documents"]
TASK_SETS = ("arithmetic", "documents", "mixed")


class SubTask(BaseModel):
    """One independent part of a task.

    Attributes:
        question: A self-contained question.
        answer: The expected short answer.
    """

    question: str
    answer: str


class ParallelTask(BaseModel):
    """A task the orchestrator can split into independent sub-tasks.

    Attributes:
        task_id: Stable id (``"arith-3"``, ``"docs-robot_pim-1"``).
        kind: ``arithmetic`` or ``documents``.
        parts: The independent sub-tasks with their answers (hidden from the agents).
        context: Text every sub-agent receives (the document), or ``""``.
    """

    task_id: str
    kind: TaskKind
    parts: list[SubTask] = Field(min_length=1)
    context: str = ""

    @property
    def prompt(self) -> str:
        """The task as the orchestrator sees it: the parts as numbered lines."""
        head = "Answer every part of this task."
        lines = [f"{i}. {part.question}" for i, part in enumerate(self.parts, 1)]
        body = "\n".join(lines)
        if self.context:
            return f"{head}\nDocument: {self.context}\n{body}"
        return f"{head}\n{body}"


_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def _arithmetic_part(rng: random.Random) -> SubTask:
    op = rng.choice(["+", "+", "-", "*"])
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    if op == "-":
        a, b = max(a, b), min(a, b)
    return SubTask(question=f"What is {a} {op} {b}?", answer=str(_OPS[op](a, b)))


def arithmetic_tasks(
    n: int, *, parts: tuple[int, int] = (2, 4), seed: int = 0
) -> list[ParallelTask]:
    """``n`` multi-part arithmetic tasks with ``parts[0]..parts[1]`` one-digit sums each."""
    rng = random.Random(f"arith-{seed}")
    return [
        ParallelTask(
            task_id=f"arith-{seed}-{i}",
            kind="arithmetic",
            parts=[_arithmetic_part(rng) for _ in range(rng.randint(*parts))],
        )
        for i in range(n)
    ]


def document_tasks(n: int, *, parts: tuple[int, int] = (2, 3), seed: int = 0) -> list[ParallelTask]:
    """``n`` tasks of ``parts[0]..parts[1]`` questions about one shipped document each."""
    rng = random.Random(f"docs-{seed}")
    names = sorted(DOCUMENTS)
    tasks = []
    for i in range(n):
        name = names[i % len(names)]
        doc = DOCUMENTS[name]
        pairs = rng.sample(doc.questions, k=rng.randint(*parts))
        tasks.append(
            ParallelTask(
                task_id=f"docs-{seed}-{i}-{name}",
                kind="documents",
                parts=[SubTask(question=q, answer=a) for q, a in pairs],
                context=doc.text,
            )
        )
    return tasks


def load_task_set(name: str, n: int, *, seed: int = 0) -> list[ParallelTask]:
    """``n`` tasks of set ``name`` (``arithmetic``, ``documents`` or ``mixed``).

    Raises:
        ConfigError: for an unknown set name or ``n < 1``.
    """
    if n < 1:
        raise ConfigError(f"num_tasks must be at least 1, got {n}")
    if name == "arithmetic":
        return arithmetic_tasks(n, seed=seed)
    if name == "documents":
        return document_tasks(n, seed=seed)
    if name == "mixed":
        half = (n + 1) // 2
        return arithmetic_tasks(half, seed=seed) + document_tasks(n - half, seed=seed)
    raise ConfigError(f"task_set must be one of {', '.join(TASK_SETS)}, got {name!r}")
