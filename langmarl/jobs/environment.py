"""What a job's command sees of the environment it starts from, and which endpoints a job
sent over the dashboard's API may reach (issue 39).

A job never inherits the whole environment of the process that runs it (a dashboard holds
its own token, an operator's shell any cloud key). Its command gets:

- the **base set**: the system's (``PATH``, ``HOME``, locale, ``TMPDIR``, proxies, CA
  bundles, ``LD_LIBRARY_PATH``) and the toolkit's and libraries' settings (``LANGMARL_*``,
  ``HF_*``, ``XDG_*``, ``RAY_*``, ``CUDA_*``, ``PYTHON*``, thread counts), minus any name
  that holds ``TOKEN``, ``KEY``, ``SECRET``, ``PASSWORD`` or ``CREDENTIAL``;
- the **variables its spec names** (``JobSpec.env``): the API keys its config reads. ``langmarl
  jobs submit`` names the ones its config reads and every provider key langmarl knows (the
  operator submits with their own keys); a job sent over the dashboard's API may name only
  those the operator allows with ``LANGMARL_JOB_ENV`` (names, comma-separated; default none).

A job sent over the API may also point its LLM (``base_url``) and its Ray cluster
(``ray_address``) only at loopback, the presets' hosts, or the hosts the operator allows
with ``LANGMARL_JOB_HOSTS``; anything else is a 422 naming the field and the setting.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from langmarl.llm.preset_table import PRESETS

ALLOWED_ENV_SETTING = "LANGMARL_JOB_ENV"
ALLOWED_HOSTS_SETTING = "LANGMARL_JOB_HOSTS"
BASE_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "LD_LIBRARY_PATH", "VIRTUAL_ENV", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
    "no_proxy", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TORCH_HOME",
    "TRANSFORMERS_CACHE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM",
})  # fmt: skip
BASE_PREFIXES = ("LC_", "LANGMARL_", "HF_", "XDG_", "RAY_", "CUDA_", "NVIDIA_", "PYTHON")
SECRET_WORDS = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "LANGMARL_TORCH_THREADS")  # fmt: skip
"""Set to the job's cores, so torch and BLAS start no more threads than it has."""
EXTRA_KEYS = ("OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
"""Key variables langmarl reads besides the presets' (the default LLM key, Hugging Face)."""


def inherited(name: str) -> bool:
    """Whether ``name`` is in the base set a job's command gets (module docstring)."""
    if SECRET_WORDS.search(name) and name not in ("TOKENIZERS_PARALLELISM",):
        return False
    return name in BASE_NAMES or name.startswith(BASE_PREFIXES)


def job_environment(
    cpus: int, passed: Iterable[str] = (), base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A job command's environment: the base set of ``base`` (default: this process's),
    the ``passed`` variables it holds, every thread count set to ``cpus``."""
    source = os.environ if base is None else base
    named = set(passed)
    env = {k: v for k, v in source.items() if inherited(k) or k in named}
    env.update({name: str(cpus) for name in THREAD_VARIABLES})
    env["PYTHONUNBUFFERED"] = "1"  # the log shows progress as it happens
    return env


def _walk(config: Any, path: str = "config") -> Iterator[tuple[str, str, Any]]:
    """``(path, key, value)`` of every mapping entry in ``config``, depth first; the key of
    a dotted override (``llm.base_url``) is its last part."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            yield f"{path}.{key}", str(key).rsplit(".", 1)[-1], value
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(config, list):
        for index, value in enumerate(config):
            yield from _walk(value, f"{path}[{index}]")


def key_variables(config: Any, where: str = "config") -> dict[str, str]:
    """The API-key variables ``config`` reads, each with the field that names it (under
    ``where``): every ``api_key_env_var``, and the variable of every preset it names."""
    found: dict[str, str] = {}
    for path, key, value in _walk(config, where):
        if key == "api_key_env_var" and isinstance(value, str) and value:
            found.setdefault(value, path)
        elif isinstance(value, str) and value in PRESETS:
            variable = PRESETS[value].fields.get("api_key_env_var", "OPENAI_API_KEY")
            if variable and PRESETS[value].fields.get("requires_api_key", True):
                found.setdefault(variable, path)
    return found


def inline_keys(config: Any) -> list[str]:
    """The fields of ``config`` that hold an API key itself (``api_key``), not the name of
    a variable holding it."""
    return [path for path, key, value in _walk(config)
            if key == "api_key" and isinstance(value, str) and value]  # fmt: skip


def known_key_variables() -> set[str]:
    """Every provider key variable langmarl knows (the presets', OpenAI's, Hugging Face's)."""
    found = {str(p.fields.get("api_key_env_var", "")) for p in PRESETS.values()}
    return (found | set(EXTRA_KEYS)) - {""}


def _setting(name: str, environ: Mapping[str, str]) -> set[str]:
    return {part.strip() for part in environ.get(name, "").split(",") if part.strip()}


def allowed_hosts(environ: Mapping[str, str] | None = None) -> set[str]:
    """Hosts a job sent over the API may reach: loopback, the presets', the operator's."""
    hosts = {urlsplit(str(p.fields["base_url"])).hostname for p in PRESETS.values()
             if p.fields.get("base_url")}  # fmt: skip
    settings = _setting(ALLOWED_HOSTS_SETTING, os.environ if environ is None else environ)
    return {h for h in hosts if h} | LOOPBACK | settings


def api_job_problems(
    spec_env: Iterable[str], sources: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """What a job sent over the dashboard's API may not do, as ``(field, fix)`` pairs
    (empty: nothing): name a variable the operator did not allow, or reach a host they did
    not allow. ``sources``: the job's ``config`` and ``overrides`` by field name."""
    environ = os.environ if environ is None else environ
    allowed = _setting(ALLOWED_ENV_SETTING, environ)
    named = {name: "env" for name in spec_env}
    for where, config in sources.items():
        named |= key_variables(config, where)
    problems = [
        (field, f"the job would receive the server's {name}: the operator allows such "
                f"variables for jobs with {ALLOWED_ENV_SETTING} (now: "
                f"{', '.join(sorted(allowed)) or 'none'})")
        for name, field in sorted(named.items()) if name not in allowed
    ]  # fmt: skip
    hosts = allowed_hosts(environ)
    walked = [entry for where, config in sources.items() for entry in _walk(config, where)]
    for path, key, value in walked:
        if key not in ("base_url", "ray_address") or not isinstance(value, str):
            continue
        if key == "ray_address" and value == "auto":
            continue
        host = urlsplit(value if "://" in value else f"//{value}").hostname
        if host not in hosts:
            fix = (
                f"{host or value!r} is not an allowed host for jobs: loopback, the "
                f"presets' hosts, or those the operator lists in {ALLOWED_HOSTS_SETTING}"
            )
            problems.append((path, fix))
    return problems
