"""Check: is the pole kept balanced? The share of the horizon the episode lasted: it ends
as soon as the pole leans more than 0.2 rad, so every step it lasted the pole was up."""


def check(trajectory, summary):
    return min(1.0, summary["length"] / summary["horizon"])
