"""The table of named LLM presets: current OpenAI models, OpenAI-compatible providers, local
servers. Plain data (no ``LLMConfig``), so :mod:`langmarl.llm.config` can build a config from a
preset without importing :mod:`langmarl.llm.presets`.

Prices are list prices per million tokens (USD) at the time of writing; override them with
``input_price_per_million`` / ``output_price_per_million`` when they change.
"""

from __future__ import annotations

from typing import Any, NamedTuple

LOCAL_MODEL = "SmolLM2-135M-Instruct"


class Preset(NamedTuple):
    description: str
    fields: dict[str, Any]


def _openai(model: str, price_in: float, price_out: float, **extra: Any) -> dict[str, Any]:
    return {
        "model_string": model,
        "input_price_per_million": price_in,
        "output_price_per_million": price_out,
        **extra,
    }


def _compatible(
    model: str, base_url: str, env_var: str, price_in: float, price_out: float, **extra: Any
) -> dict[str, Any]:
    return _openai(model, price_in, price_out, base_url=base_url, api_key_env_var=env_var, **extra)


def _local_server(model: str, base_url: str) -> dict[str, Any]:
    return {"model_string": model, "base_url": base_url, "requires_api_key": False}


_GEMINI = "https://generativelanguage.googleapis.com/v1beta/openai"
_DEEPSEEK = "https://api.deepseek.com/v1"
_TOGETHER = "https://api.together.xyz/v1"
_OPENROUTER = "https://openrouter.ai/api/v1"

PRESETS: dict[str, Preset] = {
    "local": Preset(
        f"{LOCAL_MODEL}, embedded (no server, no key; the default)",
        {
            "model_string": LOCAL_MODEL,
            "provider": "local",
            "max_tokens": 256,
            "requires_api_key": False,
            "api_key_env_var": "",
        },
    ),
    "gpt-4o": Preset("OpenAI GPT-4o", _openai("gpt-4o", 2.5, 10.0, is_multimodal=True)),
    "gpt-4o-mini": Preset(
        "OpenAI GPT-4o mini", _openai("gpt-4o-mini", 0.15, 0.6, is_multimodal=True)
    ),
    "gpt-4.1": Preset("OpenAI GPT-4.1", _openai("gpt-4.1", 2.0, 8.0, is_multimodal=True)),
    "gpt-4.1-mini": Preset(
        "OpenAI GPT-4.1 mini", _openai("gpt-4.1-mini", 0.4, 1.6, is_multimodal=True)
    ),
    "gpt-4.1-nano": Preset(
        "OpenAI GPT-4.1 nano", _openai("gpt-4.1-nano", 0.1, 0.4, is_multimodal=True)
    ),
    "gpt-5": Preset("OpenAI GPT-5 (reasoning)", _openai("gpt-5", 1.25, 10.0, is_multimodal=True)),
    "gpt-5-mini": Preset(
        "OpenAI GPT-5 mini (reasoning)", _openai("gpt-5-mini", 0.25, 2.0, is_multimodal=True)
    ),
    "gpt-5-nano": Preset(
        "OpenAI GPT-5 nano (reasoning)", _openai("gpt-5-nano", 0.05, 0.4, is_multimodal=True)
    ),
    "o3": Preset("OpenAI o3 (reasoning)", _openai("o3", 2.0, 8.0, is_multimodal=True)),
    "o4-mini": Preset(
        "OpenAI o4-mini (reasoning)", _openai("o4-mini", 1.1, 4.4, is_multimodal=True)
    ),
    "gemini-2.5-flash": Preset(
        "Google Gemini 2.5 Flash (OpenAI-compatible endpoint)",
        _compatible("gemini-2.5-flash", _GEMINI, "GEMINI_API_KEY", 0.3, 2.5, is_multimodal=True),
    ),
    "gemini-2.5-pro": Preset(
        "Google Gemini 2.5 Pro (OpenAI-compatible endpoint)",
        _compatible("gemini-2.5-pro", _GEMINI, "GEMINI_API_KEY", 1.25, 10.0, is_multimodal=True),
    ),
    "deepseek-chat": Preset(
        "DeepSeek V3 chat",
        _compatible("deepseek-chat", _DEEPSEEK, "DEEPSEEK_API_KEY", 0.28, 0.42),
    ),
    "deepseek-reasoner": Preset(
        "DeepSeek reasoner",
        _compatible("deepseek-reasoner", _DEEPSEEK, "DEEPSEEK_API_KEY", 0.28, 0.42),
    ),
    "together-llama-3.3-70b": Preset(
        "Llama 3.3 70B Instruct Turbo on Together",
        _compatible(
            "meta-llama/Llama-3.3-70B-Instruct-Turbo", _TOGETHER, "TOGETHER_API_KEY", 0.88, 0.88
        ),
    ),
    "together-qwen2.5-7b": Preset(
        "Qwen2.5 7B Instruct Turbo on Together",
        _compatible("Qwen/Qwen2.5-7B-Instruct-Turbo", _TOGETHER, "TOGETHER_API_KEY", 0.3, 0.3),
    ),
    "openrouter-llama-3.1-8b": Preset(
        "Llama 3.1 8B Instruct via OpenRouter",
        _compatible(
            "meta-llama/llama-3.1-8b-instruct", _OPENROUTER, "OPENROUTER_API_KEY", 0.02, 0.03
        ),
    ),
    "openrouter-gpt-4o-mini": Preset(
        "GPT-4o mini via OpenRouter",
        _compatible(
            "openai/gpt-4o-mini", _OPENROUTER, "OPENROUTER_API_KEY", 0.15, 0.6, is_multimodal=True
        ),
    ),
    "ollama-llama3.2": Preset(
        "Llama 3.2 3B on a local Ollama server (localhost:11434)",
        _local_server("llama3.2", "http://localhost:11434/v1"),
    ),
    "ollama-qwen2.5": Preset(
        "Qwen2.5 7B on a local Ollama server (localhost:11434)",
        _local_server("qwen2.5", "http://localhost:11434/v1"),
    ),
    "vllm": Preset(
        "A vLLM server on localhost:8000 (set model_string to the served model)",
        _local_server("default", "http://localhost:8000/v1"),
    ),
    "langmarl-serve": Preset(
        f"{LOCAL_MODEL} behind `langmarl serve` on localhost:8000 (elsewhere: --port N or "
        "--base-url URL, or base_url in the config)",
        _local_server(LOCAL_MODEL, "http://127.0.0.1:8000/v1") | {"max_tokens": 256},
    ),
}
