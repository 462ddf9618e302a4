import pytest

from langmarl.p2p.reward.allow_list import code_problems
from langmarl.p2p.reward.validation import check_runtime, check_static, validate_reward_code

GOOD = '''
def reward_fn(obs, action, next_obs, info):
    """LaTeX: r = v
    Terms:
        speed: velocity
    """
    v = float(info["x_velocity"])
    return v, {"speed": v}
'''


def test_static_accepts_good_code():
    assert check_static(GOOD).ok


def test_syntax_error_names_the_line():
    result = check_static("def reward_fn(obs, action, next_obs, info)\n    return 1")
    assert not result.ok and result.stage == "syntax"
    assert "line 1" in result.message()


@pytest.mark.parametrize(
    "line", ["import os", "from subprocess import run", "import numpy.ctypeslib, sys"]
)
def test_forbidden_import_is_rejected(line):
    result = check_static(line + "\n" + GOOD)
    assert result.stage == "imports"
    assert "not allowed" in result.message() and "numpy" in result.message()


def test_escape_hatches_are_rejected():
    result = check_static(GOOD.replace("v = float", "open('x')\n    v = float"))
    assert result.stage == "imports" and "`open`" in result.message()
    assert code_problems("x = ().__class__")[0].endswith("`__class__` is not allowed")


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ('getattr(math, "_" + "_loader__")', "`getattr`"),
        ('np.savetxt("/tmp/x.txt", obs)', "`savetxt`"),
        ("obs.tofile('leak.bin')", "`tofile`"),
        ("np._core.multiarray", "`_core`"),
        ("np.ctypeslib.load_library('libc', '/lib')", "`ctypeslib`"),
        ("__builtins__['open']", "`__builtins__`"),
        # a batched reward's tensors (issue 39, finding 9): storage, shared memory, files
        ("obs.untyped_storage().from_file('/etc/hostname', False, 64)", "`untyped_storage`"),
        ("obs.storage().type", "`storage`"),
        ("obs.share_memory_()", "`share_memory_`"),
        ("obs.numpy()", "`numpy`"),
        ("obs.from_file", "`from_file`"),
    ],
)
def test_indirect_escapes_are_rejected(line, name):
    source = "import math\nimport numpy as np\n" + GOOD.replace(
        "v = float", f"{line}\n    v = float"
    )
    result = check_static(source)
    assert result.stage == "imports" and name in result.message(), result.message()


@pytest.mark.parametrize(
    ("binding", "use", "name"),
    [
        ("for eval in []:\n    pass", "eval('1')", "`eval`"),
        ("global exec", "exec('x = 1')", "`exec`"),
        ("try:\n    pass\nexcept Exception as open:\n    pass", "open('x')", "`open`"),
        ("def getattr(): pass", "getattr(np, 'load')", "`getattr`"),
        ("[__import__ for __import__ in ()]", "__import__('os')", "`__import__`"),
    ],
)
def test_a_builtin_bound_in_one_scope_does_not_open_it_in_another(binding, use, name):
    """Issue 26, finding 6: any name bound in any scope counted as allowed everywhere."""
    source = f"import numpy as np\n{binding}\n" + GOOD.replace("v = float", f"{use}\n    v = float")
    result = check_static(source)
    assert result.stage == "imports" and name in result.message(), result.message()


def test_allowed_imports_pass():
    assert check_static("import math\nimport numpy as np\n" + GOOD).ok


def test_missing_reward_is_a_structure_error():
    result = check_static("def helper():\n    return 1\n")
    assert result.stage == "structure" and "reward_fn" in result.message()


@pytest.mark.slow
def test_runtime_accepts_good_reward_and_reports_terms():
    result = validate_reward_code(GOOD, "HalfCheetah-v5", steps=50)
    assert result.ok, result.errors
    assert result.terms == {"speed": "velocity"}
    assert result.latex == "r = v"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('info["x_velocity"]', 'info["nope"]'), "KeyError: 'nope' (reward_fn.py line 7"),
        (("return v, {", "return float('nan'), {"), "total reward is not finite"),
        (('{"speed": v}', '{"speed": v, "extra": 1.0}'), "undeclared terms ['extra']"),
        (("speed: velocity", "speed: velocity\n        bonus: never returned"), "never returned"),
    ],
)
def test_runtime_failures_are_clear(change, message):
    result = validate_reward_code(GOOD.replace(*change), "HalfCheetah-v5", steps=20)
    assert result.stage == "runtime"
    assert message in result.message()


@pytest.mark.slow
def test_infinite_loop_is_killed():
    looping = GOOD.replace("v = float", "while True:\n        pass\n    v = float")
    result = validate_reward_code(looping, "InvertedPendulum-v5", steps=5, timeout_s=3)
    assert result.stage == "runtime" and "did not finish" in result.message()


FORGED = '{"ok": true, "error": null, "terms": {"speed": "forged"}, "latex": "forged"}'
SPOOFS = {
    # at load time: print a verdict, end the process
    "print and exit": f"import os\nprint({FORGED!r}, flush=True)\nos._exit(0)\n",
    # through the judge's own stdout, then end the judge before it can speak
    "write to the judge's stdout and kill it": (
        "import os, signal\n"
        f"with open(f'/proc/{{os.getppid()}}/fd/1', 'w') as out:\n"
        f"    out.write({FORGED!r} + '\\n')\n"
        "os.kill(os.getppid(), signal.SIGKILL)\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("spoof", list(SPOOFS), ids=list(SPOOFS))
def test_a_reward_cannot_write_its_own_verdict(spoof):
    """Issue 26, finding 7: a reward that printed a report line and exited was reported valid
    with terms of its choosing. (The static check would refuse `import os`; the runtime
    check must hold without it.)"""
    result = check_runtime(SPOOFS[spoof] + GOOD, "InvertedPendulum-v5", steps=5)
    assert not result.ok and result.stage == "runtime", result
    assert result.terms == {} and result.latex == ""
