"""Prompt text of the text environments (data, filled with ``str.format``)."""

TICTACTOE_INSTRUCTIONS = (
    "You are playing Tic Tac Toe as 'X' against an opponent playing 'O'.\n"
    "Cells are numbered 1-9, left to right, top to bottom. The board (empty cells show "
    "their number):\n\n{board}\n\n"
    "{note}Available moves: {moves}.\n"
    "Think briefly if you like, then end your answer with your move as '<Action> n', "
    "for example '<Action> 5'."
)

TICTACTOE_ILLEGAL_NOTE = "Your last answer was not a legal move ({reason}); try again.\n"

TICTACTOE_FINAL = "Game over. {outcome}\n\n{board}"

TICTACTOE_OUTCOMES = {
    "X": "You won!",
    "O": "You lost.",
    "draw": "It is a draw.",
    None: "The game was stopped before it ended.",
}

TICTACTOE_SYSTEM_PROMPT = (
    "You play Tic Tac Toe as X. Take a winning move when you have one, block the "
    "opponent's winning move otherwise, and prefer the center and corners. Answer with "
    "'<Action> n' where n is the number (1-9) of a free cell."
)

TICTACTOE_DESCRIPTION = (
    "One agent ('player') plays Tic Tac Toe as X against a perfect O opponent. Each turn it "
    "sees the board and answers with '<Action> n' (n = a free cell, 1-9). The episode reward "
    "is 1 for a win, 0.5 for a draw, 0 for a loss; an illegal or unreadable move scores 0 for "
    "that turn and must be retried. Against perfect play a draw is the best possible result."
)
