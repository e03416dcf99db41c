"""Latency/throughput table of a load sweep: one row per (design, load).

usage: latency_table.py OUT_DIR DESIGN [DESIGN ...]
Reads OUT_DIR/DESIGN/load-*/stats.json, prints a table, writes OUT_DIR/results.csv.
"""
import csv
import glob
import json
import os
import sys


def main():
    out, designs = sys.argv[1], sys.argv[2:]
    rows = []
    for d in designs:
        runs = []
        for path in glob.glob(os.path.join(out, d, "load-*", "stats.json")):
            with open(path) as f:
                s = json.load(f)
            runs.append(s)
        runs.sort(key=lambda s: s["config"]["traffic.load"])
        for s in runs:
            t, l, k = s["throughput"], s["latency_ns"], s["conservation"]
            rows.append({
                "design": d,
                "load": s["config"]["traffic.load"],
                "offered": t["offered"],
                "accepted": t["accepted"],
                "payload_GBps": t["accepted_payload_GBps_per_endpoint"],
                "mean_ns": l["mean"],
                "p99_ns": l["p99"],
                "p999_ns": l["p999"],
                "lost": k["lost"],
                "status": s["sim"].get("status", "?"),
            })
    if not rows:
        sys.exit("no stats.json found under " + out)
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    cfg = runs[0]["config"]
    print(f"{cfg['switch.ports']}-port switch, {cfg['link.lanes']} x {cfg['link.lane_gbps']:g} Gb/s "
          f"ports, {cfg['traffic.pattern']} traffic, {cfg['traffic.packet_flits']}-flit packets, "
          f"window {s['sim']['window_ns']:g} ns")
    print("offered/accepted: flits per cycle per endpoint (fraction of link rate); "
          "latency: generation to tail delivery, incl. source queueing")
    head = f"{'design':<10} {'offered':>8} {'accepted':>9} {'GB/s':>7} {'mean ns':>9} {'p99 ns':>9} {'p99.9 ns':>9}"
    print(head)
    print("-" * len(head))
    last = None
    for r in rows:
        if last and r["design"] != last:
            print()
        last = r["design"]
        flag = "" if r["status"] == "ok" and r["lost"] == 0 else "  FAILED"
        print(f"{r['design']:<10} {r['offered']:>8.3f} {r['accepted']:>9.3f} {r['payload_GBps']:>7.2f} "
              f"{r['mean_ns']:>9.1f} {r['p99_ns']:>9.1f} {r['p999_ns']:>9.1f}{flag}")


if __name__ == "__main__":
    main()
