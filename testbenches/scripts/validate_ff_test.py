"""scripts/validate fast-forward's argument handling (CTest
Scripts.ValidateFastForwardArguments; its cases take minutes, so they run
from scripts/validate, not here): no output directory, an unknown option and
an unknown case are refused with exit 2, naming what is allowed.

usage: validate_ff_test.py SOURCE_DIR
"""
import os
import sys
import tempfile

import script_run

SRC = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="validate-ff-test-")
tool = os.path.join(SRC, "scripts", "lib", "validate_ff.py")

r = script_run.run(["/usr/bin/python3", tool], 2, cwd=SRC)
assert "usage: validate_ff.py OUT" in r.stderr
r = script_run.run(["/usr/bin/python3", tool, TMP, "--fast"], 2, cwd=SRC)
assert "unknown argument '--fast'" in r.stderr
r = script_run.run(["/usr/bin/python3", tool, TMP, "--case", "no such case"], 2, cwd=SRC)
assert "no case named" in r.stderr and "dgx-h100 ring" in r.stderr
print("ok")
