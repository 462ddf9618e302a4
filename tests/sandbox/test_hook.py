"""The audit hook in-process: frozen configuration, no closure, refuses changes to itself."""

from __future__ import annotations

import types

import pytest

from langmarl.sandbox._hook import make_hook


def _hook(tmp: str = "/tmp/sandbox-dir") -> types.FunctionType:
    hook = make_hook([tmp], 4242, allow_network=False, allow_subprocess=False)
    assert isinstance(hook, types.FunctionType)
    return hook


def test_the_hook_keeps_no_rewritable_state() -> None:
    hook = _hook()
    assert hook.__closure__ is None and hook.__globals__ == {"__builtins__": {}}
    assert hook.__code__.co_freevars == ()
    policy, tools = hook.__defaults__  # type: ignore[misc]
    assert isinstance(policy, tuple) and isinstance(tools, tuple)
    assert not any(isinstance(v, dict | list | set) for v in (*policy, *tools))


@pytest.mark.parametrize(
    ("event", "args", "reason"),
    [
        ("subprocess.Popen", ("ls", ["ls"], None, None), "subprocess_blocked"),
        ("open", ("/etc/passwd", "w", 0), "write_blocked"),
        ("open", ("/proc/1/environ", "r", 0), "secret_blocked"),
        ("socket.__new__", (None, 2, 2, 0), "network_blocked"),
        ("socket.connect", (None, "/run/docker.sock"), "write_blocked"),
        ("ctypes.dlsym", (None, "syscall"), "subprocess_blocked"),
        ("ctypes.dlsym/handle", (0, "execve"), "subprocess_blocked"),
        ("ctypes.dlsym", (None, "PyFrame_LocalsToFast"), "subprocess_blocked"),
        ("sys.settrace", (None,), "guard"),
        ("gc.get_referrers", (), "guard"),
    ],
)
def test_refusals(event: str, args: tuple, reason: str) -> None:
    with pytest.raises(PermissionError, match=f"\\({reason}\\)"):
        _hook()(event, args)


def test_allowed_events_pass() -> None:
    hook = _hook()
    allowed = [
        ("open", ("/tmp/sandbox-dir/out.txt", "w", 0)),
        ("open", ("/etc/passwd", "r", 0)),
        ("socket.__new__", (None, 1, 1, 0)),  # AF_UNIX
        ("socket.bind", (None, "/tmp/sandbox-dir/listener")),
        ("ctypes.dlsym", (None, "PyCapsule_New")),  # dill needs it
    ]
    assert [hook(event, args) for event, args in allowed] == [None] * len(allowed)  # no raise


def test_the_hook_refuses_changes_to_its_own_code_and_defaults() -> None:
    hook = _hook()
    for name in ("__code__", "__defaults__", "__kwdefaults__"):
        with pytest.raises(PermissionError, match="changing the audit hook"):
            hook("object.__setattr__", (hook, name, None))
    other = _hook()  # same code object: also protected
    with pytest.raises(PermissionError):
        hook("object.__delattr__", (other, "__defaults__"))
    hook("object.__setattr__", (test_allowed_events_pass, "__defaults__", None))  # others may
