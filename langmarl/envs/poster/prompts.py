"""The poster task's observations: the same text the weight-space agents are prompted with."""

KEY_WORD = "Give the key word of a poster about {prompt}. Answer with a single word."

TAGLINE = (
    "Write a tagline of three to six words about {prompt} that uses its key word. "
    "Answer with the tagline only."
)
