"""A small shipped document set for multi-question tasks (written for langmarl; fictional).

Each document is short, so even the embedded model can read it whole, and each question has
a one- or two-word answer that appears verbatim in its document.
"""

from __future__ import annotations

from typing import NamedTuple


class Document(NamedTuple):
    """A short text and questions whose answers appear in it verbatim."""

    text: str
    questions: list[tuple[str, str]]


DOCUMENTS: dict[str, Document] = {
    "lantern_museum": Document(
        text=(
            "The Lantern Museum is in the town of Verrin. It opened in 1931. "
            "Its most famous object is a blue glass lantern. The museum is closed on Mondays."
        ),
        questions=[
            ("In which town is the Lantern Museum?", "Verrin"),
            ("In which year did the Lantern Museum open?", "1931"),
            ("What color is the famous glass lantern?", "blue"),
            ("On which day is the Lantern Museum closed?", "Monday"),
        ],
    ),
    "river_ossel": Document(
        text=(
            "The river Ossel starts in the Grey Hills. It is 212 kilometres long. "
            "The largest city on the Ossel is Marport. Salmon swim up the river in autumn."
        ),
        questions=[
            ("Where does the river Ossel start?", "Grey Hills"),
            ("How many kilometres long is the river Ossel?", "212"),
            ("What is the largest city on the river Ossel?", "Marport"),
            ("Which fish swim up the river Ossel?", "salmon"),
        ],
    ),
    "baker_tilda": Document(
        text=(
            "Tilda is a baker. She bakes bread every morning at 5 o'clock. "
            "Her shop is called The Warm Loaf. Her best seller is rye bread."
        ),
        questions=[
            ("What is Tilda's job?", "baker"),
            ("At what hour does Tilda bake bread?", "5"),
            ("What is the name of Tilda's shop?", "The Warm Loaf"),
            ("What is Tilda's best seller?", "rye bread"),
        ],
    ),
    "robot_pim": Document(
        text=(
            "Pim is a small robot. Pim has 6 wheels and one green eye. "
            "Pim was built in Oslo. Pim cleans windows."
        ),
        questions=[
            ("How many wheels does Pim have?", "6"),
            ("What color is Pim's eye?", "green"),
            ("In which city was Pim built?", "Oslo"),
            ("What does Pim clean?", "windows"),
        ],
    ),
    "island_corra": Document(
        text=(
            "Corra is an island with 840 people. Its only harbour is called Seal Bay. "
            "The island is known for its wool. A ferry comes twice a week."
        ),
        questions=[
            ("How many people live on Corra?", "840"),
            ("What is the harbour of Corra called?", "Seal Bay"),
            ("What is the island of Corra known for?", "wool"),
            ("How often does the ferry come to Corra?", "twice a week"),
        ],
    ),
}
"""Document id → :class:`Document`."""
