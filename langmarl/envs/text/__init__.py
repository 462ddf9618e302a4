"""CAMEL-style text environments: models, single/multi-step envs, TicTacToe, conformance check."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "Action": "langmarl.envs.text.models",
    "EnvInputError": "langmarl.envs.text.models",
    "EnvStateError": "langmarl.envs.text.models",
    "Environment": "langmarl.envs.text.models",
    "Observation": "langmarl.envs.text.models",
    "StepResult": "langmarl.envs.text.models",
    "MultiStepEnv": "langmarl.envs.text.multi_step",
    "SingleStepEnv": "langmarl.envs.text.single_step",
    "Opponent": "langmarl.envs.text.tictactoe",
    "TicTacToeEnv": "langmarl.envs.text.tictactoe",
    "EnvConformanceError": "langmarl.envs.text.check",
    "acheck_env": "langmarl.envs.text.check",
    "check_env": "langmarl.envs.text.check",
    "TextEnvAdapter": "langmarl.envs.text.bridge",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.envs.text.bridge import TextEnvAdapter
    from langmarl.envs.text.check import EnvConformanceError, acheck_env, check_env
    from langmarl.envs.text.models import (
        Action,
        EnvInputError,
        Environment,
        EnvStateError,
        Observation,
        StepResult,
    )
    from langmarl.envs.text.multi_step import MultiStepEnv
    from langmarl.envs.text.single_step import SingleStepEnv
    from langmarl.envs.text.tictactoe import Opponent, TicTacToeEnv
