"""The language view's game lines (views/game.js) for a reference episode the env wrote:
the labelled items, the target and the pick marked, and the heard word. Runs the module's
pure part in node (skipped without it): no browser."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from langmarl.config.envs import ReferenceConfig
from langmarl.envs.reference.env import ReferenceEnv
from langmarl.testing import ScriptedLLM

VIEWS = Path(__file__).resolve().parents[2] / "langmarl/web/pages/static/views"
NODE = shutil.which("node")


def game_lines(details: object) -> object:
    script = (f"import {{ gameLines }} from {json.dumps((VIEWS / 'game.js').as_uri())};"
              f"console.log(JSON.stringify(gameLines({json.dumps(details)})));")  # fmt: skip
    done = subprocess.run([NODE or "node", "--input-type=module", "-e", script],
                          capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
async def test_a_reference_episode_reads_as_items_message_pick_and_target():
    env = ReferenceEnv(ReferenceConfig(condition="close", listener="generate", num_eval=1))
    env.set_llm(ScriptedLLM(lambda r: "Red!" if "Target:" in str(r.messages[-1]) else "B"))
    episode = await env.acollect_trajectory(env.default_policies(), env.splits["test"][0])
    details = json.loads(json.dumps(episode.metadata["reward_details"]))  # as the API sends it
    lines = game_lines(details)
    target = details["target"]
    assert lines["message"] == f'heard "red" · picked B · target {target}'
    assert [line[:3] for line in lines["items"]] == ["A: ", "B: ", "C: "]
    assert "(picked)" in lines["items"][1] or "(target, picked)" in lines["items"][1]
    marked = lines["items"]["ABC".index(target)]
    assert marked.startswith(f"{target}: {details['items']['ABC'.index(target)]} (target")
    assert game_lines({"score": 1}) is None  # another env's details: no game block
