"""End-to-end test of scripts/sweep (CTest Scripts.SweepEndToEnd): small
sweeps through the real fabricsim binary, run as a user runs them.

usage: sweep_test.py SOURCE_DIR FABRICSIM
Checks: the CSV has one row per grid point and seed with the values each run
really used and its measured columns (one row per message size for a
collective); a second invocation runs nothing; an interrupted run (no done
marker) is redone alone; a bad value fails its run, whose stderr is reported,
and the sweep exits 1; --slurm writes a job array of one task per run that
runs its run when executed as a task; bad specs stop with exit 2 and the field.
"""
import csv
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC, FABRICSIM = sys.argv[1], os.path.abspath(sys.argv[2])
SWEEP = os.path.join(SRC, "scripts", "sweep")
TMP = tempfile.mkdtemp(prefix="sweep-test-")


def sweep(spec, *args):
    r = subprocess.run([SWEEP, spec, "--fabricsim", FABRICSIM, "-j", "2", *args],
                       capture_output=True, text=True, cwd=TMP)
    print(f"$ scripts/sweep {os.path.basename(spec)} {' '.join(args)}  -> exit {r.returncode}\n"
          f"{r.stdout}{r.stderr}")
    return r


def write_spec(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def rows(out):
    with open(os.path.join(out, "results.csv")) as f:
        return list(csv.DictReader(f))


def stats_mtimes(out):
    runs = os.path.join(out, "runs")
    return {d: os.stat(os.path.join(runs, d, "stats.json")).st_mtime_ns
            for d in os.listdir(runs) if os.path.exists(os.path.join(runs, d, "stats.json"))}


# --- a synthetic-traffic grid: 2 depths x 2 loads x 2 seeds on an 8-port switch
out = os.path.join(TMP, "grid")
spec = write_spec("grid.yaml", f"""
config: {SRC}/configs/switch64.yaml
set:
  switch.ports: 8
  sim.warmup_ns: 200
  sim.duration_ns: 2000
grid:
  switch.input_buffer_flits: [32, 256]
  traffic.load: [0.2, 0.5]
seeds: 2
out: {out}
""")
r = sweep(spec)
assert r.returncode == 0, "the sweep failed"
assert "8 runs" in r.stdout and "8 ok" in r.stdout, r.stdout
table = rows(out)
assert len(table) == 8, f"{len(table)} CSV rows, expected 8"
for col in ("run", "status", "switch.input_buffer_flits", "traffic.load", "seed",
            "throughput.accepted", "latency_ns.p99", "max(links.utilization)",
            "max(switches.input_buffer_occupancy_flits.max)", "sim.events", "error"):
    assert col in table[0], f"no column {col}: {list(table[0])}"
assert "config.switch.ports" not in table[0] and not any(c.startswith("config") for c in table[0])
points = sorted((t["switch.input_buffer_flits"], t["traffic.load"], t["seed"]) for t in table)
assert points == sorted(itertools.product(["32", "256"], ["0.2", "0.5"], ["1", "2"])), points
for t in table:
    assert t["status"] == "ok" and t["error"] == "", t
    # The values in the CSV are the ones the run used (its stats.json config).
    with open(os.path.join(out, "runs", t["run"], "stats.json")) as f:
        s = json.load(f)
    assert s["config"]["switch.input_buffer_flits"] == int(t["switch.input_buffer_flits"])
    assert s["config"]["traffic.load"] == float(t["traffic.load"])
    assert s["config"]["switch.ports"] == 8 and s["sim"]["seed"] == int(t["seed"])
    assert float(t["throughput.accepted"]) == s["throughput"]["accepted"]
    assert abs(float(t["throughput.offered"]) - float(t["traffic.load"])) < 0.1, t
    assert t["run"] == (f"input_buffer_flits={t['switch.input_buffer_flits']},"
                        f"load={t['traffic.load']},seed={t['seed']}"), t["run"]
    assert float(t["max(links.utilization)"]) == max(l["utilization"] for l in s["links"].values())
by = {(t["switch.input_buffer_flits"], t["traffic.load"], t["seed"]): t for t in table}
assert by[("256", "0.5", "1")]["throughput.accepted_flits"] != \
    by[("256", "0.5", "2")]["throughput.accepted_flits"], "seeds 1 and 2 gave the same run"
with open(os.path.join(out, "manifest.csv")) as f:
    assert len(list(csv.DictReader(f))) == 8

# Resumable: a second invocation runs nothing and rewrites the same CSV.
before = stats_mtimes(out)
assert len(before) == 8
with open(os.path.join(out, "results.csv")) as f:
    csv_before = f.read()
r = sweep(spec)
assert r.returncode == 0 and "0 to run" in r.stdout, r.stdout
assert stats_mtimes(out) == before, "a finished run was run again"
with open(os.path.join(out, "results.csv")) as f:
    assert f.read() == csv_before
# A run without its done marker (interrupted) is redone, alone.
redo = "input_buffer_flits=32,load=0.5,seed=2"
os.remove(os.path.join(out, "runs", redo, "done"))
r = sweep(spec, "--list")
assert re.search(rf"^{re.escape(redo)}\s+pending$", r.stdout, re.M), r.stdout
assert r.stdout.count(" done\n") == 7, r.stdout
r = sweep(spec)
assert r.returncode == 0 and "1 to run" in r.stdout, r.stdout
after = stats_mtimes(out)
assert [d for d in after if after[d] != before[d]] == [redo], "not exactly the interrupted run"

# --- a collective grid: one CSV row per message size of each run
cout = os.path.join(TMP, "coll")
cspec = write_spec("coll.yaml", f"""
config: {SRC}/configs/dgx-h100-allreduce.yaml
set: {{collective.min_bytes: 1024, collective.max_bytes: 4096}}
grid:
  collective.algorithm: [ring, nvls]
  width:                       # a group: these change together
    topology.links: [[1, 1, 1, 1], [2, 2, 2, 2]]
    topology.endpoints: [4, 8]
seeds: [3]
out: {cout}
""")
r = sweep(cspec)
assert r.returncode == 0, "the collective sweep failed"
table = rows(cout)
assert len(table) == 4 * 3, f"{len(table)} rows, expected 4 runs x 3 sizes"
for t in table:
    assert t["collectives.wrong"] == "0" and float(t["collectives.busbw_GBps"]) > 0, t
    assert (t["topology.links"], t["topology.endpoints"]) in (("1,1,1,1", "4"), ("2,2,2,2", "8")), t
    assert t["seed"] == "3" and t["collectives.algorithm"] == t["collective.algorithm"], t
assert sorted({t["collectives.size_bytes"] for t in table}) == ["1024", "2048", "4096"]
assert "algorithm=nvls,links=2-2-2-2,endpoints=8,seed=3" in {t["run"] for t in table}

# --- a bad value: its run fails, its stderr is reported, the sweep exits 1
fout = os.path.join(TMP, "fail")
fspec = write_spec("fail.yaml", f"""
config: {SRC}/configs/switch64.yaml
set: {{switch.ports: 4, sim.warmup_ns: 100, sim.duration_ns: 500}}
grid:
  traffic.load: [0.5, 1.5]
out: {fout}
""")
r = sweep(fspec)
assert r.returncode == 1, "a failed run must make the sweep fail"
assert "1 ok, 1 failed" in r.stdout, r.stdout
assert "FAILED load=1.5,seed=1 (exit 2)" in r.stderr, r.stderr
assert "value '1.5' is out of range" in r.stderr, "fabricsim's message is not reported"
with open(os.path.join(fout, "runs", "load=1.5,seed=1", "stderr")) as f:
    assert "traffic.load" in f.read()
assert not os.path.exists(os.path.join(fout, "runs", "load=1.5,seed=1", "done"))
table = {t["traffic.load"]: t for t in rows(fout)}
assert table["0.5"]["status"] == "ok" and table["1.5"]["status"] == "failed"
assert "out of range" in table["1.5"]["error"] and table["1.5"]["throughput.accepted"] == ""
r = sweep(fspec, "--dry-run")  # the failed run is retried, the good one is not
assert r.returncode == 0 and "traffic.load=1.5" in r.stdout and "traffic.load=0.5" not in r.stdout

# --- Slurm: a job array of one task per run; nothing runs until a task does
sout = os.path.join(TMP, "slurm")
sspec = write_spec("slurm.yaml", open(spec).read().replace(out, sout) +
                   "slurm:\n  partition: debug\n  time: \"00:05:00\"\n")
script = os.path.join(TMP, "sweep.sbatch")
r = sweep(sspec, "--slurm", script)
assert r.returncode == 0 and "a job array of 8 runs" in r.stdout, r.stdout
assert "--gather" in r.stdout
text = open(script).read()
assert re.search(r"^#SBATCH --array=0-7$", text, re.M), text
assert re.search(r"^#SBATCH --partition=debug$", text, re.M) and "#SBATCH --time=00:05:00" in text
assert subprocess.run(["bash", "-n", script]).returncode == 0
listing = [l.strip() for l in open(os.path.join(sout, "slurm-runs.txt"))]
with open(os.path.join(sout, "manifest.csv")) as f:
    assert listing == [m["dir"] for m in csv.DictReader(f)]
assert stats_mtimes(sout) == {}, "--slurm ran something"
# Array task 5, as Slurm would start it (no sbatch here), runs the 6th run.
env = dict(os.environ, SLURM_ARRAY_TASK_ID="5")
assert subprocess.run(["bash", script], env=env).returncode == 0
assert list(stats_mtimes(sout)) == [os.path.basename(listing[5])]
r = sweep(sspec, "--gather")
assert r.returncode == 1 and "1 ok, 7 not run" in r.stdout, r.stdout
assert [t["status"] for t in rows(sout)].count("pending") == 7

# --- spec errors: exit 2, the field and the value named, nothing run
for name, body, message in [
    ("unknown-field", "config: x.yaml\ngird: {traffic.load: [1]}\n", "unknown field 'gird'"),
    ("empty-grid", f"config: {SRC}/configs/switch64.yaml\ngrid: {{}}\n", "grid: missing or empty"),
    ("empty-values", f"config: {SRC}/configs/switch64.yaml\ngrid: {{traffic.load: []}}\n",
     "grid: traffic.load: needs a non-empty list"),
    ("no-config", "config: nowhere.yaml\ngrid: {traffic.load: [0.1]}\n",
     "config: file 'nowhere.yaml' not found"),
    ("bad-key", f"config: {SRC}/configs/switch64.yaml\ngrid: {{traffic.lod: [0.1]}}\n",
     "unknown parameter 'traffic.lod'; did you mean 'traffic.load'?"),
    ("bad-seeds", f"config: {SRC}/configs/switch64.yaml\ngrid: {{traffic.load: [0.1]}}\nseeds: x\n",
     "seeds: 'x'"),
]:
    r = sweep(write_spec(name + ".yaml", body + f"out: {TMP}/{name}\n"))
    assert r.returncode == 2, f"{name}: exit {r.returncode}"
    assert message in r.stderr, f"{name}: expected '{message}' in: {r.stderr}"
    assert not os.path.exists(os.path.join(TMP, name)), f"{name}: wrote its output directory"

shutil.rmtree(TMP)  # kept when a check fails
print("sweep end-to-end: all checks passed")
