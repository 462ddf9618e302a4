"""A scripted stand-in for the embedded model on the poster task: it rambles unless its
chat holds demonstrations, and then copies their form — the behaviour the pool search
relies on, in miniature and deterministic (exploring answers vary with the request's seed).

- key word agent: with a one-word demonstration it answers the topic's noun ("Ocean");
  without, greedy, a sentence; exploring, the noun or a sentence by seed.
- tagline agent: with a demonstration of at most six words it answers "The <noun> calls
  you home"; with a longer demonstration it copies the length (a 12-word ramble, which the
  reward punishes); without, greedy, the ramble; exploring, the good tagline or the ramble.
"""

from __future__ import annotations

import re

from langmarl.llm.types import ChatRequest, message_text

RAMBLE = "so many long winding words about {topic} that keep going on and on"


def noun(topic: str) -> str:
    return topic.split()[-1].capitalize()


def poster_reply(request: ChatRequest) -> str:
    messages = request.messages
    ask = message_text(messages[-1])
    topic = re.search(r"about (.+?)(?:\. Answer| that uses)", ask)
    name = topic.group(1) if topic else "things"
    demos = [message_text(m) for m in messages if m["role"] == "assistant"]
    explore = (request.temperature or 0) > 0
    flip = (request.seed or 0) % 2 == 0
    if ask.startswith("Give the key word"):
        if any(len(d.split()) == 1 for d in demos) or (explore and flip):
            return noun(name)
        return f"The key word of a poster about {name} is this one"
    if demos:
        if max(len(d.split()) for d in demos) > 6:
            return RAMBLE.format(topic=name)
        return f"The {noun(name).lower()} calls you home"
    if explore and not flip:
        return f"The {noun(name).lower()} calls you home"
    return RAMBLE.format(topic=name)
