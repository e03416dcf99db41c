"""Long validation runs (scripts/validate): switching theory references.

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
           min(1.0, b * 0.64 / (2 * 20 + 2.5 * 0.64))) for b in (4, 8, 16, 32, 48, 64, 96, 128)],
    value=accepted))


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
        ax.plot(rx, ry, "k-", marker="o", mfc="none", label="reference")
        ax.plot(xs, sims, "C1", ls="none", marker="x", ms=8, label="fabricsim")
        if c.get("asymptote"):
            ax.axhline(c["asymptote"], color="grey", ls=":", label="N -> inf")
        if c["key"] in ("fifo_hol", "pim1", "islip"):
            ax.set_xscale("log", base=2)
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

with open(os.path.join(OUT, "report.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"validate: {OUT}/report.md")
