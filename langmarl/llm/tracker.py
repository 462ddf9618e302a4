"""Token and cost accounting: `TokenTracker` per model, `UsageLedger` per role."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


def lookup_prices(model: str) -> tuple[float, float]:
    """(input, output) USD per million tokens for a preset name or model string; 0 if unknown."""
    from langmarl.llm.presets import PRESETS

    for name, preset in PRESETS.items():
        if model in (name, preset.fields.get("model_string")):
            return (
                float(preset.fields.get("input_price_per_million", 0.0)),
                float(preset.fields.get("output_price_per_million", 0.0)),
            )
    return 0.0, 0.0


class TokenTracker:
    """Tracks token usage and estimates cost for one model. Thread-safe.

    Args:
        model: Model name used to look up built-in pricing.
        input_price: USD per million input tokens (overrides the lookup).
        output_price: USD per million output tokens (overrides the lookup).
    """

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        input_price: float | None = None,
        output_price: float | None = None,
    ) -> None:
        known_in, known_out = lookup_prices(model)
        self.model = model
        self.input_price = known_in if input_price is None else input_price
        self.output_price = known_out if output_price is None else output_price
        self.input_tokens = 0
        self.output_tokens = 0
        self.calls = 0
        self._lock = threading.Lock()

    def add_usage(self, input_tokens: int, output_tokens: int) -> None:
        """Add the token counts of one call."""
        with self._lock:
            self.input_tokens += int(input_tokens)
            self.output_tokens += int(output_tokens)
            self.calls += 1

    def estimate_cost(self, input_tokens: int, output_tokens: int) -> float:
        """Cost in USD of the given counts, without recording them."""
        return (input_tokens * self.input_price + output_tokens * self.output_price) / 1e6

    def get_stats(self) -> dict[str, Any]:
        """``model``, token counts, ``calls``, and input/output/total cost in USD."""
        with self._lock:
            inp, out, calls = self.input_tokens, self.output_tokens, self.calls
        in_cost = inp * self.input_price / 1e6
        out_cost = out * self.output_price / 1e6
        return {
            "model": self.model,
            "input_tokens": inp,
            "output_tokens": out,
            "total_tokens": inp + out,
            "calls": calls,
            "input_cost_usd": in_cost,
            "output_cost_usd": out_cost,
            "cost_usd": in_cost + out_cost,
        }

    def reset(self) -> None:
        """Reset all counters to zero."""
        with self._lock:
            self.input_tokens = self.output_tokens = self.calls = 0

    def get_summary_string(self) -> str:
        """A one-line human-readable summary."""
        s = self.get_stats()
        return (
            f"{s['model']}: {s['calls']} calls, {s['input_tokens']:,} in + "
            f"{s['output_tokens']:,} out = {s['total_tokens']:,} tokens, ${s['cost_usd']:.4f}"
        )


@dataclass
class RoleUsage:
    """Usage of one role (actor, critic, optimizer, judge, …)."""

    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "failures": self.failures,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
            "cost_usd": self.cost_usd,
        }


class UsageLedger:
    """Usage of every LLM call of a run, attributed by role. Thread-safe.

    Clients created with ``ledger=`` and ``role=`` record each call here; a trainer reads
    ``by_role()`` per iteration (``snapshot``/``since`` give the difference).
    """

    def __init__(self) -> None:
        self._roles: dict[str, RoleUsage] = {}
        self._lock = threading.Lock()

    def record(
        self, role: str, input_tokens: int, output_tokens: int, cost_usd: float, ok: bool = True
    ) -> None:
        """Record one call (``ok=False``: it failed after its retries)."""
        with self._lock:
            usage = self._roles.setdefault(role, RoleUsage())
            usage.calls += 1
            usage.failures += 0 if ok else 1
            usage.input_tokens += input_tokens
            usage.output_tokens += output_tokens
            usage.cost_usd += cost_usd

    def by_role(self) -> dict[str, dict[str, Any]]:
        """Usage per role."""
        with self._lock:
            return {role: usage.as_dict() for role, usage in sorted(self._roles.items())}

    def totals(self) -> dict[str, Any]:
        """Usage summed over roles."""
        total = RoleUsage()
        for usage in self.by_role().values():
            total.calls += usage["calls"]
            total.failures += usage["failures"]
            total.input_tokens += usage["input_tokens"]
            total.output_tokens += usage["output_tokens"]
            total.cost_usd += usage["cost_usd"]
        return total.as_dict()

    @staticmethod
    def since(
        before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
    ) -> dict[str, dict[str, Any]]:
        """Per-role difference between two ``by_role()`` snapshots."""
        return {
            role: {k: v - before.get(role, {}).get(k, 0) for k, v in stats.items()}
            for role, stats in after.items()
        }
