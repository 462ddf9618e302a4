"""Check: does the walker walk forward? Its forward speed averaged over the whole horizon, as
a share of 1 m/s: a fall ends the episode, and the steps it missed count as standing still."""

TARGET = 1.0  # m/s


def check(trajectory, summary):
    distance_rate = sum(trajectory["info"]["x_velocity"]) / summary["horizon"]
    return min(1.0, max(0.0, distance_rate / TARGET))
