"""Side-by-side table of collective sweeps (nccl-tests columns per algorithm).

usage: collective_table.py OUT_DIR ALGO [ALGO ...]
Reads OUT_DIR/ALGO/stats.json (each a `fabricsim run` of the same sizes),
prints one row per size with time, algbw and busbw of every algorithm and
the largest #wrong, and writes OUT_DIR/results.csv.
"""
import csv
import json
import os
import sys


def main():
    out, algos = sys.argv[1], sys.argv[2:]
    rows_by_algo = {}
    for a in algos:
        with open(os.path.join(out, a, "stats.json")) as f:
            s = json.load(f)
        rows_by_algo[a] = {r["size_bytes"]: r for r in s["collectives"]["rows"]}
    sizes = sorted(set().union(*[set(r) for r in rows_by_algo.values()]))

    head = f"{'size (B)':>12}"
    for a in algos:
        head += f" | {a + ' us':>10} {'algbw':>7} {'busbw':>7}"
    head += f" | {'#wrong':>6}"
    print(head)
    print("-" * len(head))
    table = []
    for size in sizes:
        line = f"{size:>12}"
        row = {"size_bytes": size}
        wrong = 0
        for a in algos:
            r = rows_by_algo[a].get(size)
            if r is None:
                line += f" | {'-':>10} {'-':>7} {'-':>7}"
                continue
            line += f" | {r['time_us']:>10.2f} {r['algbw_GBps']:>7.1f} {r['busbw_GBps']:>7.1f}"
            row[f"{a}_time_us"] = r["time_us"]
            row[f"{a}_algbw_GBps"] = r["algbw_GBps"]
            row[f"{a}_busbw_GBps"] = r["busbw_GBps"]
            wrong = max(wrong, r["wrong"])
        row["wrong"] = wrong
        print(line + f" | {wrong:>6}")
        table.append(row)
    print("(algbw, busbw in GB/s; busbw = algbw x 2(n-1)/n, as nccl-tests)")

    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0].keys()) if table else ["size_bytes"])
        w.writeheader()
        w.writerows(table)
    return 0 if all(r["wrong"] == 0 for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
