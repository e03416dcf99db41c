"""Measured nccl-tests logs against the simulator (scripts/validate nccl).

Runs `build/fabricsim compare FILE CONFIG --max-bytes N --set collective.data=false`
(timing only) on every measured
file of traces/nccl-tests (or the files named), in parallel, reads each
compare.json and writes:
  - per file a PNG (docs/validation/nccl-<file>.png): measured and
    simulated time and busbw against size, log-log, one curve per section;
  - a markdown table (file, GPUs, algorithm, busbw error over 1 MiB..256 MiB
    and above, time error below 1 MiB, sizes fast-forwarded, sizes not
    simulated, host time) into
    docs/validation.md between the markers below, so a rerun replaces it.
The synthetic example (all_reduce_perf_8xH100_synthetic.txt) is not a
measurement and is left out unless named.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import subprocess
import sys
import time

BEGIN = "<!-- nccl-validate:begin -->"
END = "<!-- nccl-validate:end -->"
MIB = 1 << 20
DEFAULT_MAX_BYTES = 256 * MIB  # 1 MiB .. 256 MiB is the range the targets judge
SYNTHETIC = "all_reduce_perf_8xH100_synthetic.txt"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="scripts/validate nccl",
                                description="measured nccl-tests logs against fabricsim compare")
    p.add_argument("files", nargs="*", help="logs (default: every measured file in traces/nccl-tests)")
    p.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES,
                   help=f"largest size simulated (default {DEFAULT_MAX_BYTES}, 256 MiB)")
    p.add_argument("--jobs", type=int, default=2, help="compares run at once (default 2)")
    p.add_argument("--config", default="configs/dgx-h100-nccl.yaml")
    p.add_argument("--out", default="out/validation/nccl", help="compare output per file")
    p.add_argument("--doc", default="docs/validation.md", help="page whose marked section is replaced")
    p.add_argument("--plots", default="docs/validation", help="where the PNGs go")
    p.add_argument("--reuse", action="store_true",
                   help="simulate nothing: plot and tabulate the compare.json an earlier run left in --out "
                        "(host time: the sum of its simulations' wall-clock times)")
    a = p.parse_args(argv)
    if a.max_bytes < 1 or a.jobs < 1:
        p.error("--max-bytes and --jobs must be positive")
    if not a.files:
        a.files = sorted(f for f in glob.glob("traces/nccl-tests/*.txt")
                         if os.path.basename(f) != SYNTHETIC)
    for f in a.files:
        if not os.path.isfile(f):
            p.error(f"no such log: {f}")
    return a


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def reuse_compare(args, path):
    """An earlier run's compare.json of one file, and its simulations' host time."""
    with open(os.path.join(args.out, stem(path), "compare.json")) as f:
        j = json.load(f)
    if j.get("max_bytes") != args.max_bytes:
        raise RuntimeError(f"{path}: the compare.json in {args.out} was made with --max-bytes {j.get('max_bytes')}")
    return j, sum(s["host_seconds"] for s in j["simulations"])


def run_compare(args, path):
    """One file through fabricsim compare; its compare.json and host time."""
    if args.reuse:
        return reuse_compare(args, path)
    d = os.path.join(args.out, stem(path))
    os.makedirs(d, exist_ok=True)
    # Timing only (the times do not depend on the values): every element
    # would be checked otherwise, and checked calls are never fast-forwarded.
    cmd = ["build/fabricsim", "compare", path, args.config, "--max-bytes", str(args.max_bytes), "--out", d,
           "--set", "collective.data=false"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    host = time.monotonic() - t0
    with open(os.path.join(d, "compare.txt"), "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr.strip()}")
    with open(os.path.join(d, "compare.json")) as f:
        return json.load(f), host


def abs_errors(rows, key, keep):
    return [abs(r[key]) for r in rows if r["status"] == "simulated" and r[key] is not None and keep(r)]


def names(values, sep=", "):
    """The distinct values, in order of first appearance."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return sep.join(seen) if seen else "-"


def ff_text(ff):
    """How many sizes were fast-forwarded, and the largest estimated error."""
    used = [f["estimated_error"] for f in ff if f["used"] and f["run_whole"] < f["calls"]]
    return f"{len(used)} ({100 * max(used):.2f}%)" if used else "0"


def summary_row(path, j, host, png):
    rows = j["rows"]
    bw = abs_errors(rows, "busbw_error", lambda r: MIB <= r["size_bytes"] <= 256 * MIB)
    # The same over the steady rows only: fabricsim compare flags a row
    # unsteady where its out-of-place and in-place runs are further apart
    # than the largest busbw error the targets allow.
    bw_steady = abs_errors(rows, "busbw_error",
                           lambda r: MIB <= r["size_bytes"] <= 256 * MIB and not r.get("unsteady"))
    bw_unsteady = [r for r in rows if r["status"] == "simulated" and r.get("unsteady")
                   and r["busbw_error"] is not None and MIB <= r["size_bytes"] <= 256 * MIB]
    large = abs_errors(rows, "busbw_error", lambda r: r["size_bytes"] > 256 * MIB)
    ff = [r["fast_forward"] for r in rows if r["status"] == "simulated" and r.get("fast_forward")]
    small = abs_errors(rows, "time_error", lambda r: r["size_bytes"] < MIB)
    beyond = sum(r["status"] == "beyond_reach" for r in rows)
    lacking = sum(r["status"] == "not_in_model" for r in rows)
    other = sum(r["status"] not in ("simulated", "beyond_reach", "not_in_model") for r in rows)
    missing = []
    if beyond:
        missing.append(f"{beyond} beyond reach")
    if lacking:
        missing.append(f"{lacking} not in model ({names(r['why'] for r in rows if r['status'] == 'not_in_model')})")
    if other:
        missing.append(f"{other} failed or not reached")
    pct = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    return {
        "file": os.path.basename(path),
        "n": names((str(r["n"]) if r["n"] is not None else "?" for r in rows), "/"),
        "measured": names(f"{r['measured_algorithm'] or '?'}/{r['measured_protocol'] or '?'}" for r in rows),
        "simulated": names(f"{r['sim_algorithm']}/{r['sim_protocol'] or '-'}"
                           for r in rows if r["status"] == "simulated"),
        "bw_mean": pct(sum(bw) / len(bw)) if bw else "-",
        "bw_max": pct(max(bw)) if bw else "-",
        "bw_sizes": len(bw),
        "spread": j.get("unsteady_spread", 0.15),
        "bw_steady": (f"; steady sizes {pct(sum(bw_steady) / len(bw_steady))} / {pct(max(bw_steady))} "
                      f"({len(bw_steady)}), unsteady {', '.join(str(r['size_bytes']) for r in bw_unsteady)}"
                      if bw_unsteady and bw_steady else ""),
        "large_mean": pct(sum(large) / len(large)) if large else "-",
        "large_max": pct(max(large)) if large else "-",
        "large_sizes": len(large),
        "ff_text": ff_text(ff),
        "small_max": pct(max(small)) if small else "-",
        "small_sizes": len(small),
        "simulated_sizes": sum(r["status"] == "simulated" for r in rows),
        "sizes": len(rows),
        "missing": ", ".join(missing) if missing else "-",
        "host": host,
        "png": png,
    }


def series(rows):
    """Rows by what was measured: GPU count, algorithm and protocol (a file's
    sections of one setting are one curve), in the file's order."""
    out = {}
    for r in rows:
        key = (r["n"], r["measured_algorithm"], r["measured_protocol"])
        out.setdefault(key, []).append(r)
    return list(out.items())


def series_label(key):
    n, algo, proto = key
    parts = [f"n={n}" if n else "n=?", algo or "algorithm not in the log"]
    if proto:
        parts.append(proto)
    return ", ".join(parts)


def plot(plt, path, j, png_path, max_bytes):
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.9))
    for idx, (key, rows) in enumerate(series(j["rows"])):
        color = f"C{idx % 10}"
        sim = [r for r in rows if r["sim_time_us"] is not None]
        sim_label = (f"fabricsim ({names(r['sim_algorithm'] + '/' + (r['sim_protocol'] or '-') for r in sim)})"
                     if sim else "not simulated")
        for ax, m_key, s_key in ((axes[0], "measured_time_us", "sim_time_us"),
                                 (axes[1], "measured_busbw_GBps", "sim_busbw_GBps")):
            keep = [r for r in rows if r[m_key] > 0]  # busbw 0.00 at the smallest sizes
            ax.plot([r["size_bytes"] for r in keep], [r[m_key] for r in keep], color=color, marker="o",
                    ms=3.5, mfc="none", label=f"measured, {series_label(key)}")
            shown = [r for r in sim if r[s_key] > 0]
            ax.plot([r["size_bytes"] for r in shown], [r[s_key] for r in shown], color=color, ls="--",
                    marker="x", ms=7, label=f"   {sim_label}")
    for ax, ylabel in ((axes[0], "time (us)"), (axes[1], "busbw (GB/s)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size (bytes per GPU)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        ax.axvline(max_bytes, color="grey", ls=":", lw=1)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.suptitle(f"{os.path.basename(path)}: measured (o) and simulated (x); dotted line: "
                 f"--max-bytes {max_bytes}, larger sizes not simulated", fontsize=8.5)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)


def table(args, summaries, total_host):
    spread = f"{100 * max((s['spread'] for s in summaries), default=0.15):.0f}%"
    lines = [BEGIN,
             f"Generated by `scripts/validate nccl` (config `{args.config}`, sizes up to "
             f"{args.max_bytes} B simulated, {args.jobs} at once); rerun to refresh. "
             "busbw error: mean and max |simulated - measured| / measured over the sizes from 1 MiB "
             "to 256 MiB that were simulated, and over the larger ones simulated; time error: max over the "
             "sizes below 1 MiB. Timing only (`collective.data=false`): sizes from 256 MiB may be "
             "fast-forwarded (docs/models/fast_forward.md); the column says how many were and their largest "
             "estimated error. An unsteady size: nccl-tests' out-of-place and in-place runs of it differ "
             f"by more than {spread}, the largest busbw error allowed; the errors over the other sizes follow. "
             "'?': the log does not say which algorithm or protocol NCCL ran (simulated "
             "with the configuration's). Host time: wall clock of the file's simulations on this machine, "
             "shared with other work.",
             "",
             "| file | n | algorithm/protocol measured | simulated | busbw error, 1 MiB..256 MiB: mean / max (sizes) "
             "| busbw error > 256 MiB: mean / max (sizes) | max time error < 1 MiB (sizes) | sizes simulated "
             "| fast-forwarded (largest est. error) | not simulated | host s | plot |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        lines.append(
            f"| {s['file']} | {s['n']} | {s['measured']} | {s['simulated']} | "
            f"{s['bw_mean']} / {s['bw_max']} ({s['bw_sizes']}){s['bw_steady']} | "
            f"{s['large_mean']} / {s['large_max']} ({s['large_sizes']}) | {s['small_max']} ({s['small_sizes']}) | "
            f"{s['simulated_sizes']} of {s['sizes']} | "
            f"{s['ff_text']} | "
            f"{s['missing']} | {s['host']:.1f} | "
            f"[png]({os.path.relpath(s['png'], os.path.dirname(args.doc) or '.')}) |")
    elapsed = "" if args.reuse else f", {total_host:.0f} s elapsed with {args.jobs} at once"
    lines += ["", f"Host time summed over the {len(summaries)} files: "
                  f"{sum(s['host'] for s in summaries):.0f} s{elapsed}.", END]
    return "\n".join(lines)


def write_doc(doc, text):
    page = ""
    if os.path.exists(doc):
        with open(doc) as f:
            page = f.read()
    if BEGIN in page and END in page:
        head, rest = page.split(BEGIN, 1)
        page = head + text + rest.split(END, 1)[1]
    else:
        page = page.rstrip("\n") + "\n\n## Measured nccl-tests logs (generated)\n\n" + text + "\n"
    with open(doc, "w") as f:
        f.write(page)


def main(argv):
    args = parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("scripts/validate nccl: matplotlib is missing (scripts/setup installs it)")
    os.makedirs(args.plots, exist_ok=True)
    t0 = time.monotonic()
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda f: run_compare(args, f), args.files))
    total = sum(h for _, h in results) if args.reuse else time.monotonic() - t0
    summaries = []
    for path, (j, host) in zip(args.files, results):
        png = os.path.join(args.plots, f"nccl-{stem(path)}.png")
        plot(plt, path, j, png, args.max_bytes)
        summaries.append(summary_row(path, j, host, png))
        print(f"validate nccl: {os.path.basename(path)}: {host:.1f} s host, "
              f"busbw 1 MiB..256 MiB {summaries[-1]['bw_mean']} mean, {summaries[-1]['bw_max']} max; "
              f"time < 1 MiB {summaries[-1]['small_max']} max -> {png}")
    text = table(args, summaries, total)
    write_doc(args.doc, text)
    print(text)
    print(f"validate nccl: {len(summaries)} files in {total:.0f} s -> {args.doc}")
