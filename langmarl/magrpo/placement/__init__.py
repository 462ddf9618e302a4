"""``placement="ray"``: each agent of a weight-space run (its policy, optimizer and sampler)
is a Ray actor; the driver keeps what is joint: the rollout trees, rewards, advantages, the
run directory and resume.

::

    driver (WeightSpaceTrainer)                actor "agent-i" (worker.AgentWorker)
    RayAgents.start: join/start Ray, check  →  build_agents([model]) on its node
      resources, one placement group
    rollout turn: prompts, seed            →   generate  → token ids, masks, texts
    rewards, returns, advantages (driver)
    update: PolicyBatch per turn           →   accumulate_policy_gradients + apply_gradients
                                           ←   UpdateStats
    checkpoint: the folder's path          →   save_pretrained (+ optimizer) into it
    resume: the folder's path              →   load weights (+ optimizer)
    close (failed run, trainer.close())    →   ray.kill, placement group removed

IAC/MAAC's critics live in the actors too (:mod:`langmarl.magrpo.critic`: IAC's beside each
agent, MAAC's centralized one in agent-0's actor): texts and floats cross per step,
their state dicts at checkpoints.
With ``rollout_placement="apart"`` each agent samples in a rollout actor of its own, which its
agent's actor pushes the trained weights to after every update (:mod:`.engine`).
PARL GRPO's orchestrator is one such agent (:mod:`langmarl.parl.grpo`): its plans are
sampled and its update taken in the actor, the sub-agents and PARL rewards stay in the driver.
Ray is imported only when a run asks for it. MAGRPO, IAC, MAAC and PARL GRPO run here.
"""

from __future__ import annotations

from langmarl.magrpo.placement.remote import AgentActorDied, AgentHandle, RayAgents, place_agents

__all__ = ["AgentActorDied", "AgentHandle", "RayAgents", "place_agents"]
