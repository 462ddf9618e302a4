"""Check: does the cheetah stand still? The share of the episode's steps on which it barely
moves (|x velocity| below 0.1 m/s) with its torso level (|angle| below 0.5 rad, obs[1]):
lying flipped over or drifting does not count."""

STILL = 0.1  # m/s
LEVEL = 0.5  # rad


def check(trajectory, summary):
    speeds = trajectory["info"]["x_velocity"]
    angles = [step[1] for step in trajectory["obs"]]
    still = [abs(v) < STILL and abs(a) < LEVEL for v, a in zip(speeds, angles)]
    return sum(still) / max(len(still), 1)
