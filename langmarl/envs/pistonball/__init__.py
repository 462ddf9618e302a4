"""Pistonball (PettingZoo ``pistonball_v6``) for language-space training
(``make_env("pistonball", PistonballConfig(...))``).

pettingzoo loads only when an episode is played; importing this package is cheap.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "PistonballEnv": "langmarl.envs.pistonball.env",
    "make_pistonball": "langmarl.envs.pistonball.env",
    "EpisodeSettings": "langmarl.envs.pistonball.episode",
    "EpisodeResult": "langmarl.envs.pistonball.episode",
    "CycleRecord": "langmarl.envs.pistonball.episode",
    "play_episode": "langmarl.envs.pistonball.episode",
    "llm_decider": "langmarl.envs.pistonball.episode",
    "scripted_decider": "langmarl.envs.pistonball.episode",
    "Move": "langmarl.envs.pistonball.actions",
    "parse_move": "langmarl.envs.pistonball.actions",
    "observe": "langmarl.envs.pistonball.observation",
    "PhysicsState": "langmarl.envs.pistonball.physics",
    "read_state": "langmarl.envs.pistonball.physics",
    "RegionCredit": "langmarl.envs.pistonball.credit",
    "record_episode": "langmarl.envs.pistonball.record",
    "ramp_reply": "langmarl.envs.pistonball.record",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.envs.pistonball.actions import Move, parse_move
    from langmarl.envs.pistonball.credit import RegionCredit
    from langmarl.envs.pistonball.env import PistonballEnv, make_pistonball
    from langmarl.envs.pistonball.episode import (
        CycleRecord,
        EpisodeResult,
        EpisodeSettings,
        llm_decider,
        play_episode,
        scripted_decider,
    )
    from langmarl.envs.pistonball.observation import observe
    from langmarl.envs.pistonball.physics import PhysicsState, read_state
    from langmarl.envs.pistonball.record import ramp_reply, record_episode
