"""`LocalBackend`: the ``provider="local"`` transport of :class:`LLMClient`."""

from __future__ import annotations

import asyncio

from langmarl.core.errors import LLMError
from langmarl.llm.config import LLMConfig
from langmarl.llm.local.engine import LocalEngine, shared_engine
from langmarl.llm.local.engines import ENGINE_PARAM
from langmarl.llm.local.generation import GenJob, TextCallback
from langmarl.llm.types import ChatRequest, ChatResult, has_images

DEFAULT_TEMPERATURE = 0.2
DEFAULT_TOP_P = 0.9
CACHE_DIR_PARAM = "cache_dir"


class LocalBackend:
    """Runs requests on an in-process model (shared, batched engine): the embedded SmolLM2,
    or the causal LM ``model_string`` names (a directory, a weight-space checkpoint's agent
    folder, a hub id: :mod:`langmarl.llm.local.models`).

    ``extra_params={"cache_dir": ...}`` in the config chooses where converted weights are
    cached, ``extra_params={"engine": ...}`` how the model runs (one of
    :data:`langmarl.llm.local.engines.ENGINES`; default ``$LANGMARL_LOCAL_ENGINE``, else
    ``"w16"`` for the embedded model (fp16 weights, fp32 arithmetic) and ``"transformers"``
    fp32 for others; ``"ct2"`` serves only the embedded model). Unset sampling settings
    use SmolLM2's recommended temperature 0.2 and top-p 0.9.
    """

    endpoint = "local"

    def __init__(self, config: LLMConfig, engine: LocalEngine | None = None) -> None:
        self.config = config
        self._engine = engine
        self._cache_dir = config.extra_params.get(CACHE_DIR_PARAM)
        self._engine_name = config.extra_params.get(ENGINE_PARAM)

    @property
    def engine(self) -> LocalEngine:
        """The engine (loading the model on first use)."""
        if self._engine is None:
            self._engine = shared_engine(
                self._cache_dir, self.config.model_string, self._engine_name
            )
        return self._engine

    def job(
        self, request: ChatRequest, on_text: TextCallback | None = None, truncate: bool = True
    ) -> GenJob:
        """The generation job for ``request`` (encodes the prompt).

        Args:
            request: The request.
            on_text: Called with each new piece of text (streaming).
            truncate: Cut a prompt too long for the context from the left (with a warning)
                instead of raising ``ContextLengthError``.
        """
        if has_images(request.messages):
            raise LLMError(
                self.endpoint, self.engine.model_name, "a local model cannot read images"
            )
        return GenJob(
            prompt_ids=self.engine.encode_chat(request.messages, request.max_tokens, truncate),
            max_new_tokens=request.max_tokens,
            temperature=DEFAULT_TEMPERATURE if request.temperature is None else request.temperature,
            top_p=DEFAULT_TOP_P if request.top_p is None else request.top_p,
            seed=request.seed,
            stop=list(request.stop or []),
            on_text=on_text,
        )

    def option_logprobs(self, prefix: str, options: list[str]) -> list[float]:
        """Each option's mean token log-probability after ``prefix``, on the engine's worker
        thread (:mod:`langmarl.llm.local.scoring`).

        Raises:
            LLMError: for the ct2 engine (no torch model to score with), bad options, or a
                failed model call.
        """
        from langmarl.llm.local.scoring import option_logprobs

        engine = self.engine
        if engine.engine_kind == "ct2":
            fix = "the ct2 engine cannot score options: use engine w16 or transformers"
            raise LLMError(self.endpoint, engine.model_name, fix)
        try:
            return engine.call(
                lambda model, tokenizer: option_logprobs(model, tokenizer, prefix, options)
            ).result()
        except ValueError as exc:
            raise LLMError(self.endpoint, engine.model_name, str(exc)) from None

    async def complete(self, request: ChatRequest) -> ChatResult:
        # Loading and tokenizing can take seconds on first use: keep them off the event loop.
        job = await asyncio.to_thread(self.job, request)
        output = await self.engine.agenerate(job)
        return ChatResult(
            text=output.text,
            input_tokens=len(job.prompt_ids),
            output_tokens=len(output.token_ids),
            model=self.engine.model_name,
            finish_reason=output.finish_reason,
        )
