"""Language space: the centralized critic, the policy-gradient optimizer, the formatter."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "CentralizedCritic": "langmarl.textgrad.critic",
    "PolicyGradientOptimizer": "langmarl.textgrad.optimizer",
    "TrajectoryFormatter": "langmarl.textgrad.formatter",
    "parse_credit": "langmarl.textgrad.credit",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.textgrad.credit import parse_credit
    from langmarl.textgrad.critic import CentralizedCritic
    from langmarl.textgrad.formatter import TrajectoryFormatter
    from langmarl.textgrad.optimizer import PolicyGradientOptimizer
