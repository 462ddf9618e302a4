def reward_fn(obs, action, next_obs, info):
    """A person-written reward for Hopper-v5: hop forward without falling (the bench case's
    reference).
    LaTeX: r = v_x + r_{healthy} - 0.001 \\|a\\|^2
    Terms:
        forward: x velocity (m/s)
        healthy: the env's survive reward (1 while the hopper is up)
        ctrl: control cost, 0.001 times the squared action
    """
    terms = {
        "forward": float(info["x_velocity"]),
        "healthy": float(info["reward_survive"]),
        "ctrl": -0.001 * float(np.sum(np.square(action))),
    }
    return sum(terms.values()), terms
