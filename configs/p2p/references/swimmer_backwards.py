def reward_fn(obs, action, next_obs, info):
    """A person-written reward for Swimmer-v5: swim backwards (the bench case's reference).
    LaTeX: r = -v_x - 0.0001 \\|a\\|^2
    Terms:
        backward: minus the x velocity (m/s)
        ctrl: control cost, 0.0001 times the squared action
    """
    terms = {
        "backward": -float(info["x_velocity"]),
        "ctrl": -0.0001 * float(np.sum(np.square(action))),
    }
    return sum(terms.values()), terms
