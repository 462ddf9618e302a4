"""Training an orchestrator with PARL, in language space and in weight space.

Names load lazily (the weight-space trainer imports torch/transformers on first use).
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "ParallelTasksConfig": "langmarl.parl.config",
    "PARLCallback": "langmarl.parl.callbacks",
    "build_parl_trainer": "langmarl.parl.language",
    "train_parl_language": "langmarl.parl.language",
    "OrchestratorGRPO": "langmarl.parl.grpo",
    "OrchestratorGRPOConfig": "langmarl.parl.grpo",
    "CURVES_FILE": "langmarl.parl.curves",
    "summarize": "langmarl.parl.curves",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.parl.callbacks import PARLCallback
    from langmarl.parl.config import ParallelTasksConfig
    from langmarl.parl.curves import CURVES_FILE, summarize
    from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig
    from langmarl.parl.language import build_parl_trainer, train_parl_language
