"""End-to-end test of scripts/plot (CTest Scripts.PlotEndToEnd): small real
runs and sweeps through this build's fabricsim, every kind of plot drawn from
them as a user draws it.

usage: plot_test.py SOURCE_DIR FABRICSIM
Checks, for each kind: the PNG is a valid PNG of a sane size that is not
blank; the numbers it drew (--data) are those of the runs' stats.json,
averaged over seeds; the models drawn over the data are recomputed here from
their formulas (not from scripts/lib/analytic.py) and agree with the
simulation where they must (the credit-loop bound caps every point and is
reached while it is far below the load; the alpha-beta time of a small ring
all-reduce); a straggler's delay shows in the completion times. Bad inputs
exit 2 with a message.
"""
import json
import math
import os
import shutil
import struct
import sys
import tempfile

import script_run

SRC, FABRICSIM = sys.argv[1], os.path.abspath(sys.argv[2])
PLOT = os.path.join(SRC, "scripts", "plot")
SWEEP = os.path.join(SRC, "scripts", "sweep")
TMP = tempfile.mkdtemp(prefix="plot-test-")


def run(cmd, expect=0):
    return script_run.run(cmd, expect, cwd=TMP, short=(PLOT, SWEEP, FABRICSIM))


def fabricsim(config, out, *sets):
    args = [FABRICSIM, "run", os.path.join(SRC, "configs", config), "--quiet", "--out", out]
    for s in sets:
        args += ["--set", s]
    run(args)
    with open(os.path.join(out, "stats.json")) as f:
        return json.load(f)


def plot(kind, *args, expect=0, png=None):
    """scripts/plot KIND ARGS -o PNG --data JSON; png=False: its default PNG."""
    data = os.path.join(TMP, f"{kind}-{len(os.listdir(TMP))}.json")
    out = [] if png is False else ["-o", png or data[:-5] + ".png"]
    r = run([PLOT, kind, *args, *out, "--data", data], expect)
    if expect:
        return r
    with open(data) as f:
        d = json.load(f)
    assert d["kind"] == kind, d
    png = png or d["png"]
    check_png(png)
    assert d["title"], "no title"
    return d


def check_png(path):
    """A PNG by its signature and header, of a sane size, not blank."""
    with open(path, "rb") as f:
        head = f.read(33)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    assert head[12:16] == b"IHDR", f"{path}: no IHDR chunk"
    w, h = struct.unpack(">II", head[16:24])
    size = os.path.getsize(path)
    assert 400 <= w <= 1400 and 250 <= h <= 1400, f"{path}: {w} x {h} pixels"
    assert 4_000 <= size <= 200_000, f"{path}: {size} bytes"
    import matplotlib.image
    img = matplotlib.image.imread(path)
    inked = (img[:, :, :3].min(axis=2) < 0.9).mean()
    assert inked > 0.02, f"{path}: {inked:.1%} of the pixels drawn: blank"


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def mean(xs):
    return sum(xs) / len(xs)


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def sweep_stats(out):
    """{run name: (stats, seed)} of a finished sweep."""
    res = {}
    for name in os.listdir(os.path.join(out, "runs")):
        with open(os.path.join(out, "runs", name, "stats.json")) as f:
            res[name] = json.load(f)
    return res


# --- a sweep of an 8-port switch: buffer depth x link latency x load, 2 seeds
sw = os.path.join(TMP, "sw")
spec = write("sw.yaml", f"""
config: {SRC}/configs/switch64.yaml
set: {{switch.ports: 8, sim.warmup_ns: 1000, sim.duration_ns: 3000, endpoint.rx_buffer_flits: 4096}}
grid:
  link.latency_ns: [20, 60]
  switch.input_buffer_flits: [27, 144]
  traffic.load: [0.3, 0.9]
seeds: 2
out: {sw}
""")
run([SWEEP, spec, "--fabricsim", FABRICSIM, "-j", "2"])
stats = sweep_stats(sw)
assert len(stats) == 16


def runs_where(**kv):
    out = []
    for s in stats.values():
        c = s["config"]
        if all(c[k.replace("__", ".")] == v for k, v in kv.items()):
            out.append(s)
    return out


# latency: a curve per (latency, buffer), a point per load, the mean over
# seeds; by default the PNG goes next to the sweep.
d = plot("latency", sw, png=False)
assert d["png"] == os.path.join(sw, "latency.png")
assert len(d["series"]) == 4, [s["label"] for s in d["series"]]
assert d["x"] == "throughput.accepted" and d["y"] == "latency_ns.mean"
for s in d["series"]:
    lat = float(s["label"].split("latency_ns=")[1].split(",")[0])
    buf = int(s["label"].split("input_buffer_flits=")[1])
    assert s["load"] == [0.3, 0.9] and s["runs"] == [2, 2], s
    for load, x, y, sat in zip(s["load"], s["x"], s["y"], s["saturated"]):
        g = runs_where(link__latency_ns=lat, switch__input_buffer_flits=buf, traffic__load=load)
        assert len(g) == 2
        assert close(x, mean([r["throughput"]["accepted"] for r in g])), (s["label"], load)
        assert close(y, mean([r["latency_ns"]["mean"] for r in g])), (s["label"], load)
        acc, off = x, mean([r["throughput"]["offered"] for r in g])
        assert sat == (acc < 0.97 * off), (s["label"], load, acc, off)
# 27 flits (3 packets) over 20-ns links carry at most 0.37 (the credit loop):
# load 0.3 passes, 0.9 saturates; over 60-ns links 0.14 at most.
s = next(s for s in d["series"] if s["label"] == "latency_ns=20, input_buffer_flits=27")
assert s["saturated"] == [False, True], s
s = next(s for s in d["series"] if s["label"] == "latency_ns=60, input_buffer_flits=27")
assert s["saturated"] == [True, True], s
s = next(s for s in d["series"] if s["label"] == "latency_ns=20, input_buffer_flits=144")
assert s["saturated"] == [False, False], s
# Other columns and a filter; the default output is named after what it shows
# (latency.png, drawn above, stays).
d = plot("latency", sw, "--x", "throughput.offered", "--y", "network_latency_ns.p99",
         "--where", "switch.input_buffer_flits=144", "--where", "traffic.load=0.9", png=False)
assert d["png"] == os.path.join(sw, "latency-network_latency_ns.p99-vs-throughput.offered-"
                                    "switch.input_buffer_flits=144-traffic.load=0.9.png"), d["png"]
assert os.path.isfile(os.path.join(sw, "latency.png"))
assert [len(s["x"]) for s in d["series"]] == [1, 1] and len(d["runs"]) == 4
g = runs_where(link__latency_ns=20, switch__input_buffer_flits=144, traffic__load=0.9)
assert close(d["series"][0]["y"][0], mean([r["network_latency_ns"]["p99"] for r in g]))

# buffers: accepted against depth per (latency, load), the credit-loop bound
d = plot("buffers", sw)
assert len(d["series"]) == 4, [s["label"] for s in d["series"]]
f = cyc = 0.64
for s in d["series"]:
    assert s["buffer_flits"] == [27, 144]
    lat, load = s["latency_ns"], s["load"]
    rtt = 2 * lat + (9 + 1) * f + cyc / 2  # 9-flit packets
    assert close(s["rtt_ns"], rtt), s
    need = math.ceil(load * rtt / f / 9 - 1e-9) * 9
    assert s["needed_flits"] == need, (s["needed_flits"], need)
    for b, acc, bound in zip(s["buffer_flits"], s["accepted"], s["bound"]):
        g = runs_where(link__latency_ns=lat, switch__input_buffer_flits=b, traffic__load=load)
        assert close(acc, mean([r["throughput"]["accepted"] for r in g]))
        expect = min(load, 1.0, (b // 9) * 9 * f / rtt)
        assert close(bound, expect), (s["label"], b, bound, expect)
        # The model: no point above the bound; far below the load, the bound is reached.
        assert acc <= bound * 1.02, (s["label"], b, acc, bound)
        if bound < 0.5 * load:
            assert acc >= 0.95 * bound, (s["label"], b, acc, bound)
hit = [(s["label"], b) for s in d["series"] for b, bd in zip(s["buffer_flits"], s["bound"])
       if bd < 0.5 * s["load"]]
assert len(hit) >= 3, f"too few points where the credit loop limits: {hit}"

# --- heatmap: one run of the 8-port switch, and a DGX H100 (4 switches)
one = os.path.join(sw, "runs", "latency_ns=60,input_buffer_flits=27,load=0.9,seed=1")
s1 = stats[os.path.basename(one)]
d = plot("heatmap", one)
assert d["switches"] == ["fabric.sw0"] and d["capacity"] == [27]
assert d["occupancy_scale_max"] == 27  # the colour scale is the buffer, not the largest mean
w = s1["sim"]["window_ns"]
for p in range(8):
    assert d["utilization"][0][p] == s1["links"][f"fabric.sw0.out{p}"]["utilization"]
    assert close(d["input_credit_stall_fraction"][p],
                 s1["links"][f"fabric.ep{p}.tx0"]["credit_stall_ns"] / w)
assert d["occupancy_mean_flits"][0] == \
    s1["switches"]["fabric.sw0"]["input_buffer_occupancy_flits"]["per_port_mean"]
# 27 flits over 60-ns links: the inputs' links wait for credits much of the time.
assert min(d["input_credit_stall_fraction"]) > 0.3, d["input_credit_stall_fraction"]

ar = os.path.join(TMP, "ar")
sa = {a: fabricsim("dgx-h100-allreduce.yaml", os.path.join(ar, a), f"collective.algorithm={a}",
                   "collective.max_bytes=65536", "collective.step_factor=4")
      for a in ("ring", "nvls")}
d = plot("heatmap", os.path.join(ar, "ring", "stats.json"))
assert d["switches"] == ["fabric.sw0", "fabric.sw1", "fabric.sw2", "fabric.sw3"]
assert [len(u) for u in d["utilization"]] == [40, 32, 32, 40]  # links 5,4,4,5 x 8 GPUs
for i, sw_name in enumerate(d["switches"]):
    for p, u in enumerate(d["utilization"][i]):
        assert u == sa["ring"]["links"][f"{sw_name}.out{p}"]["utilization"]
    assert d["occupancy_mean_flits"][i] == \
        sa["ring"]["switches"][sw_name]["input_buffer_occupancy_flits"]["per_port_mean"]
assert "input_credit_stall_fraction" not in d  # the wiring of GPUs to ports is not in stats.json

# --- busbw: ring and NVLS, the alpha-beta model over each
d = plot("busbw", ar)
labels = [s["label"] for s in d["series"]]
assert sorted(labels) == ["algorithm=nvls", "algorithm=ring"], labels
for s in d["series"]:
    rows = sa[s["label"].split("=")[1]]["collectives"]["rows"]
    assert s["size_bytes"] == [r["size_bytes"] for r in rows] == [1024, 4096, 16384, 65536]
    assert s["busbw_GBps"] == [r["busbw_GBps"] for r in rows]
    assert len(s["model_busbw_GBps"]) == 4
ring = next(s for s in d["series"] if s["label"] == "algorithm=ring")
# Ring all-reduce, n = 8 on 18 links, 100-ns links, 256-B payloads (17 flits):
# T = 2(n-1) alpha + S/256 x 2(n-1)/n x 17 x f / 18.
alpha = math.ceil(100.64 / 0.64 - 1e-9) * 0.64 + 16 * 0.64 + 100 + 17 * 0.64
assert ring["model"]["steps"] == 14 and close(ring["model"]["alpha_ns"], alpha)
for size, bw, model in zip(ring["size_bytes"], ring["busbw_GBps"], ring["model_busbw_GBps"]):
    t = 14 * alpha + size / 256 * 14 / 8 * 17 * 0.64 / 18
    assert close(model, size / t * 1.75), (size, model, size / t * 1.75)
assert 0.9 < ring["busbw_GBps"][0] / ring["model_busbw_GBps"][0] < 1.1, ring  # latency-bound

# --- straggler: GPU 3 starts every call 1 us late, against no delay
st = os.path.join(TMP, "st")
ss = {d: fabricsim("dgx-h100-allreduce.yaml", os.path.join(st, str(d)), "collective.max_bytes=16384",
                   "collective.step_factor=4", "collective.iterations=4", "straggler.gpu=3",
                   "straggler.jitter_ns=200", f"straggler.delay_ns={d}") for d in (0, 1000)}
d = plot("straggler", f"on time={st}/0", f"late={st}/1000/stats.json", "--size", "4096")
assert [s["label"] for s in d["series"]] == ["on time", "late"]
for s, delay in zip(d["series"], (0, 1000)):
    (r,) = s["runs"]
    rows = ss[delay]["collectives"]["rows"]
    assert r["time_us_p50"] == [x["time_us_p50"] for x in rows]
    assert r["time_us_p99"] == [x["time_us_p99"] for x in rows]
    assert r["time_us_max"] == [x["time_us_max"] for x in rows]
    assert r["iterations"] == [4] * len(rows)
    assert r["wait_size_bytes"] == 4096
    assert r["gpu_wait_us_mean"] == next(x["gpu_wait_us_mean"] for x in rows
                                         if x["size_bytes"] == 4096)
base, late = (s["runs"][0] for s in d["series"])
extra = late["time_us_p50"][0] - base["time_us_p50"][0]
assert 0.5 < extra < 1.2, f"a 1-us straggler added {extra} us at 1 KiB"

# --- bad inputs: exit 2 and a message
r = plot("heatmap", sw, expect=2)
assert "heatmap draws one run" in r.stderr
r = plot("busbw", one, expect=2)
assert "no collective run" in r.stderr
r = plot("latency", os.path.join(TMP, "nowhere"), expect=2)
assert "not found" in r.stderr
r = plot("latency", sw, "--y", "latency_ns.p42", expect=2)
assert "no column 'latency_ns.p42'" in r.stderr
r = plot("latency", sw, "--where", "traffic.load=0.55", expect=2)
assert "no successful run" in r.stderr
# buffers needs runs at two or more depths: one depth would be a point per curve.
r = plot("buffers", sw, "--where", "switch.input_buffer_flits=27", expect=2)
assert "switch.input_buffer_flits takes one value (27)" in r.stderr, r.stderr
assert "two or more input buffer depths" in r.stderr, r.stderr

shutil.rmtree(TMP)  # kept when a check fails
print("plot end-to-end: all checks passed")
