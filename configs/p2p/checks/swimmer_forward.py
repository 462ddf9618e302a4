"""Check: does the swimmer swim forward fast? Its mean x velocity over the episode, as a
share of 0.04 m/s (a swimmer in its viscous fluid is slow: PPO's usual Swimmer return of
about 35 over 1,000 steps is a mean of about 0.035 m/s)."""

TARGET = 0.04  # m/s


def check(trajectory, summary):
    speed = summary["info_means"]["x_velocity"]
    return min(1.0, max(0.0, speed / TARGET))
