def reward_fn(obs, action, next_obs, info):
    """A person-written reward for HalfCheetah-v5: run forward (the bench case's reference).
    LaTeX: r = v_x - 0.1 \\|a\\|^2
    Terms:
        forward: x velocity (m/s)
        ctrl: control cost, 0.1 times the squared action
    """
    terms = {
        "forward": float(info["x_velocity"]),
        "ctrl": -0.1 * float(np.sum(np.square(action))),
    }
    return sum(terms.values()), terms
