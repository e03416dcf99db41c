"""scripts/plot: PNG charts of fabricsim results (docs/plots.md).

usage: scripts/plot KIND INPUT... [-o PNG] [--data JSON] [--title TEXT] [--where KEY=VALUE]
  latency    latency against throughput, a curve per design
  buffers    accepted throughput against input buffer depth, a curve per
             link latency (or whatever else varies), with the credit-loop bound
  busbw      bus bandwidth against message size, with the alpha-beta model
  heatmap    per-port output-link utilization and input-buffer occupancy of
             every switch of one run
  straggler  completion time (p50, p99, max over iterations) against message
             size, and each GPU's wait for the slowest at one size

An INPUT is a run's stats.json (or the directory holding it), a sweep's
output directory or its results.csv (scripts/sweep), or any directory: every
stats.json below it. LABEL=INPUT names the input in the legend. Curves are
the parameters that differ between runs (a sweep's grid, less the x axis
and the seed); runs that differ only by seed are averaged.
Exit status: 0 the plot was written; 2 bad arguments or inputs.
"""
import argparse
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analytic  # noqa: E402
from sweep import measured_rows  # noqa: E402  (the same flattened columns as results.csv)

KINDS = ("latency", "buffers", "busbw", "heatmap", "straggler")
DPI = 100


class PlotError(Exception):
    pass


# --- reading runs -------------------------------------------------------------

class Run:
    """One fabricsim run: its stats, the source it came from, and the
    parameters that set it apart from the source's other runs."""

    def __init__(self, stats, path, source, params=None, seed=None):
        self.stats, self.path, self.source = stats, path, source
        self.params = params or {}
        self.seed = seed if seed is not None else stats.get("sim", {}).get("seed")
        self.config = stats.get("config", {})
        self._flat = None

    def flat(self):
        """stats.json's scalars flattened as results.csv names them (sweep.py)."""
        if self._flat is None:
            self._flat = measured_rows(self.stats)[0]
        return self._flat

    def value(self, column):
        if column in self.flat():
            return self.flat()[column]
        if column in self.config:
            return self.config[column]
        raise PlotError(f"{self.path}: no column '{column}' in stats.json (the columns are "
                        f"those of results.csv, docs/sweeps.md, or a parameter)")


def show_value(v):
    """A parameter value as a legend shows it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return ",".join(show_value(x) for x in v)
    return str(v)


def sort_key(v):
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def read_stats(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise PlotError(f"cannot read {path}: {e.strerror}")
    except ValueError as e:
        raise PlotError(f"{path}: not JSON: {e}")


def ok(stats, path, warn):
    if stats.get("sim", {}).get("status", "ok") != "ok":
        warn(f"{path}: the run failed (sim.status {stats['sim'].get('status')}); left out")
        return False
    return True


def sweep_name(out):
    """The spec's file name of a sweep directory (spec.yaml's first line names it)."""
    try:
        with open(os.path.join(out, "spec.yaml")) as f:
            first = f.readline()
        if first.startswith("# "):
            return os.path.splitext(os.path.basename(first[2:].strip()))[0]
    except OSError:
        pass
    return os.path.basename(os.path.abspath(out))


def load_sweep(csv_path, label, warn):
    out = os.path.dirname(os.path.abspath(csv_path))
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        rows = list(reader)
    if "run" not in header or "seed" not in header or "status" not in header:
        raise PlotError(f"{csv_path}: not a scripts/sweep results.csv (no run, status, seed columns)")
    grid = header[header.index("status") + 1:header.index("seed")]
    runs, seen = [], set()
    for r in rows:
        if r["run"] in seen:
            continue  # a collective run has a row per size
        seen.add(r["run"])
        if r["status"] != "ok":
            warn(f"{csv_path}: run {r['run']} is {r['status']}; left out")
            continue
        path = os.path.join(out, "runs", r["run"], "stats.json")
        stats = read_stats(path)
        if ok(stats, path, warn):
            runs.append(Run(stats, path, label or sweep_name(out), {g: r[g] for g in grid},
                            int(r["seed"])))
    return runs


def differing_keys(runs):
    """Config keys whose values differ between runs (sim.seed excepted), in order."""
    keys = []
    for k in runs[0].config:
        if k == "sim.seed":
            continue
        vals = {json.dumps(r.config.get(k), sort_keys=True) for r in runs}
        if len(vals) > 1:
            keys.append(k)
    return keys


def load_input(arg, warn):
    label, path = None, arg
    if not os.path.exists(arg) and "=" in arg:
        label, path = arg.split("=", 1)
    if not os.path.exists(path):
        raise PlotError(f"input '{path}' not found (a stats.json, a run or sweep directory, or a "
                        f"sweep's results.csv)")
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "results.csv")) \
            and os.path.isdir(os.path.join(path, "runs")):
        return load_sweep(os.path.join(path, "results.csv"), label, warn)
    if os.path.isfile(path) and path.endswith(".csv"):
        return load_sweep(path, label, warn)
    if os.path.isfile(path):
        stats = read_stats(path)
        name = label or os.path.basename(os.path.dirname(os.path.abspath(path)))
        return [Run(stats, path, name)] if ok(stats, path, warn) else []
    files = []
    for d, dirs, names in os.walk(path):
        dirs.sort()
        if "stats.json" in names:
            files.append(os.path.join(d, "stats.json"))
    if not files:
        raise PlotError(f"no stats.json under '{path}'")
    name = label or os.path.basename(os.path.abspath(path))
    runs = []
    for f in files:
        stats = read_stats(f)
        if ok(stats, f, warn):
            runs.append(Run(stats, f, name))
    if len(runs) > 1:
        keys = differing_keys(runs)
        for r in runs:
            r.params = {k: r.config.get(k) for k in keys}
    elif runs and os.path.dirname(os.path.abspath(runs[0].path)) != os.path.abspath(path):
        runs[0].source = label or os.path.basename(os.path.dirname(os.path.abspath(runs[0].path)))
    return runs


def load(inputs, where, warn):
    runs = []
    for arg in inputs:
        runs += load_input(arg, warn)
    for w in where:
        if "=" not in w:
            raise PlotError(f"--where {w}: give KEY=VALUE")
        k, v = w.split("=", 1)

        def match(r):
            x = r.params.get(k, r.config.get(k))
            if x is None:
                raise PlotError(f"--where {w}: no parameter '{k}' in {r.path}")
            try:
                return float(x) == float(v)
            except (TypeError, ValueError):
                return show_value(x) == v
        runs = [r for r in runs if match(r)]
    if not runs:
        raise PlotError("no successful run in the inputs" + (" (after --where)" if where else ""))
    return runs


# --- series -----------------------------------------------------------------------

def short(key, keys):
    s = key.rsplit(".", 1)[-1]
    return s if [k.rsplit(".", 1)[-1] for k in keys].count(s) == 1 else key


def series_of(runs, exclude):
    """Runs grouped into curves: by source (when there are several) and the
    parameters that vary, less `exclude` (the x axis). Returns [(name, runs)]."""
    sources = list(dict.fromkeys(r.source for r in runs))
    keys = [k for k in dict.fromkeys(k for r in runs for k in r.params) if k not in exclude]
    groups = {}
    for r in runs:
        vals = tuple(show_value(r.params.get(k, r.config.get(k))) for k in keys)
        groups.setdefault((r.source, vals), []).append(r)
    # Curves in the order their runs come (a sweep's grid order), by source.
    order = sorted(groups, key=lambda g: sources.index(g[0]))
    out = []
    for src, vals in order:
        parts = [f"{short(k, keys)}={v}" for k, v in zip(keys, vals)]
        name = ", ".join(parts)
        if len(sources) > 1 or not parts:
            name = f"{src}: {name}" if parts else src
        out.append((name, groups[(src, vals)]))
    return out, keys


def mean(xs):
    return sum(xs) / len(xs)


def common(runs, key):
    vals = {json.dumps(r.config.get(key)) for r in runs}
    return runs[0].config.get(key) if len(vals) == 1 else None


def describe(runs, skip=()):
    """The configuration the runs share, in a few words (for titles)."""
    c = lambda k: None if k in skip else common(runs, k)  # noqa: E731
    kind = c("topology.kind")
    parts = []
    if kind == "single" or kind is None and c("switch.ports") is not None:
        sw = f"{c('switch.ports')}-port switch" if c("switch.ports") is not None else "switch"
        q = c("switch.queueing")
        if q is not None:
            alloc = c("switch.allocator") if q != "output" else None
            sw += f" ({q}" + (f", {alloc}" if alloc else "") + ")"
        parts.append(sw)
    elif kind == "scaleup":
        links = c("topology.links")
        gpus = c("topology.endpoints")
        parts.append(f"{gpus if gpus is not None else '?'} GPUs on {c('topology.switches')} "
                     f"switches" + (f", links {show_value(links)}" if links is not None else ""))
    elif kind == "scaleout":
        parts.append(f"{c('scaleout.domains')} domains of {c('topology.endpoints')} GPUs, "
                     f"{c('scaleout.tiers')}-tier scale-out")
    lat = c("link.latency_ns")
    if lat is not None:
        parts.append(f"{show_value(lat)} ns links")
    if c("workload.kind") == "collective":
        op, alg = c("collective.op"), c("collective.algorithm")
        parts.append(" ".join(x for x in (alg, op) if x))
    elif c("workload.kind") == "synthetic":
        pat, load = c("traffic.pattern"), c("traffic.load")
        if pat:
            parts.append(f"{pat} traffic" + (f" at load {show_value(load)}" if load is not None else ""))
    sg = c("straggler.gpu")
    if isinstance(sg, int) and sg >= 0:
        parts.append(f"straggler GPU {sg}" + (f" {show_value(c('straggler.delay_ns'))} ns late"
                                               if c("straggler.delay_ns") else ""))
    if c("straggler.jitter_ns"):
        parts.append(f"jitter 0-{show_value(c('straggler.jitter_ns'))} ns on every GPU")
    sources = list(dict.fromkeys(r.source for r in runs))
    return ", ".join(parts) + (f"; data: {', '.join(sources)}" if sources else "")


LABELS = {
    "throughput.accepted": "accepted throughput (flits per flit time per port)",
    "throughput.offered": "offered load (flits per flit time per port)",
    "traffic.load": "offered load (traffic.load)",
    "latency_ns.mean": "mean latency, generation to delivery (ns)",
    "latency_ns.p50": "median latency, generation to delivery (ns)",
    "latency_ns.p99": "p99 latency, generation to delivery (ns)",
    "latency_ns.p999": "p99.9 latency, generation to delivery (ns)",
    "network_latency_ns.mean": "mean network latency, injection to delivery (ns)",
    "network_latency_ns.p50": "median network latency, injection to delivery (ns)",
    "network_latency_ns.p99": "p99 network latency, injection to delivery (ns)",
    "network_latency_ns.p999": "p99.9 network latency, injection to delivery (ns)",
}


def label_of(col):
    return LABELS.get(col, col)


def short_label(col):
    """The axis label without its unit and definition: 'p99 network latency'."""
    return label_of(col).split(" (")[0].split(",")[0]


def plain_log(axis):
    """A log axis with ticks at 1, 2, 5 x 10^k written as plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def compared(curves, keys):
    """What the curves compare, for a title."""
    if keys:
        return ", ".join(short(k, keys) for k in keys) + " compared"
    if 1 < len(curves) <= 4:
        return " vs ".join(name for name, _ in curves)
    return ""


def size_text(b):
    for unit, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}"
    return f"{b:g} B"


# --- the plots --------------------------------------------------------------------

def plt_setup():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("matplotlib is not installed: run scripts/setup")
    plt.rcParams.update({"font.size": 9, "axes.titlesize": 9, "legend.fontsize": 8})
    return plt


def title(ax_or_fig, what, runs, given, skip=()):
    text = given or f"{what}\n{describe(runs, skip)}"
    if hasattr(ax_or_fig, "suptitle"):
        ax_or_fig.suptitle(text, fontsize=9)
    else:
        ax_or_fig.set_title(text)
    return text


def thin_log_ticks(values, gap=0.4):
    """Tick values on a log2 axis at least `gap` octaves apart, the first and the last kept."""
    kept = []
    for v in values:
        if not kept or math.log2(v / kept[-1]) >= gap:
            kept.append(v)
    if kept[-1] != values[-1]:
        kept[-1] = values[-1]
    return kept


def size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ticks = sorted(set(sizes))
    step = max(1, math.ceil(len(ticks) / 8))
    ticks = ticks[::step]
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_text(t).replace(" ", "\u2009") for t in ticks])
    ax.minorticks_off()


def needs_values(runs, key, kind, what):
    """Refuse a plot whose x-axis parameter takes fewer than two values."""
    vals = sorted({show_value(r.config.get(key)) for r in runs}, key=sort_key)
    if len(vals) < 2:
        raise PlotError(f"{kind}: {key} takes one value ({', '.join(vals)}) in the "
                        f"{len(runs)} run{'s' if len(runs) != 1 else ''}; the plot needs runs "
                        f"at two or more {what} (a sweep over {key}, docs/sweeps.md)")


def plot_latency(runs, a):
    """Latency against throughput: a curve per design, a point per offered
    load (the mean over seeds); hollow points are saturated."""
    xkey = "traffic.load"
    curves, keys = series_of(runs, {xkey})
    data = []
    for name, rs in curves:
        pts = {}
        for r in rs:
            pts.setdefault(r.config.get(xkey), []).append(r)
        xs, ys, sat, loads, n = [], [], [], [], []
        for load in sorted(pts, key=sort_key):
            g = pts[load]
            xs.append(mean([float(r.value(a.x)) for r in g]))
            ys.append(mean([float(r.value(a.y)) for r in g]))
            acc = mean([r.value("throughput.accepted") for r in g])
            off = mean([r.value("throughput.offered") for r in g])
            sat.append(acc < 0.97 * off)
            loads.append(load)
            n.append(len(g))
        data.append(dict(label=name, load=loads, x=xs, y=ys, saturated=sat, runs=n))

    plt = plt_setup()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, d in enumerate(data):
        color = f"C{i % 10}"
        xs, ys, sat = d["x"], d["y"], d["saturated"]
        ax.plot(xs, ys, "-", color=color, lw=1.2, label=d["label"])
        ax.plot([x for x, s in zip(xs, sat) if not s], [y for y, s in zip(ys, sat) if not s],
                "o", color=color, ms=4.5)
        ax.plot([x for x, s in zip(xs, sat) if s], [y for y, s in zip(ys, sat) if s],
                "o", color=color, mfc="white", ms=4.5)
    if any(any(d["saturated"]) for d in data):
        ax.plot([], [], "o", color="grey", mfc="white", ms=4.5,
                label="saturated: accepted < 97% of offered")
    ax.set_xlabel(label_of(a.x))
    ax.set_ylabel(label_of(a.y))
    if not a.linear:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    what = compared(curves, keys)
    t = title(ax, f"{short_label(a.y).capitalize()} vs {short_label(a.x)}"
                  + (f": {what}" if what else ""), runs, a.title, skip=keys)
    return fig, dict(x=a.x, y=a.y, series=data, title=t)


def plot_buffers(runs, a):
    """Accepted throughput against input buffer depth, with the bound of the
    credit loop, min(load, floor(B/P) P f / RTT) for P-flit packets."""
    xkey = "switch.input_buffer_flits"
    needs_values(runs, xkey, "buffers", "input buffer depths")
    curves, keys = series_of(runs, {xkey})
    plt = plt_setup()
    fig, ax = plt.subplots(figsize=(8.6, 4.2))
    data = []
    for i, (name, rs) in enumerate(curves):
        pts = {}
        for r in rs:
            pts.setdefault(r.config[xkey], []).append(r)
        bs = sorted(pts)
        acc = [mean([r.value("throughput.accepted") for r in pts[b]]) for b in bs]
        off = mean([r.value("throughput.offered") for r in rs])
        load = rs[0].config["traffic.load"]
        sim = rs[0].stats["sim"]
        lat, f, cyc, pf, vcs = analytic.credit_params_of_config(rs[0].config, sim["flit_time_ns"],
                                                                  sim["cycle_ns"])
        rtt = analytic.credit_rtt_ns(lat, f, cyc, pf)
        color = f"C{i % 10}"
        ax.plot(bs, acc, "o-", color=color, ms=4.5, lw=1.2, label=f"{name} (RTT {rtt:.0f} ns)")
        dense = list(range(min(bs), max(bs) + 1))
        ax.plot(dense, [min(load, analytic.credit_bound(b, lat, f, cyc, pf, vcs)) for b in dense],
                "--", color=color, lw=0.9)
        need = analytic.buffer_needed_flits(load, lat, f, cyc, pf, vcs)
        if min(bs) <= need <= max(bs):
            ax.plot([need], [load], "v", color=color, ms=7, mec="k", mew=0.5)
        data.append(dict(label=name, buffer_flits=bs, accepted=acc, offered=off, load=load,
                         runs=[len(pts[b]) for b in bs], latency_ns=lat, rtt_ns=rtt,
                         bound=[min(load, analytic.credit_bound(b, lat, f, cyc, pf, vcs))
                                for b in bs], needed_flits=need))
    ax.plot([], [], "k--", lw=0.9, label="credit-loop bound:\nmin(load, floor(B/P)·P·f / RTT)")
    ax.plot([], [], "v", color="grey", ms=7, mec="k", mew=0.5,
            label="bound reaches the load:\nB = load·RTT / f")
    ax.set_xscale("log", base=2)
    ticks = thin_log_ticks(sorted({b for d in data for b in d["buffer_flits"]}))
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(b) for b in ticks])
    ax.minorticks_off()
    ax.set_ylim(0, 1.0)
    ax.set_xlabel("input buffer per port, B (flits; switch.input_buffer_flits)")
    ax.set_ylabel("accepted throughput (flits per flit time per port)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    what = compared(curves, keys)
    t = title(ax, "Accepted throughput vs input buffer depth" + (f": {what}" if what else ""),
              runs, a.title, skip=keys + [xkey])
    return fig, dict(series=data, title=t)


def plot_busbw(runs, a):
    """busbw against size, a curve per run (or series), the alpha-beta model
    T = k alpha + S/B dashed in the same colour (analytic.py)."""
    runs = [r for r in runs if (r.stats.get("collectives") or {}).get("rows")]
    if not runs:
        raise PlotError("busbw: no collective run in the inputs (stats.json without collectives)")
    curves, keys = series_of(runs, set())
    plt = plt_setup()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    data, sizes_all, modelled = [], [], False
    for i, (name, rs) in enumerate(curves):
        by = {}
        for r in rs:
            for row in r.stats["collectives"]["rows"]:
                by.setdefault(row["size_bytes"], []).append(row["busbw_GBps"])
        sizes = sorted(by)
        bw = [mean(by[s]) for s in sizes]
        sizes_all += sizes
        color = f"C{i % 10}"
        ax.plot(sizes, bw, "o-", color=color, ms=3.5, lw=1.2, label=name)
        entry = dict(label=name, size_bytes=sizes, busbw_GBps=bw)
        r0, coll = rs[0], rs[0].stats["collectives"]
        cfg = r0.config
        why = None
        if not analytic.has_model(coll["op"], coll["algorithm"]):
            why = f"no alpha-beta model for {coll['algorithm']} {coll['op']}"
        elif cfg.get("topology.kind") not in ("single", "scaleup"):
            why = "the model is of one scale-up domain"
        elif cfg.get("collective.workload") or cfg.get("collective.groups"):
            why = "a workload or groups: the model is of one call over every GPU"
        if why is None:
            p = analytic.collective_params_of_config(cfg, r0.stats["sim"]["flit_time_ns"],
                                                     r0.stats["sim"]["cycle_ns"])
            model = [s / analytic.collective_time_ns(s, coll["op"], coll["algorithm"],
                                                     coll["gpus"], **p) * coll["bus_factor"]
                     for s in sizes]
            ax.plot(sizes, model, "--", color=color, lw=0.9)
            entry.update(model_busbw_GBps=model, model=dict(
                alpha_ns=analytic.alpha_ns(p["latency_ns"], p["flit_ns"], p["cycle_ns"],
                                           p["pipeline_cycles"],
                                           p["payload_bytes"] // p["flit_bytes"] + 1),
                steps=analytic.flits_and_steps(coll["op"], coll["algorithm"], coll["gpus"],
                                               p["payload_bytes"] // p["flit_bytes"] + 1)[1],
                links_per_gpu=p["links_per_gpu"], bus_factor=coll["bus_factor"]))
            modelled = True
        else:
            entry["model_missing"] = why
            print(f"plot: {name}: no model line ({why})", file=sys.stderr)
        data.append(entry)
    if modelled:
        ax.plot([], [], "k--", lw=0.9, label="alpha-beta model, k·alpha + S/B")
    size_axis(ax, sizes_all)
    if a.log:
        ax.set_yscale("log")
    ax.set_xlabel("message size per GPU, S")
    ax.set_ylabel("bus bandwidth (GB/s, nccl-tests busbw)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    what = compared(curves, keys)
    t = title(ax, "Bus bandwidth vs message size" + (f": {what}" if what else "")
                  + ", alpha-beta model dashed", runs, a.title, skip=keys)
    return fig, dict(series=data, title=t)


def switch_index(name):
    tail = name.rsplit("sw", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def occupancy_panel(m, caps, occ):
    """The input-buffer panel: its colour scale runs from empty to the
    buffer's capacity, so that a nearly empty buffer looks nearly empty;
    the title says the scale and the largest mean seen."""
    known = [c for c in caps if c]
    seen = max((v for row in occ for v in row if v is not None), default=0.0)
    if not known:
        return (m, f"input buffer: mean occupancy in flits (scale 0 to the largest mean, "
                   f"{seen:.3g}; capacity not in stats.json)", None)
    cap = max(known)
    which = f"the capacity, {cap} flits per port" if len(set(known)) == 1 and \
        len(known) == len(caps) else f"the largest capacity, {cap} flits per port"
    return (m, f"input buffer: mean occupancy in flits (scale 0 to {which}; "
               f"largest mean {seen:.3g})", cap)


def plot_heatmap(runs, a):
    """Every switch's ports: utilization of its output links (fabric.swS.outP)
    and the mean occupancy of its input buffers (per_port_mean); for a single
    switch, where endpoint N sits on port N (link.md), also the share of the
    window the link into each port waited for credits (fabric.epN.tx0)."""
    import re
    import numpy as np
    if len(runs) != 1:
        raise PlotError(f"heatmap draws one run; the inputs hold {len(runs)} "
                        f"(give one stats.json, or narrow with --where)")
    run = runs[0]
    switches = sorted((run.stats.get("switches") or {}), key=switch_index)
    if not switches:
        raise PlotError(f"{run.path}: no switches section")
    links = run.stats.get("links") or {}
    window = run.stats["sim"]["window_ns"]
    util, occ, caps = [], [], []
    for sw in switches:
        ports = {}
        for name, l in links.items():
            m = re.fullmatch(re.escape(sw) + r"\.out(\d+)", name)
            if m:
                ports[int(m.group(1))] = l["utilization"]
        ib = run.stats["switches"][sw].get("input_buffer_occupancy_flits", {})
        per = ib.get("per_port_mean", [])
        n = max(len(per), max(ports) + 1 if ports else 0)
        util.append([ports.get(p) for p in range(n)])
        occ.append(list(per) + [None] * (n - len(per)))
        caps.append(ib.get("capacity"))
    stall = None
    ep = {name: l for name, l in links.items() if re.fullmatch(r"fabric\.ep\d+\.tx\d+", name)}
    if run.config.get("topology.kind") == "single" and ep and \
            all(name.endswith(".tx0") for name in ep):
        stall = [[None] * len(util[0])]
        for name, l in ep.items():
            port = int(name.split(".")[1][2:])
            if port < len(stall[0]):
                stall[0][port] = l["credit_stall_ns"] / window
    width = max(len(u) for u in util)
    wrap = 16 if len(switches) == 1 and width > 16 else width
    names = [sw.rsplit(".", 1)[-1] for sw in switches]

    def grid(rows):
        """One line per switch, or, for a single switch, lines of `wrap` ports."""
        if len(rows) == 1 and wrap < width:
            flat = rows[0] + [None] * (-len(rows[0]) % wrap)
            lines = [flat[i:i + wrap] for i in range(0, len(flat), wrap)]
            ticks = [f"ports {i * wrap}-{i * wrap + wrap - 1}" for i in range(len(lines))]
        else:
            lines = [r + [None] * (width - len(r)) for r in rows]
            ticks = names
        m = np.array([[np.nan if v is None else v for v in line] for line in lines], dtype=float)
        return np.ma.masked_invalid(m), ticks

    u, ticks = grid(util)
    panels = [(u, "output link utilization (fraction of the window)", 1.0),
              occupancy_panel(grid(occ)[0], caps, occ)]
    if stall is not None:
        panels.append((grid(stall)[0], "link into the port: time waiting for credits "
                                       "(fraction of the window)", 1.0))
    rows = u.shape[0]
    h = 0.9 + 0.2 * rows
    plt = plt_setup()
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.2, len(panels) * h + 1.0))
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#dddddd")
    for ax, (m, label, vmax) in zip(axes, panels):
        im = ax.imshow(m, aspect="auto", cmap=cmap, vmin=0, vmax=vmax, interpolation="nearest")
        ax.set_yticks(range(rows))
        ax.set_yticklabels(ticks, fontsize=7 if rows > 12 else 8)
        ax.set_xticks(range(0, m.shape[1], 4 if m.shape[1] > 16 else 1))
        ax.set_xlabel("port" if rows == len(switches) else
                      "column (port = the line's first port + column)")
        ax.set_title(label)
        fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    missing = " (grey: no such port)" if np.ma.is_masked(u) else ""
    t = a.title or (f"Per-port load of {'every switch' if len(switches) > 1 else 'the switch'}"
                    f"{missing}\n{describe(runs)}, "
                    f"window {window:g} ns")
    fig.suptitle(t, fontsize=9)
    data = dict(switches=switches, utilization=util, occupancy_mean_flits=occ, capacity=caps,
                occupancy_scale_max=panels[1][2], title=t)
    if stall is not None:
        data["input_credit_stall_fraction"] = stall[0]
    return fig, data


def plot_straggler(runs, a):
    """Completion time over the iterations (p50, p99, max) per size, a curve
    per run; and each GPU's mean wait for the slowest at one size."""
    runs = [r for r in runs if (r.stats.get("collectives") or {}).get("rows")]
    if not runs:
        raise PlotError("straggler: no collective run in the inputs")
    curves, keys = series_of(runs, set())
    plt = plt_setup()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9.6, 4.2), gridspec_kw=dict(width_ratios=[3, 2]))
    data, sizes_all = [], []
    size = a.size
    common_sizes = set.intersection(*[{row["size_bytes"] for row in r.stats["collectives"]["rows"]}
                                      for r in runs])
    if size is None:
        if not common_sizes:
            raise PlotError("straggler: the runs share no message size; give --size")
        size = max(common_sizes)
    elif size not in common_sizes:
        raise PlotError(f"straggler: --size {size}: not a size of every run "
                        f"(common: {', '.join(str(s) for s in sorted(common_sizes))})")
    ngpu = max(r.stats["collectives"]["gpus"] for r in runs)
    width = 0.8 / len(curves)
    stragglers = set()
    for i, (name, rs) in enumerate(curves):
        if len(rs) > 1:
            print(f"plot: {name}: {len(rs)} runs (seeds); each keeps its own points",
                  file=sys.stderr)
        color = f"C{i % 10}"
        entry = dict(label=name, runs=[])
        for j, r in enumerate(rs):
            rows = sorted(r.stats["collectives"]["rows"], key=lambda row: row["size_bytes"])
            s = [row["size_bytes"] for row in rows]
            p50 = [row["time_us_p50"] for row in rows]
            p99 = [row["time_us_p99"] for row in rows]
            mx = [row["time_us_max"] for row in rows]
            sizes_all += s
            lab = name if j == 0 else None
            ax.plot(s, p50, "o-", color=color, ms=3.5, lw=1.2, label=lab)
            ax.fill_between(s, p50, mx, color=color, alpha=0.18, lw=0)
            ax.plot(s, p99, "_", color=color, ms=9, mew=1.5)
            wait = next(row["gpu_wait_us_mean"] for row in rows if row["size_bytes"] == size)
            if j == 0:
                ax_x = [g + (i - (len(curves) - 1) / 2) * width for g in range(len(wait))]
                bx.bar(ax_x, wait, width=width, color=color, label=name)
            sg = r.config.get("straggler.gpu", -1)
            if isinstance(sg, int) and sg >= 0 and (r.config.get("straggler.delay_ns", 0) or
                                                    r.config.get("straggler.issue_factor", 1) < 1
                                                    or r.config.get("straggler.lanes", 0)):
                stragglers.add(sg)
            entry["runs"].append(dict(path=r.path, size_bytes=s, time_us_p50=p50, time_us_p99=p99,
                                      time_us_max=mx, iterations=[row["iterations"] for row in rows],
                                      wait_size_bytes=size, gpu_wait_us_mean=wait))
        data.append(entry)
    ax.plot([], [], "_", color="grey", ms=9, mew=1.5, label="p99")
    ax.fill_between([], [], [], color="grey", alpha=0.18, lw=0, label="p50 to max")
    size_axis(ax, sizes_all)
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_xlabel("message size per GPU")
    ax.set_ylabel("completion time per call (us)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left")
    bx.set_xticks(range(ngpu))
    bx.set_xticklabels([f"{g}\nstraggler" if g in stragglers else str(g) for g in range(ngpu)],
                       fontsize=7 if ngpu > 8 else 8)
    bx.set_xlabel("GPU")
    bx.set_ylabel(f"mean wait for the slowest at {size_text(size)} (us)")
    bx.set_title(f"each GPU's wait, {size_text(size)}")
    bx.grid(alpha=0.3, axis="y")
    iters = sorted({row["iterations"] for r in runs for row in r.stats["collectives"]["rows"]})
    what = compared(curves, keys)
    t = a.title or (f"Straggler impact: completion time over "
                    f"{'/'.join(str(i) for i in iters)} iterations per size"
                    + (f", {what}" if what else "") + f"\n{describe(runs, skip=keys)}")
    fig.suptitle(t, fontsize=9)
    return fig, dict(series=data, title=t, wait_size_bytes=size)


def shrink(png):
    """Re-save the PNG with a palette of 256 colours: a third of the bytes,
    no visible change for line charts and heatmaps (Pillow comes with matplotlib)."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(png) as im:
        q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                       dither=Image.Dither.NONE)
    q.save(png, optimize=True)


PLOTS = dict(latency=plot_latency, buffers=plot_buffers, busbw=plot_busbw, heatmap=plot_heatmap,
             straggler=plot_straggler)


DEFAULT_X, DEFAULT_Y = "throughput.accepted", "latency_ns.mean"


def out_name(a):
    """The default PNG's name: the kind, then whatever option changes what is
    drawn, so that two different plots of one input do not overwrite each
    other (latency.png, latency-network_latency_ns.p99.png, ...)."""
    parts = [a.kind]
    if a.kind == "latency":
        if a.y != DEFAULT_Y or a.x != DEFAULT_X:
            parts.append(a.y)
        if a.x != DEFAULT_X:
            parts.append(f"vs-{a.x}")
        if a.linear:
            parts.append("linear")
    if a.kind == "busbw" and a.log:
        parts.append("log")
    if a.kind == "straggler" and a.size is not None:
        parts.append(str(a.size))
    parts += a.where
    return "-".join(p.replace("/", "_").replace(" ", "_") for p in parts) + ".png"


def default_out(a):
    first = a.inputs[0]
    path = first.split("=", 1)[1] if not os.path.exists(first) and "=" in first else first
    d = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    return os.path.join(d, out_name(a))


def main():
    ap = argparse.ArgumentParser(
        prog="scripts/plot",
        description="PNG charts of fabricsim runs and sweeps (docs/plots.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__[__doc__.index("An INPUT"):])
    ap.add_argument("kind", choices=KINDS, help="what to draw")
    ap.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="stats.json, a run or sweep directory, a results.csv; LABEL=INPUT names it")
    ap.add_argument("-o", "--out", help="the PNG to write (default: in the first input's "
                                        "directory, KIND.png, or named after the options that "
                                        "change the plot: latency-network_latency_ns.p99.png)")
    ap.add_argument("--data", metavar="JSON",
                    help="also write the plotted numbers (every series) to this JSON file")
    ap.add_argument("--title", help="replace the title")
    ap.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                    help="keep only runs whose parameter KEY is VALUE (repeatable)")
    ap.add_argument("--x", default=DEFAULT_X,
                    help="latency: the x column (default %(default)s; or throughput.offered)")
    ap.add_argument("--y", default=DEFAULT_Y,
                    help="latency: the y column (default %(default)s; e.g. network_latency_ns.p99)")
    ap.add_argument("--linear", action="store_true", help="latency: linear y axis (default log)")
    ap.add_argument("--log", action="store_true", help="busbw: logarithmic y axis")
    ap.add_argument("--size", type=int, help="straggler: the message size (bytes) of the "
                                             "per-GPU wait (default: the largest)")
    a = ap.parse_args()

    warn = lambda m: print(f"plot: {m}", file=sys.stderr)  # noqa: E731
    try:
        runs = load(a.inputs, a.where, warn)
        fig, data = PLOTS[a.kind](runs, a)
        out = a.out or default_out(a)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        fig.tight_layout()
        fig.savefig(out, dpi=DPI)
        shrink(out)
        if a.data:
            data = dict(kind=a.kind, png=out, runs=[r.path for r in runs], **data)
            with open(a.data, "w") as f:
                json.dump(data, f, indent=1)
                f.write("\n")
        nseries = len(data.get("series", [])) or len(data.get("switches", []))
        print(f"plot: {out}: {a.kind}, {len(runs)} run{'s' if len(runs) != 1 else ''}, "
              f"{nseries} {'switches' if a.kind == 'heatmap' else 'curves'}")
        return 0
    except PlotError as e:
        print(f"plot: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
