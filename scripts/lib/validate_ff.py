#!/usr/bin/python3
"""Fast-forward against full simulation (issue 28; docs/performance.md).

usage: validate_ff.py OUT [--jobs J] [--quick] [--case NAME...]

Every case runs twice through build/fabricsim, timing only
(collective.data=false): with collective.fast_forward=auto from its size
and with fast_forward=off. Prints, and writes to OUT/fast_forward.md and
OUT/fast_forward.json, the call time of each and their difference, the
estimated error, the share of the call simulated, and both host times and
peak RSS. --quick: the cases up to 256 MiB only.
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "build", "fabricsim")
MIB = 1 << 20
DGX = "configs/dgx-h100-allreduce.yaml"
IB = "configs/dgx-h100-x4-ib.yaml"
NVL72 = "configs/nvl72.yaml"
COLL = ["workload.kind=collective", "sim.warmup_ns=0", "sim.duration_ns=1e9"]


def case(name, config, sets, size, probe=None):
    return dict(name=name, config=config, sets=sets, size=size, probe=probe)


# (name, config, sets, size per GPU, first probe; None: the default)
CASES = [case(f"dgx-h100 {a}", DGX, [f"collective.algorithm={a}"], s)
         for a in ("ring", "nvls", "push", "direct") for s in (256 * MIB, 1024 * MIB)]
CASES += [
    case("nvl72 nvls", NVL72, COLL + ["collective.algorithm=nvls"], 64 * MIB, 4 * MIB),
    case("4 x dgx-h100 ib hierarchical", IB, ["collective.algorithm=hierarchical"], 64 * MIB, 4 * MIB),
    case("4 x dgx-h100 ib hierarchical, jitter 300 ns", IB,
         ["collective.algorithm=hierarchical", "straggler.jitter_ns=300"], 64 * MIB, 4 * MIB),
    case("4 x dgx-h100 ib hierarchical, GPU 5 at 0.8", IB,
         ["collective.algorithm=hierarchical", "straggler.gpu=5", "straggler.issue_factor=0.8"],
         64 * MIB, 4 * MIB),
]


def run(c, ff, out):
    tag = ("ff" if ff else "full") + "-" + c["name"].replace(" ", "_").replace(",", "").replace("/", "")
    d = os.path.join(out, f"{tag}-{c['size'] // MIB}MiB")
    sets = c["sets"] + ["collective.data=false", f"collective.min_bytes={c['size']}",
                        f"collective.max_bytes={c['size']}",
                        "collective.fast_forward=" + ("auto" if ff else "off"),
                        f"collective.fast_forward_min_bytes={c['size']}"]
    if c["probe"]:
        sets.append(f"collective.fast_forward_probe_bytes={c['probe']}")
    t0 = time.time()
    p = subprocess.run([BIN, "run", os.path.join(ROOT, c["config"]), "--quiet", "--out", d, "--set"] + sets,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return dict(error=p.stderr.strip()[-400:] or f"exit {p.returncode}")
    s = json.load(open(os.path.join(d, "stats.json")))
    row = s["collectives"]["rows"][0]
    return dict(time_us=row["time_us"], busbw=row["busbw_GBps"], ff=row.get("fast_forward"),
                host_s=s["sim"]["host_seconds"], wall_s=time.time() - t0,
                rss_mib=s["host"]["peak_rss_bytes"] / MIB)


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    out, jobs, quick, names = argv[0], 2, False, []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--jobs" and i + 1 < len(argv):
            jobs = int(argv[i + 1])
            i += 1
        elif a == "--quick":
            quick = True
        elif a == "--case" and i + 1 < len(argv):
            names.append(argv[i + 1])
            i += 1
        else:
            print(f"validate_ff.py: unknown argument '{a}'\n{__doc__}", file=sys.stderr)
            return 2
        i += 1
    cases = [c for c in CASES if (not quick or c["size"] <= 256 * MIB) and (not names or c["name"] in names)]
    if not cases:
        print(f"validate_ff.py: no case named {names}; the cases: " +
              ", ".join(sorted({c['name'] for c in CASES})), file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [(c, pool.submit(run, c, True, out), pool.submit(run, c, False, out)) for c in cases]
        results = [(c, f.result(), w.result()) for c, f, w in futures]
    lines = ["| case | size | full us | fast-forwarded us | difference | estimated | simulated | "
             "host full s | host ff s | RSS full / ff MiB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    records, worst = [], 0.0
    for c, f, w in results:
        if "error" in f or "error" in w:
            lines.append(f"| {c['name']} | {c['size'] // MIB} MiB | error: {f.get('error', '')} {w.get('error', '')} |")
            worst = float("inf")
            continue
        ff = f["ff"] or {}
        diff = (f["time_us"] - w["time_us"]) / w["time_us"]
        rounds = ff.get("rounds") or [{}]
        by = "by the end's slope" if rounds[-1].get("accepted_by_end_slope") else "by the progress"
        how = ("whole after probes" if ff.get("run_whole") else
               f"{100 * ff.get('simulated_fraction', 1):.1f}%, {by}") if ff.get("used") else "not used"
        worst = max(worst, abs(diff))
        lines.append(f"| {c['name']} | {c['size'] // MIB} MiB | {w['time_us']:.2f} | {f['time_us']:.2f} | "
                     f"{100 * diff:+.3f}% | {100 * ff.get('estimated_error', 0):.3f}% | {how} | "
                     f"{w['host_s']:.1f} | {f['host_s']:.1f} | {w['rss_mib']:.0f} / {f['rss_mib']:.0f} |")
        records.append(dict(case=c["name"], size=c["size"], full=w, fast_forward=f, difference=diff))
    text = "\n".join(lines)
    print(text)
    print(f"largest |difference|: {100 * worst:.3f}%")
    with open(os.path.join(out, "fast_forward.md"), "w") as fh:
        fh.write(text + "\n")
    with open(os.path.join(out, "fast_forward.json"), "w") as fh:
        json.dump(records, fh, indent=1)
    return 0 if worst < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
