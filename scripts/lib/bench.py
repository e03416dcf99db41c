"""Speed benchmarks (scripts/bench): runs the cases of issue 7 through
build/fabricsim and prints one table (or JSON). Never a test: host times
depend on the machine and its load; docs/performance.md has the method.

usage: bench.py OUT [--json] [--quick] [--no-nvl72] [--sweep] [--scaling] [--micro] [--icount]
                    [--misses] [--booksim=PATH] [--repeat=N]

--booksim=PATH runs the switch cases that name a BookSim2 rate through
fabricsim and the BookSim2 binary PATH alternately (configs/booksim/) and
prints the ratio of their simulated cycles per host second.

--repeat=N runs each case N times and keeps the fastest (host time on a
shared machine only ever gets worse than the code's own cost).
"""
import json
import re
import shutil
import os
import subprocess
import sys

OUT = sys.argv[1]
FLAGS = {a for a in sys.argv[2:] if not a.startswith(("--repeat=", "--booksim="))}
REPEATS = [int(a.split("=", 1)[1]) for a in sys.argv[2:] if a.startswith("--repeat=")]
BOOKSIM = next((a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--booksim=")), None)
REPEAT = max(REPEATS or [3 if BOOKSIM else 1])
BOOKSIM_CONFIG = "configs/booksim/sw64-voq-islip1.cfg"
# The binary measured: build/fabricsim (scripts/bench builds it); its tests
# name another with FABRICSIM_BENCH_BINARY.
FABRICSIM = os.environ.get("FABRICSIM_BENCH_BINARY", "build/fabricsim")
SWITCH = "configs/switch64.yaml"
# 1024-flit input buffers: with the preset's 512 the 64-port switch accepts
# only 0.864 at offered 0.9 (its VOQs fill the shared buffer), and a speed
# comparison must do the work it claims: accepted = offered (docs/performance.md).
ISLIP = ["traffic.packet_flits=1", "switch.queueing=voq", "switch.allocator=islip",
         "switch.iterations=1", "sim.warmup_ns=2000", "switch.input_buffer_flits=1024"]
COLL = ["workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9"]


def case(name, config, sets, group, **extra):
    return dict(name=name, config=config, sets=sets, group=group, **extra)


CASES = [
    # BookSim2's rates on this machine class recorded in issue 7 (cycles per
    # host second); --booksim measures them instead, beside these cases.
    case("voq-islip1-64p-load0.3", SWITCH, ISLIP + ["traffic.load=0.3", "sim.duration_ns=50000"],
         "switch", booksim=5400, load=0.3),
    case("voq-islip1-64p-load0.9", SWITCH, ISLIP + ["traffic.load=0.9", "sim.duration_ns=50000"],
         "switch", booksim=830, load=0.9),
    # Ten times the window: at 1/30 of the traffic the host time per
    # simulated ns must fall to 1/20 of load 0.3's or less.
    case("voq-islip1-64p-load0.01", SWITCH, ISLIP + ["traffic.load=0.01", "sim.duration_ns=500000"],
         "switch", load=0.01),
    case("dgx-h100-allreduce-64MiB-ring", "configs/dgx-h100-allreduce.yaml",
         ["collective.algorithm=ring", "collective.min_bytes=67108864", "collective.max_bytes=67108864"],
         "collective"),
    case("dgx-h100-allreduce-64MiB-nvls", "configs/dgx-h100-allreduce.yaml",
         ["collective.algorithm=nvls", "collective.min_bytes=67108864", "collective.max_bytes=67108864"],
         "collective"),
    case("dgx-h100-allreduce-64MiB-push", "configs/dgx-h100-allreduce.yaml",
         ["collective.algorithm=push", "collective.min_bytes=67108864", "collective.max_bytes=67108864"],
         "collective"),
    # Co-simulation cost (issue 4's target: rtl <= 3x model).
    case("dgx-h100-nvls-16MiB-alu-model", "configs/dgx-h100-allreduce.yaml",
         ["collective.algorithm=nvls", "reduction.alu=model", "collective.min_bytes=16777216",
          "collective.max_bytes=16777216"], "collective"),
    case("dgx-h100-nvls-16MiB-alu-rtl", "configs/dgx-h100-allreduce.yaml",
         ["collective.algorithm=nvls", "reduction.alu=rtl", "collective.min_bytes=16777216",
          "collective.max_bytes=16777216"], "collective"),
    case("nvl72-allreduce-64MiB-nvls", "configs/nvl72.yaml",
         COLL + ["collective.algorithm=nvls", "collective.min_bytes=67108864",
                 "collective.max_bytes=67108864"], "nvl72"),
    # The same without payloads (collective.data=false: the same timing,
    # Collective.TimingOnlyIsTheSameSimulation), what a design sweep runs.
    case("nvl72-allreduce-64MiB-nvls-timing", "configs/nvl72.yaml",
         COLL + ["collective.algorithm=nvls", "collective.min_bytes=67108864",
                 "collective.max_bytes=67108864", "collective.data=false"], "nvl72"),
    # Issue 7: the whole 1 KiB .. 1 GiB sweep of both, <= 60 s in total;
    # with data (every element checked) and timing only.
    case("dgx-h100-sweep-1KiB-1GiB-ring", "configs/dgx-h100.yaml",
         COLL + ["collective.algorithm=ring", "collective.min_bytes=1024",
                 "collective.max_bytes=1073741824"], "sweep"),
    case("dgx-h100-sweep-1KiB-1GiB-nvls", "configs/dgx-h100.yaml",
         COLL + ["collective.algorithm=nvls", "collective.min_bytes=1024",
                 "collective.max_bytes=1073741824"], "sweep"),
    case("dgx-h100-sweep-1KiB-1GiB-ring-timing", "configs/dgx-h100.yaml",
         COLL + ["collective.algorithm=ring", "collective.min_bytes=1024",
                 "collective.max_bytes=1073741824", "collective.data=false"], "sweep"),
    case("dgx-h100-sweep-1KiB-1GiB-nvls-timing", "configs/dgx-h100.yaml",
         COLL + ["collective.algorithm=nvls", "collective.min_bytes=1024",
                 "collective.max_bytes=1073741824", "collective.data=false"], "sweep"),
]
SCALING_PORTS = (16, 32, 64, 128, 256)
SCALING_LOADS = (0.01, 0.1, 0.3, 0.6, 0.9)
for p in SCALING_PORTS:
    for load in SCALING_LOADS:
        win = 200000 if load < 0.05 else 20000
        CASES.append(case(f"scaling-{p}p-load{load}", SWITCH,
                          ISLIP + [f"switch.ports={p}", f"traffic.load={load}", f"sim.duration_ns={win}"],
                          "scaling", ports=p, load=load))

# --icount: short cases whose instruction counts (callgrind) decide profile
# work on a machine whose wall clock varies 2x; docs/performance.md.
ICOUNT = [
    case("64p-load0.3-3us", SWITCH, ISLIP + ["traffic.load=0.3", "sim.warmup_ns=500", "sim.duration_ns=2500"],
         "icount"),
    case("64p-load0.01-52us", SWITCH, ISLIP + ["traffic.load=0.01", "sim.duration_ns=50000"], "icount"),
    case("dgx-h100-ring-1MiB-timing", "configs/dgx-h100-allreduce.yaml",
         ["collective.algorithm=ring", "collective.min_bytes=1048576", "collective.max_bytes=1048576",
          "collective.data=false"], "icount"),
    case("nvl72-nvls-256KiB-timing", "configs/nvl72.yaml",
         COLL + ["collective.algorithm=nvls", "collective.min_bytes=262144", "collective.max_bytes=262144",
                 "collective.data=false"], "icount"),
]
# --misses: the same cases and nvl72's memory-bound regime (the first 3 us
# of 16 MiB, engine tables full) under cachegrind with its first-level data
# cache at a 512 KiB L2's size: what leaves the L2, exactly repeatable.
# (valgrind here ignores --LL and takes the 512 MiB "L3" the VM reports.)
MISSES = ICOUNT + [
    case("nvl72-nvls-16MiB-3us-timing", "configs/nvl72.yaml",
         ["workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=3000",
          "collective.algorithm=nvls", "collective.min_bytes=16777216",
          "collective.max_bytes=16777216", "collective.data=false"], "misses",
         cut_short=True),  # its window ends mid-call: stats.json says failed, by design
]


def valgrind_rows(cases, tool, misses=False):
    """Runs each case under valgrind `tool` (argument list); returns the rows,
    with the data misses cachegrind printed when `misses`."""
    if not shutil.which("valgrind"):
        sys.exit("bench: --icount and --misses need valgrind (scripts/setup profile)")
    rows = []
    for c in cases:
        d = os.path.join(OUT, c["name"])
        cmd = ["valgrind"] + tool(d) + [FABRICSIM, "run", c["config"], "--quiet", "--out", d]
        for st in c["sets"]:
            cmd += ["--set", st]
        r = subprocess.run(cmd, capture_output=True, text=True)
        instr = re.search(r"(?:Collected :|I\s+refs:)\s+([\d,]+)", r.stderr)
        if not instr or (r.returncode != 0 and not c.get("cut_short")):
            sys.exit(f"bench: {c['name']} failed under valgrind: {r.stderr.strip()[-500:]}")
        try:
            with open(os.path.join(d, "stats.json")) as f:
                sim = json.load(f)["sim"]
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"bench: {c['name']} wrote no usable stats.json ({e}): {r.stderr.strip()[-500:]}")
        row = {"case": c["name"], "instructions": int(instr.group(1).replace(",", "")),
               "events": sim["events"], "simulated_ns": sim["simulated_ns"]}
        if misses:
            m = re.search(r"D1\s+misses:\s+([\d,]+)", r.stderr)
            if not m:
                sys.exit(f"bench: {c['name']}: cachegrind printed no D1 misses: {r.stderr.strip()[-500:]}")
            row["misses_512KiB"] = int(m.group(1).replace(",", ""))
        rows.append(row)
    return rows


if "--icount" in FLAGS:
    table = valgrind_rows(ICOUNT, lambda d: ["--tool=callgrind", f"--callgrind-out-file={d}.callgrind"])
    if "--json" in FLAGS:
        print(json.dumps(table, indent=1))
    else:
        print(f"{'case':34} {'instructions':>14} {'events':>10} {'per event':>10}")
        for t in table:
            print(f"{t['case']:34} {t['instructions']:14,d} {t['events']:10d} {t['instructions'] / t['events']:10.0f}")
        print("instructions of the whole process (start-up, about 25 M, included); callgrind out files in " + OUT)
    sys.exit(0)

if "--misses" in FLAGS:
    table = valgrind_rows(MISSES, lambda d: ["--tool=cachegrind", "--cache-sim=yes", "--D1=524288,8,64",
                                             f"--cachegrind-out-file={d}.cachegrind"],
                          misses=True)
    if "--json" in FLAGS:
        print(json.dumps(table, indent=1))
    else:
        print(f"{'case':34} {'instructions':>14} {'misses 512 KiB':>15} {'per 1000 instr':>15}")
        for t in table:
            print(f"{t['case']:34} {t['instructions']:14,d} {t['misses_512KiB']:15,d} "
                  f"{1000 * t['misses_512KiB'] / t['instructions']:15.2f}")
        print("data misses of a 512 KiB, 8-way cache in place of the L1 (what would leave an L2), whole "
              "process; cachegrind out files in " + OUT)
    sys.exit(0)

def booksim_once(load):
    """One BookSim2 run of the switch at `load`: (cycles, host s, accepted)."""
    cmd = [BOOKSIM, BOOKSIM_CONFIG, f"injection_rate={load}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    cycles = re.search(r"Time taken is (\d+) cycles", r.stdout)
    host = re.search(r"Total run time ([\d.eE+-]+)", r.stdout)
    acc = re.findall(r"Accepted flit rate average = ([\d.eE+-]+)", r.stdout)
    # (BookSim2 exits 255 after a successful run: main() returns -1 then.)
    if not cycles or not host or not acc:
        sys.exit(f"bench: {' '.join(cmd)} ended without 'Time taken', 'Total run time' and the "
                 f"accepted rate (exit {r.returncode}): {(r.stdout + r.stderr).strip()[-500:]}")
    return int(cycles.group(1)), float(host.group(1)), float(acc[-1])


def booksim_side_by_side():
    """fabricsim and BookSim2 alternately on the same switch, REPEAT times
    each; the fastest of each; the ratio of cycles per host second."""
    rows = []
    for c in [c for c in CASES if "booksim" in c]:
        d = os.path.join(OUT, c["name"])
        fab, bs = [], []
        for _ in range(REPEAT):
            fab.append(run_once(c, d))
            bs.append(booksim_once(c["load"]))
        f = min(fab, key=lambda x: x["sim"]["host_seconds"])
        b = min(bs, key=lambda x: x[1])
        fc = f["host"]["flit_cycles_per_second"]
        rows.append({"case": c["name"], "load": c["load"],
                     "fabricsim_cycles_per_s": fc, "fabricsim_host_s": f["sim"]["host_seconds"],
                     "fabricsim_accepted": f["throughput"]["accepted"], "fabricsim_build": f["host"]["build"],
                     "booksim2_cycles": b[0], "booksim2_host_s": b[1], "booksim2_cycles_per_s": b[0] / b[1],
                     "booksim2_accepted": b[2], "speedup_vs_booksim2": fc / (b[0] / b[1])})
    if "--json" in FLAGS:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'case':<26} {'fabricsim cycles/s':>18} {'accepted':>8} {'BookSim2 cycles/s':>17} "
          f"{'accepted':>8} {'ratio':>7}")
    for r in rows:
        print(f"{r['case']:<26} {r['fabricsim_cycles_per_s']:>18.4g} {r['fabricsim_accepted']:>8.4f} "
              f"{r['booksim2_cycles_per_s']:>17.4g} {r['booksim2_accepted']:>8.4f} "
              f"{r['speedup_vs_booksim2']:>6.1f}x")
    print(f"fastest of {REPEAT} alternating run(s) each; fabricsim: {FABRICSIM} ({rows[0]['fabricsim_build']}), "
          f"BookSim2: {BOOKSIM} {BOOKSIM_CONFIG} injection_rate=LOAD (its 'Time taken' over its "
          "'Total run time'); cycle = one flit time on a port")


groups = {"switch"}
if "--quick" not in FLAGS:
    groups |= {"collective"}
    if "--no-nvl72" not in FLAGS:
        groups.add("nvl72")
if "--sweep" in FLAGS:
    groups.add("sweep")
if "--scaling" in FLAGS:
    groups = {"scaling"}


def run_once(c, d):
    cmd = [FABRICSIM, "run", c["config"], "--quiet", "--out", d]
    for s in c["sets"]:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench: {c['name']} failed: {r.stderr.strip()}")
    with open(os.path.join(d, "stats.json")) as f:
        return json.load(f)


def run(c):
    d = os.path.join(OUT, c["name"])
    s = min((run_once(c, d) for _ in range(REPEAT)), key=lambda x: x["sim"]["host_seconds"])
    h, sim = s["host"], s["sim"]
    hops = sum(l["flits"] for l in s.get("links", {}).values())
    row = {
        "case": c["name"],
        "simulated_ns": sim["simulated_ns"],
        "host_s": sim["host_seconds"],
        "host_s_per_sim_us": sim["host_seconds"] / (sim["simulated_ns"] / 1000),
        "flit_cycles_per_s": h["flit_cycles_per_second"],
        "delivered_flits_per_s": h["delivered_flits_per_second"],
        "flit_hops_per_s": hops / sim["host_seconds"],
        "events": sim["events"],
        "events_per_s": h["events_per_second"],
        "peak_rss_mib": h["peak_rss_bytes"] / 2**20,
        "build": h["build"],
    }
    for k in ("ports", "load"):
        if k in c:
            row[k] = c[k]
    if "booksim" in c:
        row["booksim2_cycles_per_s"] = c["booksim"]
        row["speedup_vs_booksim2"] = h["flit_cycles_per_second"] / c["booksim"]
    if "throughput" in s and s.get("config", {}).get("workload.kind") == "synthetic":
        row["accepted"] = s["throughput"]["accepted"]
        row["latency_mean_ns"] = s["network_latency_ns"]["mean"]
    if "collectives" in s:
        rows = s["collectives"]["rows"]
        row["busbw_GBps"] = rows[-1]["busbw_GBps"]
        row["wrong"] = sum(r["wrong"] for r in rows)
        row["sizes"] = len(rows)
    return row


if BOOKSIM:
    booksim_side_by_side()
    sys.exit(0)

rows = [run(c) for c in CASES if c["group"] in groups]
by = {r["case"]: r for r in rows}

if "--scaling" in FLAGS:
    with open(os.path.join(OUT, "scaling.csv"), "w") as f:
        f.write("ports,load,host_s_per_sim_us,host_ns_per_flit_hop,events_per_flit_hop,flit_hops_per_s\n")
        for r in rows:
            hops = r["flit_hops_per_s"] * r["host_s"]
            f.write(f"{r['ports']},{r['load']},{r['host_s_per_sim_us']:.6g},"
                    f"{1e9 * r['host_s'] / hops:.6g},{r['events'] / hops:.4g},{r['flit_hops_per_s']:.6g}\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
        for load in SCALING_LOADS:
            rs = [r for r in rows if r["load"] == load]
            a1.plot([r["ports"] for r in rs], [r["host_s_per_sim_us"] for r in rs], marker="o",
                    label=f"load {load}")
            a2.plot([r["ports"] for r in rs],
                    [1e9 * r["host_s"] / (r["flit_hops_per_s"] * r["host_s"]) for r in rs],
                    marker="o", label=f"load {load}")
        for a in (a1, a2):
            a.set_xscale("log", base=2)
            a.set_xlabel("switch ports")
            a.grid(alpha=0.3)
            a.legend(fontsize=7)
        a1.set_yscale("log")
        a1.set_ylabel("host s per simulated us")
        a1.set_title("Host time grows with traffic (ports x load)", fontsize=9)
        a2.set_ylabel("host ns per flit-hop")
        a2.set_title("Cost per flit-hop", fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, "scaling.png"), dpi=110)
    except ImportError:
        pass

if "--json" in FLAGS:
    print(json.dumps(rows, indent=2))
    sys.exit(0)
print(f"{'case':<34} {'sim ns':>10} {'host s':>8} {'cycles/s':>9} {'hops/s':>9} {'events/s':>9} "
      f"{'RSS MiB':>8}  note")
for r in rows:
    note = ""
    if "speedup_vs_booksim2" in r:
        note = f"{r['speedup_vs_booksim2']:.1f}x BookSim2; "
    if "accepted" in r:
        note += f"accepted {r['accepted']:.4f}, latency {r['latency_mean_ns']:.1f} ns"
        if "load" in r:
            ok = abs(r["accepted"] - r["load"]) <= 0.01 * r["load"]
            note += " (= offered)" if ok else f" (BELOW offered {r['load']})"
    if r["case"] == "voq-islip1-64p-load0.01" and "voq-islip1-64p-load0.3" in by:
        note += (f"; host per sim ns = 1/{by['voq-islip1-64p-load0.3']['host_s_per_sim_us'] / r['host_s_per_sim_us']:.0f}"
                 " of load 0.3's")
    if "busbw_GBps" in r:
        note = f"{r['sizes']} size(s), busbw {r['busbw_GBps']:.0f} GB/s at the largest, #wrong {r['wrong']}"
    if r["case"].endswith("-alu-rtl"):
        base = by.get(r["case"][:-3] + "model")
        if base:
            note += f", {r['host_s'] / base['host_s']:.1f}x the C++ ALU's host time"
    print(f"{r['case']:<34} {r['simulated_ns']:>10.0f} {r['host_s']:>8.2f} {r['flit_cycles_per_s']:>9.3g} "
          f"{r['flit_hops_per_s']:>9.3g} {r['events_per_s']:>9.3g} {r['peak_rss_mib']:>8.1f}  {note}")
for kind, pick in (("with data", lambda n: not n.endswith("-timing")), ("timing only", lambda n: n.endswith("-timing"))):
    sweep = [r for r in rows if r["case"].startswith("dgx-h100-sweep") and pick(r["case"])]
    if sweep:
        print(f"sweeps {kind}: {sum(r['host_s'] for r in sweep):.1f} s host in total (target <= 60 s)")
print("cycle = one flit time; hops = flits carried by every link; BookSim2 rates recorded in issue 7 "
      f"(same machine class; --booksim PATH measures them side by side); fastest of {REPEAT} run(s) per case")
builds = sorted({r["build"] for r in rows})
print("build: " + ", ".join(builds)
      + ("" if any("profile-guided" in b for b in builds) else " (scripts/build --pgo: profile-guided)"))
