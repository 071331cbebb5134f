"""A long fuzzing campaign that keeps going past failures and counts them.

    .venv/bin/python -m tests.fuzz.campaign --programs 2000 --backend python --seed 1
    .venv/bin/python -m tests.fuzz.campaign --programs 300 --backend native --seed 2 --minutes 30
    .venv/bin/python -m tests.fuzz.campaign --programs 1000 --vmap --seed 3

Draws `--programs` programs from the seed (tests/fuzz/generator.py), checks each
as tests/fuzz/checks.py does (on the native or IREE backend too with `--backend
native` or `--backend iree`), stopping early after `--minutes`, and prints one line per kind of failure with how often it occurred.
The smallest failing program of each kind is written to `--out` (a folder, by
default a fresh temporary one) as a case file in the format of
tests/fuzz/regressions/, ready to reduce by hand and keep there. Unlike `make
fuzz` (pytest + hypothesis, which stops at the first failure and shrinks it),
it does not shrink: it is for measuring how many programs pass. With `--vmap`
each program is checked under a drawn batching by tests/fuzz/vmap_checks.py
instead (vmap and its compositions against a loop over the batch), and the
checks per composition are counted.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import irad.config
from irad import pipeline
from irad.backends.native.mlir_tools import find_tool, mlir_opt_parses
from tests import mlir_roundtrip
from tests.fuzz.checks import arguments_source, check_program, failure_kind
from tests.fuzz.generator import arguments, programs
from tests.fuzz.vmap_checks import batchings, check_vmap


class _Timeout(Exception):
    pass


class _OutOfTime(BaseException):
    """The campaign's time budget is spent (ends the run, not counted)."""


TIMED_OUT = "the program took longer than the time limit"


def _alarm(signum, frame):
    # Raised wherever Python runs next, which may be a ctypes callback (llvmlite's
    # object-cache notification while the native code compiles): there ctypes
    # prints the exception and drops it. So the alarm rings again a second later
    # until the program's check ends (run() clears it), and a program that ends
    # after its time anyway is counted as timed out (run() measures it).
    signal.alarm(1)
    raise _Timeout(TIMED_OUT)


# As in the suite (tests/conftest.py): every module a pipeline builds is verified,
# and what it leaves after differentiating is parsed by upstream mlir-opt.
irad.config.update("verify", True)
_EMITTED: list[str] = []


def _record(previous, module, last: bool) -> None:
    if mlir_roundtrip.wanted(previous, module, last):
        _EMITTED.append(str(module))


def _check(source, args, work, compiled, batching=None, checked: Counter | None = None) -> str | None:
    """The kind of refusal accepted (checks.refused_where_allowed, or with
    `batching` vmap_checks.refusal_kind), if any; `checked` counts the vmap
    compositions checked."""
    _EMITTED.clear()
    if batching is None:
        refused = check_program(source, args, work, compiled)
        refused = None if refused is None else failure_kind(refused)
    else:
        outcome = check_vmap(source, args, batching, work, compiled[0] if compiled else "python")
        checked[outcome.checked + (" (refused)" if outcome.refused else "")] += 1
        refused = outcome.refused
    if _EMITTED and find_tool("mlir-opt") is not None:
        ok, diagnostics = mlir_opt_parses("\n// -----\n".join(_EMITTED), split=True)
        if not ok:
            raise AssertionError(f"mlir-opt: {diagnostics.strip().splitlines()[0]}")
    return refused


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--backend", choices=["python", "native", "iree"], default="python")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--timeout", type=int, default=120, help="seconds per program")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    parser.add_argument("--plain", action="store_true",
                        help="only float results of flat arguments by value_and_grad (no other modes)")
    parser.add_argument("--int-arrays", action="store_true",
                        help="int-array statements drawn often: a third of all (generator.Generator._int_array)")
    parser.add_argument("--aliases", action="store_true",
                        help="helpers' results that may be their argument kept, then it written "
                             "(generator.Generator._alias_block)")
    parser.add_argument("--lists", action="store_true", help="lists grown in loops (generator.Generator._grow_list)")
    parser.add_argument("--guards", action="store_true",
                        help="ops valid only behind their guard (generator.Generator._guarded)")
    parser.add_argument("--vmap", action="store_true",
                        help="check irad.vmap and its compositions under drawn batchings (tests/fuzz/vmap_checks.py)")
    opts = parser.parse_args(argv)
    out = opts.out or Path(tempfile.mkdtemp(prefix="irad-campaign-"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="irad-campaign-work-"))
    kinds: Counter[str] = Counter()
    refusals: Counter[str] = Counter()  # accepted: at a line the generator marked MAY_REFUSE
    checked: Counter[str] = Counter()  # with --vmap: the compositions checked
    smallest: dict[str, int] = {}
    ran = [0]
    started = time.time()
    signal.signal(signal.SIGALRM, _alarm)
    pipeline.AFTER_PASS.append(_record)

    @seed(opts.seed)
    @settings(max_examples=opts.programs, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(source=programs(with_modes=not opts.plain, int_arrays=opts.int_arrays, aliases=opts.aliases,
                           lists=opts.lists, guards=opts.guards), args=arguments(),
           data=st.data())
    def run(source, args, data):
        batching = data.draw(batchings(source)) if opts.vmap else None
        if opts.minutes is not None and time.time() - started > 60 * opts.minutes:
            raise _OutOfTime
        ran[0] += 1
        signal.alarm(opts.timeout)
        began = time.monotonic()
        try:
            refused = _check(source, args, work, () if opts.backend == "python" else (opts.backend,), batching, checked)
            if refused is not None:
                refusals[refused] += 1
            if time.monotonic() - began > opts.timeout:
                raise _Timeout(TIMED_OUT)  # the alarm's exception was dropped (see _alarm)
        except Exception as error:  # counted, not raised: the campaign goes on
            signal.alarm(0)  # no second ring (see _alarm) while it is counted
            kind = failure_kind(error)
            kinds[kind] += 1
            if kind not in smallest or len(source) < smallest[kind]:
                smallest[kind] = len(source)
                name = f"case_{abs(hash(kind)) % 10**8:08d}.py"
                first = str(error).splitlines()[0] if str(error) else ""
                batched = f"# BATCHING = {batching!r}\n" if batching is not None else ""
                (out / name).write_text(f"# {type(error).__name__}: {first}\n# KIND = {kind}\n"
                                        f"# ARGS = {arguments_source(args)}\n{batched}{source}")
        finally:
            signal.alarm(0)
        if ran[0] % 100 == 0:
            print(f"{ran[0]} programs, {sum(kinds.values())} failures, {time.time() - started:.0f} s",
                  flush=True)

    try:
        run()
    except _OutOfTime:
        pass
    failures = sum(kinds.values())
    print(f"backend {opts.backend}, seed {opts.seed}: {ran[0]} programs, {failures} failed, "
          f"{ran[0] - failures} passed ({time.time() - started:.0f} s); smallest cases in {out}")
    for kind, count in kinds.most_common():
        print(f"{count:6d}  {kind}")
    for composition, count in sorted(checked.items()):
        print(f"{count:6d}  checked: {composition}")
    print(f"{sum(refusals.values())} refused " + ("with a hint:" if opts.vmap else "where the generator allows it:"))
    for kind, count in refusals.most_common():
        print(f"{count:6d}  {kind}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
