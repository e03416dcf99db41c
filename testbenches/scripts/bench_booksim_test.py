"""scripts/bench --booksim (CTest Scripts.BenchBooksim; docs/performance.md):
a missing or unusable BookSim2 binary is refused at once, naming it; with a
stand-in for BookSim2 that prints what BookSim2 prints (and exits 255 as
BookSim2 does after a good run), both switch cases run alternately and the
ratio printed is fabricsim's cycles per host second over BookSim2's 'Time
taken' cycles per 'Total run time'.

usage: bench_booksim_test.py SOURCE_DIR FABRICSIM
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import script_run

SRC, FABRICSIM = sys.argv[1], os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="bench-booksim-test-")


def run(cmd, expect=0, env=None):
    return script_run.run(cmd, expect, cwd=SRC, tail=2000) if env is None else \
        check(subprocess.run(cmd, capture_output=True, text=True, cwd=SRC, env=env), expect)


def check(r, expect):
    print(f"$ ... -> exit {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-2000:]}")
    assert r.returncode == expect, f"exit {r.returncode}, expected {expect}"
    return r


bench = os.path.join(SRC, "scripts", "bench")
r = run([bench, "--booksim"], expect=2)
assert "--booksim needs the path of a BookSim2 binary" in r.stderr
r = run([bench, "--micro", "--booksim", "/bin/true"], expect=2)
assert "does not go with --micro" in r.stderr
r = run([bench, "--booksim", os.path.join(TMP, "no-booksim")], expect=2)
assert "no-booksim: not an executable file" in r.stderr and "booksim2" in r.stderr

# A stand-in: 6000 cycles in 2 s (3000 cycles/s) at any load, accepted = load.
fake = os.path.join(TMP, "booksim")
with open(fake, "w") as f:
    f.write("#!/bin/sh\n"
            "rate=${2#injection_rate=}\n"
            "echo \"Time taken is 6000 cycles\"\n"
            "echo \"Accepted flit rate average = $rate (1 samples)\"\n"
            "echo \"Total run time 2.0\"\n"
            "exit 255\n")
os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
env = dict(os.environ, FABRICSIM_BENCH_BINARY=FABRICSIM)
out = os.path.join(TMP, "out")
os.makedirs(out)
r = run(["/usr/bin/python3", os.path.join(SRC, "scripts", "lib", "bench.py"), out,
         "--booksim=" + fake, "--repeat=1", "--json"], env=env)
rows = json.loads(r.stdout)
assert [x["case"] for x in rows] == ["voq-islip1-64p-load0.3", "voq-islip1-64p-load0.9"], rows
for x in rows:
    assert x["booksim2_cycles_per_s"] == 3000.0, x
    assert x["booksim2_accepted"] == x["load"], x
    assert abs(x["speedup_vs_booksim2"] - x["fabricsim_cycles_per_s"] / 3000.0) < 1e-9, x
    assert abs(x["fabricsim_accepted"] - x["load"]) <= 0.01 * x["load"], x  # the same work offered
# BookSim2's output without its summary is an error that shows it.
with open(fake, "w") as f:
    f.write("#!/bin/sh\necho 'Simulation unstable, ending ...'\nexit 255\n")
r = run(["/usr/bin/python3", os.path.join(SRC, "scripts", "lib", "bench.py"), out,
         "--booksim=" + fake, "--repeat=1"], expect=1, env=env)
assert "ended without 'Time taken'" in r.stderr and "Simulation unstable" in r.stderr
shutil.rmtree(TMP)
print("ok")
