"""Long validation runs (scripts/validate): switching theory references and
the collectives' alpha-beta models; `validate.py nccl ...` runs the measured
nccl-tests logs instead (scripts/lib/validate_nccl.py).

Each case lists runs (build/fabricsim overrides), a reference value per run
(a formula or a published table) and how the simulated value is read from
stats.json. Runs go in parallel; the report is markdown, plus PNG plots when
matplotlib is installed.
"""
import concurrent.futures as cf
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analytic  # noqa: E402  (the models, written once: scripts/lib/analytic.py)

if len(sys.argv) > 1 and sys.argv[1] == "nccl":  # the measured logs: scripts/lib/validate_nccl.py
    import validate_nccl  # noqa: E402
    validate_nccl.main(sys.argv[2:])
    sys.exit(0)

OUT, WINDOW = sys.argv[1], int(sys.argv[2])
CFG = "configs/switch64.yaml"


def cells(ports, *extra):
    return [f"switch.ports={ports}", "traffic.packet_flits=1", "link.latency_ns=1",
            "switch.pipeline_cycles=0", "switch.input_buffer_flits=4096",
            "endpoint.rx_buffer_flits=4096", "sim.warmup_ns=5000",
            f"sim.duration_ns={WINDOW}", *extra]


def accepted(s):
    return s["throughput"]["accepted"]


def oq_wait(s):
    lat, f = s["network_latency_ns"], s["sim"]["flit_time_ns"]
    return (lat["mean"] - lat["min"]) / f


KAROL = {1: 1.0, 2: 0.7500, 3: 0.6825, 4: 0.6553, 5: 0.6399, 6: 0.6302, 7: 0.6234, 8: 0.6184}

CASES = []

CASES.append(dict(
    key="fifo_hol", title="FIFO input queues: saturation throughput (head-of-line blocking)",
    source="Karol, Hluchyj, Morgan, 'Input versus output queueing on a space-division packet "
           "switch', IEEE Trans. Commun. 35(12), 1987, Table I (N -> inf: 2 - sqrt(2) = 0.5858)",
    xlabel="N (ports)", ylabel="saturation throughput",
    runs=[(n, cells(n, "switch.queueing=fifo", "traffic.load=1"), KAROL.get(n)) for n in
          (2, 3, 4, 5, 6, 7, 8, 16, 32, 64)],
    value=accepted, asymptote=2 - math.sqrt(2)))

CASES.append(dict(
    key="pim1", title="VOQ + PIM, 1 iteration: saturation throughput",
    source="Anderson, Owicki, Saxe, Thacker, 'High-speed switch scheduling for local-area "
           "networks', ACM TOCS 11(4), 1993: with every VOQ backlogged an input is matched "
           "unless no output grants it: 1 - (1 - 1/N)^N",
    xlabel="N (ports)", ylabel="saturation throughput",
    runs=[(n, cells(n, "switch.queueing=voq", "switch.allocator=pim", "traffic.load=1"),
           1 - (1 - 1 / n) ** n) for n in (4, 8, 16, 32, 64)],
    value=accepted))

CASES.append(dict(
    key="islip", title="VOQ + iSLIP, 1 iteration: throughput at full load",
    source="McKeown, 'The iSLIP scheduling algorithm for input-queued switches', IEEE/ACM ToN "
           "7(2), 1999: 100% throughput under uniform i.i.d. Bernoulli traffic",
    xlabel="N (ports)", ylabel="accepted at offered load 1",
    runs=[(n, cells(n, "switch.queueing=voq", "switch.allocator=islip", "traffic.load=1"), 1.0)
          for n in (8, 16, 32, 64)],
    value=accepted))

CASES.append(dict(
    key="oq_delay", title="Output-queued switch: mean queueing delay vs load (N = 16)",
    source="Karol et al. 1987 (as above), output queueing with Bernoulli arrivals: "
           "W = (N-1)/N * p / (2(1-p)) slots",
    xlabel="offered load p", ylabel="mean wait (slots)",
    runs=[(p, cells(16, "switch.queueing=output", f"traffic.load={p}"),
           15 / 16 * p / (2 * (1 - p))) for p in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)],
    value=oq_wait))

for alg, iters in (("islip", 1), ("islip", 2), ("islip", 4), ("pim", 1), ("pim", 4)):
    loads = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6) if (alg, iters) == ("pim", 1) else \
        (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    CASES.append(dict(
        key=f"{alg}{iters}_delay",
        title=f"VOQ + {alg.upper() if alg == 'pim' else 'iSLIP'}, {iters} iteration"
              f"{'s' if iters > 1 else ''}: mean wait vs load (N = 16), against output queueing",
        source="no closed form: the output-queued wait (Karol et al. 1987, as above) is a lower "
               "bound for any input-queued scheduler; McKeown 1999 (as above) and Anderson et al. "
               "1993 (as above) show the curves' shape: one iteration saturates (PIM at "
               "1 - (1-1/N)^N) or climbs steeply (iSLIP) at high load, a few iterations converge "
               "to a maximal match and PIM and iSLIP meet",
        xlabel="offered load p", ylabel="mean wait (slots)",
        runs=[(p, cells(16, "switch.queueing=voq", f"switch.allocator={alg}",
                        f"switch.iterations={iters}", f"traffic.load={p}"),
               15 / 16 * p / (2 * (1 - p))) for p in loads],
        value=oq_wait, ref_label="output queueing (lower bound)", logy=True))

CASES.append(dict(
    key="credit_loop", title="Credit loop: link utilisation vs buffer (latency 20 ns)",
    source="Credit-based flow control: at most B flits per credit round trip, utilisation "
           "min(1, B f / RTT) (e.g. Dally & Towles, 'Principles and Practices of "
           "Interconnection Networks', 2004, ch. 13); RTT = 2L + 2.5 f from the model's parts",
    xlabel="buffer B (flits)", ylabel="utilisation",
    runs=[(b, ["switch.ports=4", "traffic.pattern=permutation", "traffic.load=1",
               "traffic.packet_flits=1", "link.latency_ns=20", "switch.pipeline_cycles=0",
               f"switch.input_buffer_flits={b}", "endpoint.rx_buffer_flits=4096",
               "sim.warmup_ns=2000", f"sim.duration_ns={WINDOW}"],
           analytic.credit_bound(b, 20, 0.64, 0.64, 1)) for b in (4, 8, 16, 32, 48, 64, 96, 128)],
    value=accepted))


# Collectives against alpha-beta (Hockney) models on dgx-h100 wired 2,2,2,2
# with aligned egress (testbenches/validation/collective_validation_test.cpp
# explains each model): T = k alpha + S / 256 * flits / (links / flit time),
# alpha the zero-load GPU-to-GPU time of a 17-flit packet from its parts
# (flits and k per algorithm: analytic.STEPS).
H100 = "configs/dgx-h100.yaml"


def alpha_ns(lat, flits):
    return analytic.alpha_ns(lat, 0.64, 0.64, 16, flits)


def coll(label, op, algo, n, lat, *extra):
    flits, steps = analytic.flits_and_steps(op, algo, n, 17)
    sets = ["workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9",
            # The central engine: its 4 ports of 1024 B per cycle are not
            # the limit the bound assumes away (a distributed slice's ALU
            # is); as Validation.CollectivesAgainstAlphaBeta runs it.
            "reduction.organisation=central",
            "topology.links=2,2,2,2", "switch.egress=aligned", f"topology.endpoints={n}",
            f"link.latency_ns={lat}", f"collective.op={op}", f"collective.algorithm={algo}",
            "collective.min_bytes=4096", "collective.max_bytes=16777216",
            "collective.step_factor=4", *extra]
    return dict(label=label, n=n, lat=lat, flits=flits, steps=steps, sets=sets)


COLLECTIVES = []
for n in (4, 8):
    for lat in (50, 100) if n == 8 else (100,):
        COLLECTIVES += [
            coll(f"ring all_reduce n={n} L={lat}", "all_reduce", "ring", n, lat),
            coll(f"ring reduce_scatter n={n} L={lat}", "reduce_scatter", "ring", n, lat),
            coll(f"ring all_gather n={n} L={lat}", "all_gather", "ring", n, lat),
            coll(f"direct all_reduce n={n} L={lat}", "all_reduce", "direct", n, lat),
            coll(f"push all_reduce n={n} L={lat}", "all_reduce", "push", n, lat),
            coll(f"nvls all_gather n={n} L={lat}", "all_gather", "nvls", n, lat),
            # 1024 reads in flight over all GPUs: what the switches' engines
            # need to cover their round trip (docs/validation.md).
            coll(f"nvls all_reduce n={n} L={lat} ({1024 // n} reads in flight per GPU)",
                 "all_reduce", "nvls", n, lat, f"collective.outstanding={1024 // n}"),
            coll(f"nvls all_reduce n={n} L={lat} (1024 reads in flight, the default)",
                 "all_reduce", "nvls", n, lat),
        ]


def run_coll(c):
    d = os.path.join(OUT, "runs", "coll-" + "".join(ch if ch.isalnum() else "_" for ch in c["label"]))
    cmd = ["build/fabricsim", "run", H100, "--quiet", "--out", d]
    for s in c["sets"]:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{c['label']}: {r.stderr.strip()}")
    with open(os.path.join(d, "stats.json")) as f:
        return json.load(f)


def run(job):
    key, x, sets = job
    d = os.path.join(OUT, "runs", f"{key}-{x}")
    cmd = ["build/fabricsim", "run", CFG, "--quiet", "--out", d]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{key} x={x}: {r.stderr.strip()}")
    with open(os.path.join(d, "stats.json")) as f:
        return json.load(f)


jobs = [(c["key"], x, sets) for c in CASES for (x, sets, _) in c["runs"]]
with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = dict(zip([(k, x) for k, x, _ in jobs], pool.map(run, jobs)))
    coll_stats = list(pool.map(run_coll, COLLECTIVES))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

lines = ["# Validation report", "",
         f"Window {WINDOW} ns per run after warm-up; 1-flit packets; `scripts/validate`.", ""]
for c in CASES:
    lines += [f"## {c['title']}", "", f"Reference: {c['source']}.", "",
              f"| {c['xlabel']} | reference | simulated | error |", "|---|---|---|---|"]
    xs, sims, refs = [], [], []
    for (x, _, ref) in c["runs"]:
        v = c["value"](results[(c["key"], x)])
        xs.append(x)
        sims.append(v)
        refs.append(ref)
        err = f"{100 * (v - ref) / ref:+.2f}%" if ref else "-"
        lines.append(f"| {x} | {ref:.4f} | {v:.4f} | {err} |" if ref is not None
                     else f"| {x} | - | {v:.4f} | - |")
    lines.append("")
    if plt:
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        rx = [x for x, r in zip(xs, refs) if r is not None]
        ry = [r for r in refs if r is not None]
        ax.plot(rx, ry, "k-", marker="o", mfc="none", label=c.get("ref_label", "reference"))
        ax.plot(xs, sims, "C1", ls="none", marker="x", ms=8, label="fabricsim")
        if c.get("asymptote"):
            ax.axhline(c["asymptote"], color="grey", ls=":", label="N -> inf")
        if c["key"] in ("fifo_hol", "pim1", "islip"):
            ax.set_xscale("log", base=2)
        if c.get("logy"):
            ax.set_yscale("log")
        ax.set_xlabel(c["xlabel"])
        ax.set_ylabel(c["ylabel"])
        ax.set_title(c["title"], fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        png = f"validation-{c['key']}.png"
        fig.savefig(os.path.join(OUT, png), dpi=110)
        plt.close(fig)
        lines += [f"![{c['title']}]({png})", ""]

lines += ["## Collectives against alpha-beta (Hockney) models", "",
          "dgx-h100 wired 2,2,2,2, aligned egress, fp32. alpha = zero-load GPU-to-GPU time of "
          "a 17-flit packet from its parts; link = the bytes a GPU moves in its busiest direction "
          "at its links' rate (a lower bound); sum = k alpha + link (Hockney). Error against the "
          "sum.", ""]
for c, st in zip(COLLECTIVES, coll_stats):
    a = alpha_ns(c["lat"], 17)
    lines += [f"### {c['label']}", "", f"k = {c['steps']}, alpha = {a:.2f} ns, "
              f"{c['flits']:.3f} flits per 256 B of S", "",
              "| size (B) | sim (us) | link bound (us) | k alpha + link (us) | sim / sum |",
              "|---|---|---|---|---|"]
    sizes, sims, sums, lows = [], [], [], []
    for r in st["collectives"]["rows"]:
        sz, t = r["size_bytes"], r["time_us"]
        if r["wrong"]:
            raise RuntimeError(f"{c['label']}: {r['wrong']} wrong elements at {sz} B")
        link = sz / 256 * c["flits"] * 0.64 / 8 / 1000
        tot = c["steps"] * a / 1000 + link
        sizes.append(sz); sims.append(t); sums.append(tot); lows.append(max(link, c["steps"] * a / 1000))
        lines.append(f"| {sz} | {t:.3f} | {link:.3f} | {tot:.3f} | {t / tot:.3f} |")
    lines.append("")
    if plt and c["n"] == 8 and c["lat"] == 100:
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        ax.plot(sizes, sums, "k-", label="k alpha + S/B (Hockney)")
        ax.plot(sizes, lows, "k:", label="max(k alpha, S/B)")
        ax.plot(sizes, sims, "C1", ls="none", marker="x", ms=8, label="fabricsim")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size S (bytes per GPU)")
        ax.set_ylabel("time (us)")
        ax.set_title(c["label"], fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        png = "validation-coll-" + "".join(ch if ch.isalnum() else "_" for ch in c["label"]) + ".png"
        fig.savefig(os.path.join(OUT, png), dpi=110)
        plt.close(fig)
        lines += [f"![{c['label']}]({png})", ""]

# Two summary charts for docs/validation.md: every scheduler's wait on one
# chart, and every collective's time over its alpha-beta sum (n = 8, L = 100).
if plt:
    fig, ax = plt.subplots(figsize=(6, 3.8))
    oq = [(x, oq_wait(results[("oq_delay", x)])) for (x, _, _) in
          next(k for k in CASES if k["key"] == "oq_delay")["runs"] if x <= 0.9]
    ax.plot([x for x, _ in oq], [w for _, w in oq], "k-", marker="o", mfc="none",
            label="output queueing (sim)")
    for c in CASES:
        if c["key"].endswith("_delay") and c["key"] != "oq_delay":
            xs = [x for (x, _, _) in c["runs"]]
            ax.plot(xs, [c["value"](results[(c["key"], x)]) for x in xs], marker="x",
                    label=c["key"].replace("_delay", "").replace("islip", "iSLIP-").replace("pim", "PIM-"))
    ax.set_yscale("log")
    ax.set_xlabel("offered load p")
    ax.set_ylabel("mean wait (slots)")
    ax.set_title("VOQ schedulers vs output queueing, N = 16, uniform Bernoulli", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "validation-sched-delay.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for c, st in zip(COLLECTIVES, coll_stats):
        if c["n"] != 8 or c["lat"] != 100:
            continue
        a = alpha_ns(c["lat"], 17) / 1000
        xs = [r["size_bytes"] for r in st["collectives"]["rows"]]
        ys = [r["time_us"] / (c["steps"] * a + r["size_bytes"] / 256 * c["flits"] * 0.64 / 8 / 1000)
              for r in st["collectives"]["rows"]]
        ax.plot(xs, ys, marker="x", label=c["label"].replace(" n=8 L=100", ""))
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size S (bytes per GPU)")
    ax.set_ylabel("simulated / (k alpha + S/B)")
    ax.set_title("Collectives over their alpha-beta sum, dgx-h100 wired 2,2,2,2, n = 8", fontsize=9)
    ax.set_ylim(0.55, 1.6)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6.5, ncol=2, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "validation-coll-ratio.png"), dpi=110)
    plt.close(fig)
    lines += ["![schedulers](validation-sched-delay.png)", "",
              "![collectives](validation-coll-ratio.png)", ""]

with open(os.path.join(OUT, "report.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"validate: {OUT}/report.md")
