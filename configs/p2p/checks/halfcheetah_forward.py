"""Check: does the cheetah run forward? Its mean x velocity over the episode, as a share of
1 m/s (0 when it goes nowhere or backwards)."""

TARGET = 1.0  # m/s


def check(trajectory, summary):
    speed = summary["info_means"]["x_velocity"]
    return min(1.0, max(0.0, speed / TARGET))
