"""Test of scripts/tutorial-check itself (CTest Scripts.TutorialCheckCatchesDrift):
a small page whose commands, printed output and quoted figures agree passes;
the same page with one printed number changed, one quoted figure changed,
a figure its prose does not say, or a failing command fails, naming the
page's line and both values.

usage: tutorial_check_test.py SOURCE_DIR FABRICSIM
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC, FABRICSIM = sys.argv[1], os.path.abspath(sys.argv[2])
CHECK = os.path.join(SRC, "scripts", "tutorial-check")
TMP = tempfile.mkdtemp(prefix="tutorial-check-test-")

RUN = ("build/fabricsim run configs/switch64.yaml --set switch.ports=8 --set sim.warmup_ns=500 "
       "--set sim.duration_ns=2000 --set traffic.load=0.5 --out out/small")


def page(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def check(path, expect):
    r = subprocess.run([CHECK, "--fabricsim", FABRICSIM, "--quiet", path], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == expect, f"{path}: exit {r.returncode}, expected {expect}\n{r.stdout}{r.stderr}"
    return r.stdout + r.stderr


# What the command prints, and its accepted throughput, from a run of our own
# in a directory laid out as the checker lays out its own.
ref = os.path.join(TMP, "ref")
os.makedirs(os.path.join(ref, "build"))
os.symlink(os.path.join(SRC, "configs"), os.path.join(ref, "configs"))
os.symlink(FABRICSIM, os.path.join(ref, "build", "fabricsim"))
out = subprocess.run(RUN, shell=True, cwd=ref, check=True, stdout=subprocess.PIPE, text=True).stdout
printed = out.rstrip("\n").split("\n")
with open(os.path.join(ref, "out", "small", "stats.json")) as f:
    acc = json.load(f)["throughput"]["accepted"]
quoted = f"{acc:.3f}"

good = ("# A page\n\n<!-- check: skip not here -->\n```sh\nfalse\n```\n\n```sh\n" + RUN +
        "   # a comment\n```\n\n" + "\n".join("    " + x for x in printed) +
        f"\n\nThe switch carries {quoted} of its load.\n"
        f"<!-- let s = stats('out/small') -->\n"
        f"<!-- check {quoted}: f\"{{s['throughput']['accepted']:.3f}}\" -->\n")
assert "check: skip" in good and "accepted" in printed[2], printed
msg = check(page("good.md", good), 0)
assert "1 command blocks run, 1 printed outputs and 1 quoted figures compared: all hold" in msg, msg

# A printed number moved: the line and both versions are shown.
line = printed[2]
moved = line.replace("accepted ", "accepted 9", 1)
bad = good.replace("    " + line, "    " + moved)
msg = check(page("printed.md", bad), 1)
assert "printed.md:" in msg and moved in msg and line in msg, msg

# A quoted figure moved.
wrong = f"{acc + 0.1:.3f}"
bad = good.replace(f"carries {quoted}", f"carries {wrong}").replace(f"check {quoted}:", f"check {wrong}:")
msg = check(page("quoted.md", bad), 1)
assert f"the page says '{wrong}', the run gives '{quoted}'" in msg, msg

# A check of a figure the prose does not say.
bad = good.replace(f"carries {quoted} of", "carries most of")
msg = check(page("unsaid.md", bad), 1)
assert f"the check quotes '{quoted}', which the text before it does not say" in msg, msg

# A command that fails.
bad = good.replace("<!-- check: skip not here -->\n", "")
msg = check(page("failing.md", bad), 1)
assert "`false` exited 1" in msg, msg

shutil.rmtree(TMP)
print("tutorial-check: all checks passed")
