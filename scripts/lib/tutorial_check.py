"""scripts/tutorial-check: runs docs/tutorial.md as a new user would and
fails where the page no longer says what the commands print.

usage: scripts/tutorial-check [--fabricsim BIN] [--keep DIR] [PAGE]

The page is read as a script:
  - every ```sh block is run, command by command, in a scratch directory
    that holds the checkout's configs/ and scripts/ and a build/ with BIN
    (default: build/fabricsim of this checkout), unless an HTML comment
    `<!-- check: skip REASON -->` stands right before it;
  - an indented block that follows a ```sh block (blank lines between) is
    what its commands print: compared line by line with what they printed,
    after host figures (host seconds, events per second, peak RSS, a
    sweep's duration and job count) are masked on both sides;
  - `<!-- check TEXT: EXPRESSION -->` ties a figure quoted in the prose to
    the runs: TEXT must occur in the page's text since the last heading,
    and the Python EXPRESSION, evaluated in the scratch directory once
    every command has run, must give TEXT (str() of it). `<!-- let NAME =
    EXPRESSION -->` names a value for the expressions after it. Helpers:
    stats(PATH) (a stats.json or its directory), jload(PATH) (any JSON),
    rows(CSV, KEY=VALUE...) (a sweep's results.csv rows where each KEY,
    dots written as __, has VALUE), avg(CSV, COLUMN, KEY=VALUE...) (the
    mean of COLUMN over those rows), mean, fmin, fmax, range, round.
Counts that change with every commit (tests, columns) are not quoted by
the page, so not checked. Pictures are not compared (their numbers are:
the plots' --data files are checked like any other figure).
Exit status: 0 every command ran and every figure holds; 1 otherwise (each
difference printed, with the page's line); 2 bad arguments.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Host figures: masked in the page's text and in what the commands print.
HOST = [
    (re.compile(r"host\s+[0-9.]+ s, [0-9.]+ M events/s, peak RSS [0-9]+ MiB"),
     "host <time>, <rate>, peak RSS <rss>"),
    (re.compile(r" in [0-9.]+ s([:,])"), r" in <seconds>\1"),
    (re.compile(r"on [0-9]+ jobs?"), "on <jobs>"),
]


def mask(line):
    for pat, rep in HOST:
        line = pat.sub(rep, line)
    return line.rstrip()


class Page:
    """The page as a list of items: ('run', line, commands, skip),
    ('output', line, text lines), ('check', line, quoted, expression, prose)."""

    def __init__(self, path):
        self.path = path
        with open(path) as f:
            self.lines = f.read().split("\n")
        self.items = []
        self._parse()

    def _parse(self):
        lines, i = self.lines, 0
        prose_since = 0          # first line of the prose a check may quote from
        skip = None
        after_sh = False         # only blank lines since the last ```sh block
        while i < len(lines):
            line = lines[i]
            m = re.match(r"\s*<!-- check: skip (.*?) -->\s*$", line)
            if m:
                skip = m.group(1)
                i += 1
                continue
            m = re.match(r"\s*<!-- let (\w+) = (.*) -->\s*$", line)
            if m:
                self.items.append(("let", i + 1, m.group(1), m.group(2)))
                i += 1
                continue
            m = re.match(r"\s*<!-- check (.+?): (.*) -->\s*$", line)
            if m:
                prose = "\n".join(x for x in lines[prose_since:i] if not x.startswith("<!--"))
                self.items.append(("check", i + 1, m.group(1), m.group(2), prose))
                i += 1
                continue
            if line.startswith("#"):
                prose_since = i
            if line.strip() == "```sh":
                j = i + 1
                while lines[j].strip() != "```":
                    j += 1
                self.items.append(("run", i + 1, commands(lines[i + 1:j]), skip))
                skip, after_sh = None, True
                i = j + 1
                continue
            if after_sh and line.startswith("    ") and line.strip():
                j = i
                while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                    j += 1
                block = lines[i:j]
                while block and not block[-1].strip():
                    block.pop()
                self.items.append(("output", i + 1, [b[4:] for b in block]))
                after_sh = False
                i = j
                continue
            if line.strip():
                after_sh = False
            i += 1


def commands(block):
    """A shell block's commands: comments dropped, continuation lines joined."""
    out, cur = [], ""
    for raw in block:
        cur = cur + "\n" + raw.rstrip() if cur else raw.rstrip()
        if cur.endswith("\\") or open_quote(cur):
            continue
        text = strip_comment(cur)
        if text.strip():
            out.append(text.strip())
        cur = ""
    return out


def open_quote(cmd):
    """True if a quote opened in `cmd` is not closed yet (the command goes on)."""
    quote = None
    for ch in cmd:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
    return quote is not None


def strip_comment(cmd):
    """`cmd   # note` -> `cmd`, leaving # inside quotes alone."""
    quote = None
    for k, ch in enumerate(cmd):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or cmd[k - 1].isspace()):
            return cmd[:k].rstrip()
    return cmd


def scratch(fabricsim, keep):
    """A directory that looks like a built checkout: configs/, scripts/,
    docs/ (read-only links) and build/ holding the binary under test."""
    work = keep or tempfile.mkdtemp(prefix="tutorial-check-")
    os.makedirs(work, exist_ok=True)
    for d in ("configs", "scripts", "docs"):
        link = os.path.join(work, d)
        if not os.path.lexists(link):
            os.symlink(os.path.join(REPO, d), link)
    build = os.path.join(work, "build")
    os.makedirs(build, exist_ok=True)
    target = os.path.join(build, "fabricsim")
    if os.path.lexists(target):
        os.remove(target)
    os.symlink(os.path.abspath(fabricsim), target)
    return work


def helpers(work):
    def path(p):
        return os.path.join(work, p)

    def stats(p):
        p = path(p)
        if os.path.isdir(p):
            p = os.path.join(p, "stats.json")
        with open(p) as f:
            return json.load(f)

    def jload(p):
        with open(path(p)) as f:
            return json.load(f)

    def rows(p, **where):
        with open(path(p), newline="") as f:
            rs = list(csv.DictReader(f))
        for k, v in where.items():
            rs = [r for r in rs if r[k.replace("__", ".")] == str(v)]
        if not rs:
            raise ValueError(f"{p}: no row where {where}")
        return rs

    def mean(xs):
        xs = list(xs)
        return sum(xs) / len(xs)

    def avg(p, column, **where):
        return mean(float(r[column]) for r in rows(p, **where))

    safe = {f.__name__: f for f in (abs, all, any, enumerate, float, int, len, max, min, next,
                                    range, round, sorted, str, sum, zip)}
    return dict(safe, stats=stats, jload=jload, rows=rows, avg=avg, mean=mean, fmin=min,
                fmax=max)


def run_page(page, work, log):
    """Runs the commands; returns the differences found."""
    problems = []
    last_output = None
    env = dict(os.environ, COLUMNS="100")
    for item in page.items:
        if item[0] == "run":
            _, line, cmds, skip = item
            if skip:
                log(f"line {line}: skipped ({skip})")
                last_output = None
                continue
            printed = []
            for cmd in cmds:
                log(f"line {line}: $ {cmd}")
                r = subprocess.run(cmd, shell=True, cwd=work, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                printed += r.stdout.rstrip("\n").split("\n") if r.stdout.strip() else []
                if r.returncode != 0:
                    problems.append(f"{page.path}:{line}: `{cmd}` exited {r.returncode}:\n"
                                    + indent(r.stdout))
            last_output = printed
        elif item[0] == "output":
            _, line, expect = item
            if last_output is None:
                continue
            want = [mask(x) for x in expect]
            got = [mask(x) for x in last_output]
            if want != got:
                problems.append(f"{page.path}:{line}: the page shows\n{indent(expect)}\n"
                                f"  but the commands printed\n{indent(last_output)}")
            last_output = None
    return problems


def check_figures(page, work):
    problems, env = [], {"__builtins__": {}, **helpers(work)}
    n = 0
    for item in page.items:
        if item[0] == "let":
            _, line, name, expr = item
            try:
                env[name] = eval(expr, env)  # the page's own expressions
            except Exception as e:  # noqa: BLE001 (any failure is the page's problem)
                problems.append(f"{page.path}:{line}: let {name}: {type(e).__name__}: {e}")
            continue
        if item[0] != "check":
            continue
        _, line, quoted, expr, prose = item
        n += 1
        if " ".join(quoted.split()) not in " ".join(prose.split()):
            problems.append(f"{page.path}:{line}: the check quotes '{quoted}', which the text "
                            f"before it does not say")
        try:
            value = str(eval(expr, env))  # the page's own expressions
        except Exception as e:  # noqa: BLE001 (any failure is the page's problem)
            problems.append(f"{page.path}:{line}: {expr}: {type(e).__name__}: {e}")
            continue
        if value != quoted:
            problems.append(f"{page.path}:{line}: the page says '{quoted}', the run gives "
                            f"'{value}' ({expr})")
    return problems, n


def indent(text):
    lines = text if isinstance(text, list) else text.rstrip("\n").split("\n")
    return "\n".join("      " + x for x in lines)


def main():
    ap = argparse.ArgumentParser(prog="scripts/tutorial-check",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("The page"):])
    ap.add_argument("page", nargs="?", default=os.path.join(REPO, "docs", "tutorial.md"))
    ap.add_argument("--fabricsim", default=os.path.join(REPO, "build", "fabricsim"),
                    help="the simulator under test (default: build/fabricsim of this checkout)")
    ap.add_argument("--keep", metavar="DIR",
                    help="run in DIR and keep it (default: a temporary directory, removed "
                         "when every check holds)")
    ap.add_argument("--quiet", "-q", action="store_true", help="print only the differences")
    a = ap.parse_args()
    if not os.path.isfile(a.fabricsim) or not os.access(a.fabricsim, os.X_OK):
        print(f"tutorial-check: --fabricsim {a.fabricsim}: no such program (scripts/build "
              f"makes build/fabricsim)", file=sys.stderr)
        return 2
    if not os.path.isfile(a.page):
        print(f"tutorial-check: {a.page}: no such page", file=sys.stderr)
        return 2
    log = (lambda m: None) if a.quiet else (lambda m: print(f"tutorial-check: {m}", flush=True))
    page = Page(a.page)
    work = scratch(a.fabricsim, a.keep)
    problems = run_page(page, work, log)
    figures, n = check_figures(page, work)
    problems += figures
    runs = sum(1 for it in page.items if it[0] == "run" and not it[3])
    outputs = sum(1 for it in page.items if it[0] == "output")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"tutorial-check: {os.path.relpath(a.page, REPO)}: {runs} command blocks run, "
          f"{outputs} printed outputs and {n} quoted figures compared: "
          + ("all hold" if not problems else f"{len(problems)} differ"))
    if not problems and not a.keep:
        shutil.rmtree(work)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
