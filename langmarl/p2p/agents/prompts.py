"""Prompt templates of the reward-space agents (filled with ``str.format``).

Kept short on purpose: the default embedded model has a small context and follows short,
concrete instructions best.
"""

ELABORATE_SYSTEM = (
    "You turn a request for a simulated robot behaviour into 3 to 5 short, measurable success "
    "criteria, one per line, starting with '- '. Nothing else."
)
ELABORATE_USER = "Environment: {env_id}. {env_description}\nRequest: {intent}\nCriteria:"

REWARD_FORMAT = '''def reward_fn(obs, action, next_obs, info):
    """One line saying what this rewards.
    LaTeX: r = v_x - 0.1 \\|a\\|^2
    Terms:
        speed: forward velocity
        ctrl: control cost
    """
    speed = float(info["x_velocity"])
    ctrl = -0.1 * float(np.sum(np.square(action)))
    return speed + ctrl, {"speed": speed, "ctrl": ctrl}'''

AUTHOR_SYSTEM = (
    "You write reward functions in Python for reinforcement learning in MuJoCo. Reply with one "
    "```python code block and nothing else. Use only numpy (already imported as np) and math. "
    "The function returns (total, terms): a float and a dict of named float terms whose sum is "
    "the total. Declare every term in the docstring. Example of the exact format:\n"
    "```python\n" + REWARD_FORMAT + "\n```"
)
AUTHOR_USER = (
    "Environment: {env_id}. obs has {obs_dim} numbers, action has {act_dim}. info keys: "
    "{info_keys}.\n{env_description}\nBehaviour wanted: {intent}\nSuccess criteria:\n"
    "{criteria}\nWrite reward_fn."
)

REVIEW_SYSTEM = (
    "You review a reward function for a MuJoCo task. If it rewards the wanted behaviour and "
    "follows the format, reply exactly LGTM. Otherwise reply with the corrected function in one "
    "```python code block."
)
REVIEW_USER = "Behaviour wanted: {intent}\ninfo keys: {info_keys}\n```python\n{code}\n```"

FIX_SYSTEM = (
    "You fix Python reward functions. Reply with the corrected function in one ```python code "
    "block and nothing else. Use only numpy (as np) and math. Keep this format:\n"
    "```python\n" + REWARD_FORMAT + "\n```"
)
FIX_USER = (
    "This reward function for {env_id} failed validation.\nError: {error}\ninfo keys: "
    "{info_keys}\n```python\n{code}\n```\nFixed function:"
)

JUDGE_FORMAT = """def judge_fn(trajectory, summary):
    vx = trajectory["info"].get("x_velocity", [0.0])
    mean_vx = sum(vx) / len(vx)
    score = max(0.0, min(1.0, mean_vx / 5.0))
    return {"score": score, "reason": f"mean x velocity {mean_vx:.2f}"}"""

JUDGE_AUTHOR_SYSTEM = (
    "You write a Python function judge_fn(trajectory, summary) that scores how well one episode "
    "of a MuJoCo robot shows a wanted behaviour, from 0.0 (not at all) to 1.0 (fully). "
    "trajectory is a dict: 'obs' (list of observation lists), 'actions', 'rewards', "
    "'terms' (term name -> list), 'info' (info key -> list of floats per step). summary is a "
    "dict: 'length', 'return', 'info_means' (info key -> mean). Use only math and numpy (np). "
    "Reply with one ```python code block. Example:\n```python\n" + JUDGE_FORMAT + "\n```"
)
JUDGE_AUTHOR_USER = (
    "Environment: {env_id}. info keys: {info_keys}.\n{env_description}\nBehaviour wanted: "
    "{intent}\nSuccess criteria:\n{criteria}\nWrite judge_fn."
)

SUMMARY_JUDGE_SYSTEM = (
    "You judge whether a trained robot policy shows the wanted behaviour, from measurements of "
    "its evaluation episodes. Reply with two lines:\nSCORE: <number from 0 to 1>\n"
    "REASON: <one sentence>"
)
SUMMARY_JUDGE_USER = (
    "Environment: {env_id}. {env_description}\nBehaviour wanted: {intent}\nCriteria:\n"
    "{criteria}\nMeasurements of the median episode:\n{measurements}"
)

VLM_JUDGE_SYSTEM = (
    "You judge from video frames whether a simulated robot shows the wanted behaviour. The "
    "frames are in time order. Reply with two lines:\nSCORE: <number from 0 to 1>\n"
    "REASON: <one sentence>"
)
VLM_JUDGE_USER = "Behaviour wanted: {intent}\nCriteria:\n{criteria}"

REVISE_SYSTEM = (
    "You improve a reward function after a training run did not show the wanted behaviour. "
    "Reply with the revised function in one ```python code block (same format, numpy as np "
    "and math only). Optionally add one ```json block of PPO hyperparameter changes, keys "
    "from: {hp_keys}."
)
REVISE_USER = (
    "Environment: {env_id}. info keys: {info_keys}.\nBehaviour wanted: {intent}\nCurrent "
    "reward:\n```python\n{code}\n```\nResult: intent score {score:.2f}. {diagnosis}\n"
    "Mean reward terms per step: {term_means}\nMeasurements: {measurements}\n"
    "Warnings: {warnings}\nCurrent hyperparameters: {hparams}\nRevised reward:"
)

# The reviser's look-back tools (langmarl.p2p.agents.lookback), appended to REVISE_SYSTEM.
REVISE_TOOLS_FUNCTIONS = (
    "\nBefore you answer you may look back at earlier iterations (1..{current}; the current "
    "reward is iteration {current}) with the tools, a few calls at most. Then reply as above."
)
REVISE_TOOLS_TEXT = (
    "\nBefore you answer you may look back at earlier iterations (1..{current}; the current "
    "reward is iteration {current}). To call tools, reply only with lines like\n"
    'CALL read_code {{"iteration": 1}}\nand you get the results. Tools:\n{tools}\n'
    "When ready, reply as above, without CALL lines."
)
REVISE_TOOLS_DONE = "No more tool calls: reply now with the revised function."
REVISE_FRAMES = "The frames view_frames returned, in time order."

NARRATIVE_SYSTEM = (
    "You summarise a finished reward-design session for an engineer in 3 to 5 plain "
    "sentences: what was trained, which iteration was best, what held it back and what to "
    "try next. Use only the facts given and copy their numbers exactly. No lists, no code."
)
NARRATIVE_USER = "Facts of the session:\n{facts}\nSummary:"
