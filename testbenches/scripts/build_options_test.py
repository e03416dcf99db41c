"""The profile-guided build's pieces (CTest Scripts.BuildOptions;
docs/performance.md): the training cases of scripts/lib/pgo-train are valid
runs of this build's fabricsim; stats.json says how the binary was built;
bad build options stop at once with a message naming the option, the value
and what is allowed (scripts/build, and the CMake configure step).

usage: build_options_test.py SOURCE_DIR FABRICSIM
"""
import json
import os
import shutil
import sys
import tempfile

import script_run

SRC, FABRICSIM = sys.argv[1], os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="build-options-test-")


def run(cmd, expect=0):
    return script_run.run(cmd, expect, cwd=SRC, tail=2000)


def configure_fails(*defs, says):
    d = tempfile.mkdtemp(dir=TMP)
    r = run(["cmake", "-S", SRC, "-B", d, "-G", "Ninja", *defs], expect=1)
    text = " ".join(r.stderr.split())  # CMake wraps its messages
    for s in says:
        assert s in text, f"configure error should say {s!r}"


try:
    # Every training case runs (a renamed key or config would otherwise break
    # scripts/build --pgo only when someone next asks for it).
    run([os.path.join(SRC, "scripts", "lib", "pgo-train"), FABRICSIM])
    run([os.path.join(SRC, "scripts", "lib", "pgo-train")], expect=1)

    out = os.path.join(TMP, "run")
    run([FABRICSIM, "run", os.path.join(SRC, "configs", "switch64.yaml"), "--set",
         "sim.duration_ns=500", "--quiet", "--out", out])
    with open(os.path.join(out, "stats.json")) as f:
        build = json.load(f)["host"]["build"]
    assert build.split(",")[0] in ("Release", "RelWithDebInfo", "Debug", "MinSizeRel"), build

    r = run([os.path.join(SRC, "scripts", "build"), "--pgo=yes"], expect=2)
    assert "--pgo=yes" in r.stderr and "--no-pgo" in r.stderr

    configure_fails("-DFABRICSIM_PGO=yes", says=["FABRICSIM_PGO='yes'", "OFF, GENERATE, USE"])
    empty = tempfile.mkdtemp(dir=TMP)
    configure_fails("-DFABRICSIM_PGO=USE", f"-DFABRICSIM_PGO_DIR={empty}",
                    says=["FABRICSIM_PGO_DIR", empty, "scripts/build --pgo"])
    configure_fails("-DFABRICSIM_PGO=GENERATE", f"-DFABRICSIM_PGO_DIR={empty}",
                    "-DFABRICSIM_SANITIZE=ON", says=["FABRICSIM_SANITIZE=ON", "choose one"])
    print("build options: all checks passed")
finally:
    shutil.rmtree(TMP, ignore_errors=True)
