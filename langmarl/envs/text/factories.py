"""Registry factories for the text environments.

Without a config they build the CAMEL-style environment itself; with a training config
(``make_env("tictactoe", config)``, as ``langmarl.train`` does) they build the
:class:`~langmarl.envs.text.bridge.TextEnvAdapter` that language-space training runs on.
"""

from __future__ import annotations

from typing import Any

from langmarl.core.errors import ConfigError


def make_tictactoe(config: Any = None, **kwargs: Any) -> Any:
    """``TicTacToeEnv(**kwargs)``, or with ``config`` a TicTacToe ``TextEnvAdapter`` (its
    ``play_style`` and ``max_steps`` read from a ``TicTacToeConfig``)."""
    if config is None:
        from langmarl.envs.text.tictactoe import TicTacToeEnv

        return TicTacToeEnv(**kwargs)
    from langmarl.envs.text.bridge import TextEnvAdapter

    for field in ("play_style", "max_steps"):
        if hasattr(config, field):
            kwargs.setdefault(field, getattr(config, field))
    return TextEnvAdapter.tictactoe(**kwargs)


def make_single_step(
    config: Any = None, *, dataset: Any = None, verifier: Any = None, **kwargs: Any
) -> Any:
    """``SingleStepEnv(dataset, verifier)``, or with ``config`` an adapter over it.

    ``dataset`` may be a ``StaticDataset``/``BaseGenerator`` or anything ``StaticDataset``
    accepts (a list of dicts, a JSON/JSONL path); ``verifier`` defaults to exact match.

    Raises:
        ConfigError: if no dataset is given.
    """
    from langmarl.datasets import BaseGenerator, StaticDataset
    from langmarl.envs.text.single_step import SingleStepEnv
    from langmarl.verifiers.match import ExactMatchVerifier

    if dataset is None:
        raise ConfigError(
            "the 'single_step' environment needs dataset=: a StaticDataset, a list of "
            "{'question', 'final_answer'} dicts or a JSON/JSONL path"
        )
    data = dataset if isinstance(dataset, StaticDataset | BaseGenerator) else StaticDataset(dataset)
    check = verifier if verifier is not None else ExactMatchVerifier()
    if config is None:
        return SingleStepEnv(data, check, **kwargs)
    from langmarl.envs.text.bridge import TextEnvAdapter

    return TextEnvAdapter(lambda task: SingleStepEnv(data, check), name="single_step", **kwargs)
