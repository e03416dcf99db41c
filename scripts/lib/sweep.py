"""scripts/sweep: a grid of fabricsim runs (parameters x values x seeds), run
on this machine with GNU parallel or on a cluster as a Slurm job array, and
gathered into one CSV. docs/sweeps.md describes the spec, the output
directory and the columns.

usage: scripts/sweep SPEC.yaml [--out DIR] [-j N] [--force] [--fabricsim PATH]
                               [--list | --dry-run | --slurm FILE | --gather]
Exit status: 0 every run finished; 1 a run failed (or, for --gather, has not
run yet); 2 a bad spec or command line (nothing is run).
"""
import argparse
import csv
import difflib
import hashlib
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(REPO, "scripts", "lib", "sweep-run")
FIELDS = ("description", "config", "set", "grid", "seeds", "out", "slurm")


class SpecError(Exception):
    pass


def suggest(word, choices):
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def value_text(field, v):
    """A spec value as fabricsim's --set takes it: scalars as written, lists joined by commas."""
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return ",".join(v)
    raise SpecError(f"{field}: a value must be a number, a name or a list of them (got {v!r})")


class Spec:
    def __init__(self, path, out_override, known):
        self.path = os.path.abspath(path)
        here = os.path.dirname(self.path)
        try:
            with open(path) as f:
                self.text = f.read()
        except OSError as e:
            raise SpecError(f"cannot read the spec '{path}': {e.strerror}")
        try:
            # BaseLoader keeps every scalar as written ("0.50" stays "0.50").
            d = yaml.load(self.text, Loader=yaml.BaseLoader)
        except yaml.YAMLError as e:
            raise SpecError(f"{path}: YAML syntax error: {e}")
        if not isinstance(d, dict):
            raise SpecError(f"{path}: the spec must be a mapping with the fields {', '.join(FIELDS)}")
        for k in d:
            if k not in FIELDS:
                raise SpecError(f"unknown field '{k}'{suggest(k, FIELDS)} "
                                f"(the fields are {', '.join(FIELDS)})")

        self.description = d.get("description", "")
        if not isinstance(self.description, str):
            raise SpecError("description: must be one line of text")
        cfg = d.get("config")
        if not isinstance(cfg, str) or not cfg:
            raise SpecError("config: missing; name the base configuration file "
                            "(relative to the spec's directory), e.g. config: switch64.yaml")
        self.config = os.path.normpath(os.path.join(here, cfg))
        if not os.path.isfile(self.config):
            raise SpecError(f"config: file '{cfg}' not found (looked for {self.config})")

        sets = d.get("set", {})
        if sets == "":
            sets = {}
        if not isinstance(sets, dict):
            raise SpecError(f"set: must be a mapping of parameter: value (got {sets!r})")
        self.sets = []
        for k, v in sets.items():
            self.check_key("set", k, known)
            self.sets.append((k, value_text(f"set: {k}", v)))

        grid = d.get("grid")
        if not isinstance(grid, dict) or not grid:
            raise SpecError("grid: missing or empty; give at least one parameter and its values, "
                            "e.g. grid: {traffic.load: [0.3, 0.6, 0.9]}")
        # A group is a list of (key, values) that change together; a plain
        # grid entry is a group of one. The runs are the product of the groups.
        self.groups = []
        for k, v in grid.items():
            if isinstance(v, dict):
                if not v:
                    raise SpecError(f"grid: {k}: an empty group")
                group = [(p, self.values(f"grid: {k}", p, vs, known)) for p, vs in v.items()]
                lengths = {p: len(vs) for p, vs in group}
                if len(set(lengths.values())) != 1:
                    raise SpecError(f"grid: {k}: the parameters of a group change together and "
                                    f"need as many values each (got "
                                    f"{', '.join(f'{p}: {n}' for p, n in lengths.items())})")
                self.groups.append(group)
            else:
                self.groups.append([(k, self.values("grid", k, v, known))])
        self.params = [p for g in self.groups for p, _ in g]
        for p in self.params:
            if self.params.count(p) > 1:
                raise SpecError(f"grid: parameter '{p}' appears twice")
            if p in dict(self.sets):
                raise SpecError(f"parameter '{p}' is both in set and in grid; keep it in one")

        seeds = d.get("seeds", "1")
        if isinstance(seeds, str):
            if not re.fullmatch(r"[0-9]+", seeds) or int(seeds) < 1:
                raise SpecError(f"seeds: '{seeds}' is neither a count (1, 2, ...: seeds 1..N) "
                                f"nor a list of seeds")
            self.seeds = list(range(1, int(seeds) + 1))
        elif isinstance(seeds, list) and seeds:
            self.seeds = []
            for s in seeds:
                if not isinstance(s, str) or not re.fullmatch(r"[0-9]+", s):
                    raise SpecError(f"seeds: '{s}' is not a non-negative integer")
                if int(s) in self.seeds:
                    raise SpecError(f"seeds: {s} is listed twice")
                self.seeds.append(int(s))
        else:
            raise SpecError(f"seeds: must be a count or a non-empty list of seeds (got {seeds!r})")

        out = out_override or d.get("out")
        if out is None:
            out = os.path.join("out", "sweeps", os.path.splitext(os.path.basename(path))[0])
        if not isinstance(out, str) or not out:
            raise SpecError(f"out: must name a directory (got {out!r})")
        self.out = os.path.abspath(out)

        slurm = d.get("slurm", {})
        if slurm == "":
            slurm = {}
        if not isinstance(slurm, dict):
            raise SpecError(f"slurm: must be a mapping of sbatch option: value (got {slurm!r})")
        for k, v in slurm.items():
            if not re.fullmatch(r"[a-z][a-z0-9-]*", k) or not isinstance(v, str) or k == "array":
                raise SpecError(f"slurm: '{k}: {v}' is not an sbatch option (a long option name "
                                f"without dashes and a value, e.g. partition: cpu; not array)")
        self.slurm = slurm

    def check_key(self, field, key, known):
        if key in ("sim.seed",):
            raise SpecError(f"{field}: {key}: give seeds with the 'seeds' field")
        if key not in known:
            raise SpecError(f"{field}: unknown parameter '{key}'{suggest(key, known)} "
                            f"(build/fabricsim params lists them)")

    def values(self, where, key, vs, known):
        self.check_key(where, key, known)
        field = f"{where}: {key}"
        if not isinstance(vs, list) or not vs:
            raise SpecError(f"{field}: needs a non-empty list of values (got {vs!r})")
        texts = [value_text(field, v) for v in vs]
        for t in texts:
            if texts.count(t) > 1:
                raise SpecError(f"{field}: value '{t}' is listed twice")
        return texts


def known_params(fabricsim):
    r = subprocess.run([fabricsim, "params"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SpecError(f"'{fabricsim} params' failed: {r.stderr.strip()}")
    return [line.strip() for line in r.stdout.splitlines() if line and not line[0].isspace()]


def config_chain(path, depth=0):
    """The config file and the files it includes through 'base:' (as fabricsim resolves them)."""
    files = [path]
    try:
        with open(path) as f:
            d = yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return files
    if depth < 16 and isinstance(d, dict) and isinstance(d.get("base"), str):
        base = d["base"]
        files += config_chain(base if base.startswith("/") else
                              os.path.join(os.path.dirname(path), base), depth + 1)
    return files


def name_part(v):
    """A value as it reads in a run name: as written when filesystem-safe (a list's
    commas become dashes); otherwise the unsafe characters replaced and a hash of
    the value appended, so that names stay unique."""
    if "-" not in v and re.fullmatch(r"[A-Za-z0-9._+,]{1,40}", v):
        return v.replace(",", "-")  # a list (topology.links 2,2,2,2 reads 2-2-2-2)
    safe = re.sub(r"[^A-Za-z0-9._+-]", "-", v)
    return safe[:40] + "~" + hashlib.sha1(v.encode()).hexdigest()[:6]


class Run:
    def __init__(self, spec, params, seed, short, fabricsim, config_bytes):
        self.params, self.seed = params, seed
        name = ",".join(f"{short[k]}={name_part(v)}" for k, v in params.items()) + f",seed={seed}"
        if len(name) > 200:
            name = name[:180] + "~" + hashlib.sha1(name.encode()).hexdigest()[:12]
        self.name = name
        self.dir = os.path.join(spec.out, "runs", name)
        args = [fabricsim, "run", spec.config]
        for k, v in spec.sets + list(params.items()):
            args += ["--set", f"{k}={v}"]
        args += ["--seed", str(seed), "--out", self.dir, "--quiet"]
        self.argv = args
        self.command = (f"#!/usr/bin/env bash\n# run {name} of a scripts/sweep grid\n"
                        "exec " + " ".join(shlex.quote(a) for a in args) + "\n")
        h = hashlib.sha256(self.command.encode())
        h.update(config_bytes)
        self.fingerprint = h.hexdigest() + "\n"

    def read(self, f):
        try:
            with open(os.path.join(self.dir, f)) as fh:
                return fh.read()
        except OSError:
            return None

    def status(self):
        """done, failed (this command failed) or pending (not run, interrupted or changed)."""
        if self.read("done") == self.fingerprint:
            return "done"
        if self.read("failed") is not None and self.read("fingerprint") == self.fingerprint:
            return "failed"
        return "pending"

    def prepare(self):
        os.makedirs(self.dir, exist_ok=True)
        for f, text in (("command", self.command), ("fingerprint", self.fingerprint)):
            if self.read(f) != text:
                with open(os.path.join(self.dir, f), "w") as fh:
                    fh.write(text)

    def stderr_lines(self):
        return [l for l in (self.read("stderr") or "").splitlines() if l.strip()]

    def exit_status(self):
        return (self.read("failed") or "?").strip()


def expand(spec, fabricsim):
    shorts = [p.rsplit(".", 1)[-1] for p in spec.params]
    short = {p: (s if shorts.count(s) == 1 else p) for p, s in zip(spec.params, shorts)}
    config_bytes = b"".join(open(f, "rb").read() for f in config_chain(spec.config)
                            if os.path.isfile(f))
    runs = []
    for combo in itertools.product(*[list(zip(*[vs for _, vs in g])) for g in spec.groups]):
        params = {}
        for g, values in zip(spec.groups, combo):
            for (p, _), v in zip(g, values):
                params[p] = v
        for seed in spec.seeds:
            runs.append(Run(spec, params, seed, short, fabricsim, config_bytes))
    names = [r.name for r in runs]
    if len(set(names)) != len(names):  # only a hash collision could do this
        raise SpecError("two runs got the same name; please report this spec")
    return runs


def write_manifest(spec, runs):
    os.makedirs(spec.out, exist_ok=True)
    with open(os.path.join(spec.out, "spec.yaml"), "w") as f:
        f.write(f"# {spec.path}\n" + spec.text)
    with open(os.path.join(spec.out, "manifest.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", *spec.params, "seed", "dir"])
        for r in runs:
            w.writerow([r.name, *r.params.values(), r.seed, r.dir])
    for r in runs:
        r.prepare()


# --- gather -----------------------------------------------------------------

# Sections in the order their columns come; others follow, then host.
SECTION_ORDER = ["collectives", "throughput", "latency_ns", "network_latency_ns", "reads",
                 "reliability", "tiers", "links", "switches", "endpoints", "conservation", "sim"]
LEAD = ["collectives.size_bytes", "collectives.time_us", "collectives.algbw_GBps",
        "collectives.busbw_GBps", "collectives.wrong"]
SKIP = {"config", "faults"}  # the parameters are columns; the fault log is a list


def scalar(v):
    return isinstance(v, (int, float, str, bool)) and v is not None


def flatten(d, prefix, out):
    """Scalars of nested mappings as dotted paths; lists are left out."""
    for k, v in d.items():
        if isinstance(v, dict):
            flatten(v, f"{prefix}{k}.", out)
        elif scalar(v):
            out[prefix + k] = v


def instance_table(v):
    """Per-instance sections (links, switches, TLM endpoints): a list of
    mappings, or a mapping of module names (fabric.sw0, ...) to mappings."""
    if isinstance(v, list):
        return bool(v) and all(isinstance(x, dict) for x in v)
    return (isinstance(v, dict) and bool(v) and all(isinstance(x, dict) for x in v.values())
            and any("." in k for k in v))


def measured_rows(stats):
    """Columns of one stats.json: one row, or one per collectives row."""
    base = {}
    for sec, v in stats.items():
        if sec in SKIP:
            continue
        if instance_table(v):
            values = {}
            for inst in (v if isinstance(v, list) else v.values()):
                leaves = {}
                flatten(inst, "", leaves)
                for k, x in leaves.items():
                    if isinstance(x, (int, float)) and not isinstance(x, bool):
                        values.setdefault(k, []).append(x)
            for k, xs in values.items():
                base[f"mean({sec}.{k})"] = float(f"{sum(xs) / len(xs):.12g}")
                base[f"max({sec}.{k})"] = max(xs)
        elif isinstance(v, dict):
            flatten(v, sec + ".", base)
        elif scalar(v):
            base[sec] = v
    rows = (stats.get("collectives") or {}).get("rows")
    if not rows:
        return [base]
    out = []
    for r in rows:
        row = dict(base)
        flatten(r, "collectives.", row)
        out.append(row)
    return out


def column_key(col, first_seen):
    bare = col[col.index("(") + 1:] if col.endswith(")") else col
    sec = bare.split(".", 1)[0]
    rank = SECTION_ORDER.index(sec) if sec in SECTION_ORDER else \
        (len(SECTION_ORDER) + (1 if sec == "host" else 0))
    lead = LEAD.index(col) if col in LEAD else len(LEAD)
    return (rank, lead, first_seen[col])


def text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return v


def gather(spec, runs):
    """Writes OUT/results.csv; returns the runs by status."""
    by_status = {"done": [], "failed": [], "pending": []}
    table, first_seen = [], {}
    for r in runs:
        st = r.status()
        by_status[st].append(r)
        fixed = {"run": r.name, "status": {"done": "ok"}.get(st, st), **r.params, "seed": r.seed,
                 "error": (r.stderr_lines() or [""])[-1] if st == "failed" else ""}
        measured = [{}]
        if st == "done":
            try:
                with open(os.path.join(r.dir, "stats.json")) as f:
                    measured = measured_rows(json.load(f))
            except (OSError, ValueError) as e:
                fixed["status"], fixed["error"] = "failed", f"unreadable stats.json: {e}"
                by_status["done"].remove(r)
                by_status["failed"].append(r)
        for m in measured:
            for c in m:
                first_seen.setdefault(c, len(first_seen))
            table.append({**{c: text(v) for c, v in m.items() if c not in fixed}, **fixed})
    columns = ["run", "status", *spec.params, "seed"]
    columns += sorted((c for c in first_seen if c not in columns and c != "error"),
                      key=lambda c: column_key(c, first_seen))
    columns.append("error")
    path = os.path.join(spec.out, "results.csv")
    os.makedirs(spec.out, exist_ok=True)
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(table)
    os.replace(path + ".tmp", path)
    return by_status, path, len(table)


def show(path):
    """A path as printed: relative when under the current directory."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def report(spec, runs, by_status, csv_path, rows, seconds=None):
    rel = show(csv_path)
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    parts = [f"{len(by_status['done'])} ok"]
    if by_status["failed"]:
        parts.append(f"{len(by_status['failed'])} failed")
    if by_status["pending"]:
        parts.append(f"{len(by_status['pending'])} not run")
    print(f"sweep: {len(runs)} runs{took}: {', '.join(parts)}; {rel}: {rows} rows")
    for r in by_status["failed"]:
        print(f"sweep: FAILED {r.name} (exit {r.exit_status()}); "
              f"stderr ({show(os.path.join(r.dir, 'stderr'))}):", file=sys.stderr)
        for line in r.stderr_lines()[-10:]:
            print(f"    {line}", file=sys.stderr)
        print(f"  rerun by hand: bash {shlex.quote(show(os.path.join(r.dir, 'command')))}",
              file=sys.stderr)
    return 0 if len(by_status["done"]) == len(runs) else 1


# --- execution --------------------------------------------------------------

def run_local(spec, todo, jobs):
    parallel = shutil.which("parallel")
    if not parallel:
        raise SpecError("GNU parallel is not installed: run scripts/setup")
    queue = os.path.join(spec.out, "queue.txt")
    with open(queue, "w") as f:
        f.writelines(r.dir + "\n" for r in todo)
    cmd = [parallel, "-j", str(jobs), "--halt", "never"]
    if sys.stderr.isatty():
        cmd.append("--bar")
    cmd += [RUNNER, "{}", "::::", queue]
    # parallel's exit status counts failed runs; the markers say which.
    subprocess.run(cmd, stdin=subprocess.DEVNULL)
    os.remove(queue)


def write_slurm(spec, todo, path, gather_cmd):
    listing = os.path.join(spec.out, "slurm-runs.txt")
    logs = os.path.join(spec.out, "slurm-logs")
    os.makedirs(logs, exist_ok=True)
    with open(listing, "w") as f:
        f.writelines(r.dir + "\n" for r in todo)
    name = "sweep-" + re.sub(r"[^A-Za-z0-9_.-]", "-", os.path.splitext(os.path.basename(spec.path))[0])
    options = {"job-name": name, "output": os.path.join(logs, "%A_%a.out"),
               "ntasks": "1", "cpus-per-task": "1", **spec.slurm}
    lines = ["#!/usr/bin/env bash",
             f"# Slurm job array of the sweep {spec.path}: one task per run, task i runs the",
             f"# run directory on line i+1 of {listing} ({len(todo)} runs not done when written).",
             *([f"# ({spec.description})"] if spec.description else []),
             "# Written by scripts/sweep --slurm; submit it, then gather when every task has ended:",
             f"#   sbatch {shlex.quote(os.path.abspath(path))}",
             f"#   {gather_cmd}",
             "# Each run writes stdout, stderr and stats.json in its own directory; a finished",
             "# run is skipped, so the array can be submitted again after a failure.",
             f"#SBATCH --array=0-{len(todo) - 1}"]
    for k, v in options.items():
        lines.append(f"#SBATCH --{k}" + (f"={v}" if v != "" else ""))
    lines += ["set -euo pipefail",
              f'run=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" {shlex.quote(listing)})',
              f"exec {shlex.quote(RUNNER)} \"$run\"", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    os.chmod(path, 0o755)


def main():
    ap = argparse.ArgumentParser(
        prog="scripts/sweep",
        description="Run a grid of fabricsim runs (parameters x values x seeds) and gather "
                    "their stats into one CSV (docs/sweeps.md).")
    ap.add_argument("spec", help="the sweep's YAML spec")
    ap.add_argument("--out", help="output directory (default: the spec's 'out')")
    ap.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="runs at once (default: the CPUs available, %(default)s)")
    ap.add_argument("--force", action="store_true", help="rerun finished runs too")
    ap.add_argument("--fabricsim", default=os.path.join(REPO, "build", "fabricsim"),
                    help="the simulator binary (default: build/fabricsim of this checkout)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true",
                      help="print every run and its status (done, failed, pending); run nothing")
    mode.add_argument("--dry-run", action="store_true",
                      help="print the commands of the runs that would run; run nothing")
    mode.add_argument("--slurm", metavar="FILE",
                      help="write a Slurm job-array script for the runs not done; run nothing")
    mode.add_argument("--gather", action="store_true",
                      help="only gather the finished runs into results.csv and report the rest")
    a = ap.parse_args()
    if a.jobs < 1:
        ap.error(f"-j {a.jobs}: at least 1")

    try:
        fabricsim = os.path.abspath(a.fabricsim)
        if not os.access(fabricsim, os.X_OK):
            raise SpecError(f"the simulator {fabricsim} is not built: run scripts/build "
                            f"(or give --fabricsim PATH)")
        spec = Spec(a.spec, a.out, known_params(fabricsim))
        runs = expand(spec, fabricsim)
        status = {r.name: r.status() for r in runs}
        todo = [r for r in runs if a.force or status[r.name] != "done"]

        if a.list or a.dry_run:
            width = max(len(r.name) for r in runs)
            for r in runs:
                if a.list:
                    print(f"{r.name:<{width}}  {status[r.name]}")
                elif r in todo:
                    print(" ".join(shlex.quote(x) for x in r.argv))
            print(f"sweep: {len(runs)} runs, {len(runs) - len(todo)} done, {len(todo)} to run "
                  f"-> {show(spec.out)}", file=sys.stderr)
            return 0

        if a.gather:
            by_status, path, rows = gather(spec, runs)
            return report(spec, runs, by_status, path, rows)

        write_manifest(spec, runs)
        if a.force:
            for r in todo:
                for f in ("done", "failed"):
                    if os.path.exists(os.path.join(r.dir, f)):
                        os.remove(os.path.join(r.dir, f))

        if a.slurm:
            if not todo:
                print(f"sweep: all {len(runs)} runs are done; no Slurm script written")
                by_status, path, rows = gather(spec, runs)
                return report(spec, runs, by_status, path, rows)
            gather_cmd = " ".join(shlex.quote(x) for x in
                                  [os.path.join(REPO, "scripts", "sweep"), spec.path,
                                   "--out", spec.out, "--gather"])
            write_slurm(spec, todo, a.slurm, gather_cmd)
            print(f"sweep: {a.slurm}: a job array of {len(todo)} runs "
                  f"({len(runs) - len(todo)} of {len(runs)} already done)")
            print(f"sweep: submit:  sbatch {a.slurm}")
            print(f"sweep: then:    {gather_cmd}")
            if len(todo) > 1000:
                print("sweep: note: Slurm's default MaxArraySize is 1001; a larger array needs a "
                      "cluster that allows it", file=sys.stderr)
            return 0

        jobs = f" on {min(a.jobs, len(todo))} jobs" if todo else ""
        print(f"sweep: {len(runs)} runs, {len(runs) - len(todo)} done, {len(todo)} to run{jobs} "
              f"-> {show(spec.out)}")
        start = time.monotonic()
        if todo:
            run_local(spec, todo, a.jobs)
        by_status, path, rows = gather(spec, runs)
        return report(spec, runs, by_status, path, rows, time.monotonic() - start)
    except SpecError as e:
        print(f"sweep: {a.spec}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sweep: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
