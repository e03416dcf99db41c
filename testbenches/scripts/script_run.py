"""What the end-to-end script tests share: run a command, print what it did
(time, command, exit status, output) for the CTest log, and fail unless it
exited as expected."""
import os
import subprocess
import time


def run(cmd, expect=0, cwd=None, short=(), tail=None):
    """Runs cmd in cwd; paths listed in `short` print as their base names,
    and with `tail` only the last `tail` characters of each stream print."""
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    shown = " ".join(os.path.basename(c) if c in short else c for c in cmd)
    out, err = (r.stdout, r.stderr) if tail is None else (r.stdout[-tail:], r.stderr[-tail:])
    print(f"[{time.monotonic() - t0:.2f} s] $ {shown}  -> exit {r.returncode}\n{out}{err}")
    assert r.returncode == expect, f"exit {r.returncode}, expected {expect}"
    return r
