"""The ``poster`` task: reward, topics and prompts shared by both spaces; `PosterEnv` for
language space."""
