"""Language-space training: `MonteCarloTrainer`, callbacks, held-out evaluation."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "MonteCarloTrainer": "langmarl.trainer.monte_carlo",
    "Callback": "langmarl.trainer.callbacks",
    "CheckpointCallback": "langmarl.trainer.callbacks",
    "EarlyStoppingCallback": "langmarl.trainer.callbacks",
    "LoggingCallback": "langmarl.trainer.callbacks",
    "PHASES": "langmarl.trainer.callbacks",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.trainer.callbacks import (
        PHASES,
        Callback,
        CheckpointCallback,
        EarlyStoppingCallback,
        LoggingCallback,
    )
    from langmarl.trainer.monte_carlo import MonteCarloTrainer
