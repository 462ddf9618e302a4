"""Environments whose agents may each run their own model on the run's endpoint."""

from __future__ import annotations

from typing import Any

from langmarl.core.records import AgentId


class PerAgentModels:
    """``set_llm`` for an env whose config names models per agent (``agent_models``: a
    weight-trained agent served beside the others): the actors' client, and for each named
    agent a client of the same endpoint and usage ledger running that agent's model. The
    env asks ``self.agent_llms.get(agent, self.llm)`` for an agent's client."""

    config: Any
    llm: Any = None
    agent_llms: dict[AgentId, Any]

    def _start_models(self, llm: Any) -> None:
        """In ``__init__``: no client yet, or ``llm`` set as :meth:`set_llm` does."""
        self.llm, self.agent_llms = None, {}
        if llm is not None:
            self.set_llm(llm)

    def set_llm(self, client: Any) -> None:
        self.llm = client
        self.agent_llms = {a: client.with_model(m) for a, m in self.config.agent_models.items()}
