import re, sys, time, tempfile
from pathlib import Path
import numpy as np
from tests.fuzz.checks import check_program
source = Path(sys.argv[1]).read_text()
args = eval(re.search(r"^# ARGS = (.*)$", source, re.M).group(1), {"np": np})
t = time.time()
try:
    check_program(source, args, Path(tempfile.mkdtemp()), native=len(sys.argv) > 2)
    print("passed", time.time() - t)
except Exception as e:
    print("FAILED", time.time() - t, type(e).__name__, str(e)[:2000])
