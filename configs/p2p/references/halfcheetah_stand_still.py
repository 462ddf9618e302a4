def reward_fn(obs, action, next_obs, info):
    """A person-written reward for HalfCheetah-v5: stand still, torso level (the bench
    case's reference).
    LaTeX: r = 1 - |v_x| - |\\theta_{torso}| - 0.1 \\|a\\|^2
    Terms:
        alive: a constant 1 per step
        still: minus the absolute x velocity (m/s)
        level: minus the absolute torso angle (rad, next_obs[1])
        ctrl: control cost, 0.1 times the squared action
    """
    terms = {
        "alive": 1.0,
        "still": -abs(float(info["x_velocity"])),
        "level": -abs(float(next_obs[1])),
        "ctrl": -0.1 * float(np.sum(np.square(action))),
    }
    return sum(terms.values()), terms
