def reward_fn(obs, action, next_obs, info):
    """A person-written reward for InvertedPendulum-v5: keep the pole balanced (the bench
    case's reference).
    LaTeX: r = 1 - (\\theta / 0.2)^2
    Terms:
        alive: a constant 1 per step the pole is up
        upright: minus the squared pole angle (next_obs[1]) as a share of the 0.2 rad limit
    """
    terms = {"alive": 1.0, "upright": -float((next_obs[1] / 0.2) ** 2)}
    return sum(terms.values()), terms
