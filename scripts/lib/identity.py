"""The identity check (scripts/identity): fixed cases, reference statistics.

Each line of traces/identity/cases.txt is `NAME PROGRAM ARGS...`, where
PROGRAM is `run` (fabricsim run ARGS) or `tlm_allreduce` (the TLM example,
ARGS its arguments). A case's statistics, less the host's figures (host
time, memory, build, events per second), are kept as
traces/identity/NAME.json; `check` compares a new run with it field by
field. Numbers are compared exactly: JSON doubles are written with 17
significant digits, which read back to the same double.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "traces" / "identity" / "cases.txt"
REFS = ROOT / "traces" / "identity"

# Fields that describe the host, not the simulation: dropped before comparing.
HOST_KEYS = {"host"}
HOST_SIM_KEYS = {"host_seconds", "events_per_second", "cycles_per_second"}


def read_cases(path=CASES):
    """The cases in file order: [(name, program, args)]; exits on a bad line."""
    cases = []
    seen = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = shlex.split(line)
        if len(words) < 2 or words[1] not in ("run", "tlm_allreduce"):
            sys.exit(f"identity: {path}:{number}: expected 'NAME run|tlm_allreduce ARGS...', "
                     f"got '{line}'")
        if words[0] in seen:
            sys.exit(f"identity: {path}:{number}: case '{words[0]}' is named twice")
        seen.add(words[0])
        cases.append((words[0], words[1], words[2:]))
    return cases


def strip_host(stats):
    """The statistics without the host's figures (a copy)."""
    out = {k: v for k, v in stats.items() if k not in HOST_KEYS}
    if isinstance(out.get("sim"), dict):
        out["sim"] = {k: v for k, v in out["sim"].items() if k not in HOST_SIM_KEYS}
    return out


def run_case(build, program, args, workdir):
    """Runs one case; returns its statistics (host figures stripped)."""
    stats = Path(workdir) / "stats.json"
    env = dict(os.environ, SC_COPYRIGHT_MESSAGE="DISABLE")
    if program == "run":
        cmd = [str(build / "fabricsim"), "run", *args, "--quiet", "--out", str(workdir)]
    else:
        cmd = [str(build / "testbenches" / "tlm_allreduce"), *args]
        env["FABRICSIM_STATS_JSON"] = str(stats)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"exit status {proc.returncode}: {' '.join(cmd)}\n"
                           f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return strip_host(json.loads(stats.read_text()))


def differences(ref, new, path="", out=None, limit=12):
    """Paths where two JSON values differ, at most `limit` of them."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(ref, dict) and isinstance(new, dict):
        for k in sorted(set(ref) | set(new)):
            p = f"{path}.{k}" if path else k
            if k not in ref:
                out.append(f"{p}: new field")
            elif k not in new:
                out.append(f"{p}: missing")
            else:
                differences(ref[k], new[k], p, out, limit)
    elif isinstance(ref, list) and isinstance(new, list):
        if len(ref) != len(new):
            out.append(f"{path}: {len(ref)} items, now {len(new)}")
        for i, (a, b) in enumerate(zip(ref, new)):
            differences(a, b, f"{path}[{i}]", out, limit)
    elif type(ref) is not type(new) or ref != new:
        out.append(f"{path}: {ref!r} -> {new!r}")
    return out[:limit]


def main():
    ap = argparse.ArgumentParser(prog="scripts/identity", description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["check", "record", "list"])
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    ap.add_argument("--build", default=str(ROOT / "build"),
                    help="build directory holding fabricsim (default: build/)")
    a = ap.parse_args()
    cases = read_cases()
    if a.mode == "list":
        for name, program, args in cases:
            print(name, program, shlex.join(args))
        return 0
    known = {c[0] for c in cases}
    unknown = [n for n in a.cases if n not in known]
    if unknown:
        sys.exit(f"identity: unknown case(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if a.cases:
        cases = [c for c in cases if c[0] in a.cases]
    build = Path(a.build).resolve()
    if not (build / "fabricsim").exists():
        sys.exit(f"identity: no fabricsim in '{build}' (build first, or pass --build DIR)")
    failed = 0
    for name, program, args in cases:
        ref_path = REFS / f"{name}.json"
        with tempfile.TemporaryDirectory() as tmp:
            try:
                stats = run_case(build, program, args, tmp)
            except (RuntimeError, OSError, ValueError) as e:
                print(f"FAIL {name}: {e}")
                failed += 1
                continue
        if a.mode == "record":
            ref_path.write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
            print(f"recorded {name}")
            continue
        if not ref_path.exists():
            print(f"FAIL {name}: no reference {ref_path.relative_to(ROOT)} (scripts/identity record {name})")
            failed += 1
            continue
        diff = differences(json.loads(ref_path.read_text()), stats)
        if diff:
            failed += 1
            print(f"DIFF {name}:")
            for d in diff:
                print(f"  {d}")
        else:
            print(f"same {name}")
    total = len(cases)
    print(f"identity: {total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
