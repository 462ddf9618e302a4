"""Check: does the swimmer swim backwards? Its mean velocity toward -x over the episode, as a
share of 0.04 m/s (0 when it stays or swims forward)."""

TARGET = 0.04  # m/s


def check(trajectory, summary):
    speed = -summary["info_means"]["x_velocity"]
    return min(1.0, max(0.0, speed / TARGET))
