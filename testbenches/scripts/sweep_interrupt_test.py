"""scripts/sweep stopped by Ctrl-C mid-grid (CTest Scripts.SweepInterrupt).

usage: sweep_interrupt_test.py SOURCE_DIR FABRICSIM
A grid of 6 synthetic runs of about a second each (600 us of a 32-port
switch; much shorter runs let the grid finish before the signal), 2 at a
time, gets SIGINT on its process group (what a terminal's Ctrl-C does) while the third and
fourth run. GNU parallel runs each job in a process group of its own and
passes the interrupt on as SIGTERM (then TERM again after 200 ms, then KILL):
a run that stops in time writes its stats.json marked interrupted, one that
does not is ended without one; neither has a done marker.
Checks: the sweep says how to resume and exits 130; the finished runs keep
their done marker and stats.json; a stopped run's stats.json, if any, is
whole and marked interrupted; the same command again runs only the runs not
done, and the CSV then has every point, none of them interrupted.
"""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC, FABRICSIM = sys.argv[1], os.path.abspath(sys.argv[2])
SWEEP = os.path.join(SRC, "scripts", "sweep")
TMP = tempfile.mkdtemp(prefix="sweep-interrupt-test-")
OUT = os.path.join(TMP, "grid")
PATIENCE = 60  # s: generous; every wait below normally takes a few seconds

spec = os.path.join(TMP, "grid.yaml")
with open(spec, "w") as f:
    f.write(f"""
config: {SRC}/configs/switch64.yaml
set:
  switch.ports: 32
  sim.warmup_ns: 100
  sim.duration_ns: 600000
grid:
  traffic.load: [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
out: {OUT}
""")
CMD = [SWEEP, spec, "--fabricsim", FABRICSIM, "-j", "2"]


def runs_dir():
    return os.path.join(OUT, "runs")


def marked(name):
    d = runs_dir()
    if not os.path.isdir(d):
        return []
    return sorted(r for r in os.listdir(d) if os.path.exists(os.path.join(d, r, name)))


def still_running():
    """Processes of this sweep's runs (their command lines name OUT)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if OUT.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


# --- start the sweep in its own process group, as a terminal would
t0 = time.monotonic()
p = subprocess.Popen(CMD, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                     cwd=TMP, start_new_session=True)
while len(marked("done")) < 2:
    assert p.poll() is None, f"the sweep ended before 2 runs were done: {p.communicate()}"
    assert time.monotonic() - t0 < PATIENCE, "2 runs not done in time"
    time.sleep(0.01)
time.sleep(0.5)  # the next two runs are simulating (each takes about a second)
done_at_signal = marked("done")
os.killpg(p.pid, signal.SIGINT)  # Ctrl-C: the sweep and GNU parallel
out, err = p.communicate(timeout=PATIENCE)
print(f"[{time.monotonic() - t0:.2f} s] $ scripts/sweep grid.yaml -j 2  (SIGINT after "
      f"{len(done_at_signal)} runs done) -> exit {p.returncode}\n{out}{err}")
# Runs the signal stopped may still be writing when the sweep exits.
while still_running():
    assert time.monotonic() - t0 < PATIENCE, f"runs still going: {still_running()}"
    time.sleep(0.01)

assert p.returncode == 130, f"exit {p.returncode}, expected 130"
assert "interrupted; run the same command again to resume" in err, err
done = marked("done")
assert set(done_at_signal) <= set(done), "a finished run lost its done marker"
assert len(done) < 6, f"every run finished before the signal took effect: {done}"
stats_before = {}
for r in done:
    with open(os.path.join(runs_dir(), r, "stats.json")) as f:
        s = json.load(f)
    assert s["sim"]["status"] == "ok" and "interrupted" not in s["sim"], (r, s["sim"])
    stats_before[r] = os.stat(os.path.join(runs_dir(), r, "stats.json")).st_mtime_ns
stopped = []
for r in sorted(os.listdir(runs_dir())):
    path = os.path.join(runs_dir(), r, "stats.json")
    if r in done or not os.path.exists(path):
        continue
    with open(path) as f:
        s = json.load(f)
    # (A run that ended just as the signal came is whole, and not interrupted.)
    if s["sim"]["status"] != "ok":
        assert s["sim"]["interrupted"] is True, s["sim"]
        assert s["sim"]["interrupted_by"] in ("SIGINT", "SIGTERM"), s["sim"]
        assert s["conservation"]["lost"] == 0
        stopped.append(r)
print(f"done before the signal: {done_at_signal}\ndone after it: {done}\n"
      f"stopped with an interrupted stats.json: {stopped}")

# --- the same command again: the runs not done, and only those
r = subprocess.run(CMD, capture_output=True, text=True, cwd=TMP, timeout=PATIENCE)
print(f"$ scripts/sweep grid.yaml -j 2  -> exit {r.returncode}\n{r.stdout}{r.stderr}")
assert r.returncode == 0, "the resumed sweep failed"
assert f"6 runs, {len(done)} done, {6 - len(done)} to run" in r.stdout, r.stdout
assert "6 ok" in r.stdout, r.stdout
for run, mtime in stats_before.items():
    assert os.stat(os.path.join(runs_dir(), run, "stats.json")).st_mtime_ns == mtime, \
        f"{run} was finished and ran again"
with open(os.path.join(OUT, "results.csv")) as f:
    table = list(csv.DictReader(f))
assert sorted(t["traffic.load"] for t in table) == ["0.3", "0.4", "0.5", "0.6", "0.7", "0.8"]
for t in table:
    assert t["status"] == "ok" and t["error"] == "", t
    with open(os.path.join(runs_dir(), t["run"], "stats.json")) as f:
        assert "interrupted" not in json.load(f)["sim"], t["run"]
shutil.rmtree(TMP)  # kept when a check fails
print("sweep interrupt: all checks passed")
