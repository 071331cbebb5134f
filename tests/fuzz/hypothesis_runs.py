"""What the hypothesis fuzzers share: the budget of a long run (`FUZZ_EXAMPLES`,
`make fuzz`; unset, the suite's own small budget), the seed (`FUZZ_SEED`
repeats a run), a folder for the programs they generate, and, in a long run,
the failure found kept as a regression (tests/fuzz/test_regressions.py runs it)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

from tests.fuzz.checks import REGRESSIONS

LONG = os.environ.get("FUZZ_EXAMPLES")


def fuzz_seed(default: int) -> int:
    return int(os.environ.get("FUZZ_SEED", str(default)))


def work_folder(name: str) -> Path:
    """A fresh folder for the generated programs of the fuzzer `name`."""
    return Path(tempfile.mkdtemp(prefix=f"irad-{name}-fuzz-"))


def fuzz_settings(examples: int, share: int, **more) -> settings:
    """`examples` programs in the suite; in a long run a `share`-th of FUZZ_EXAMPLES."""
    return settings(max_examples=max(1, int(LONG) // share) if LONG else examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), **more)


def save_regression(name: str, fuzzer: str, source: str, args, error: BaseException) -> Path:
    """Keep a failing program as tests/fuzz/regressions/<name>_<hash>.py, its arguments in a comment."""
    path = REGRESSIONS / f"{name}_{hashlib.sha1(source.encode()).hexdigest()[:12]}.py"
    first = str(error).splitlines()[0] if str(error) else ""
    path.write_text(f"# A program the {fuzzer} fuzzer found failing: {type(error).__name__}: {first}\n"
                    f"# ARGS = {args!r}\n{source}")
    return path


class KeptFailure:
    """Runs checks; in a long run keeps the newest failure (shrinking replaces it
    by smaller ones) as a regression, saved by `save(source, args, error)`."""

    def __init__(self, save) -> None:
        self.save, self.saved = save, []

    def run(self, check, source, args, *rest) -> None:
        try:
            check(source, args, *rest)
        except BaseException as error:
            if LONG:
                for old in self.saved:
                    old.unlink(missing_ok=True)
                self.saved[:] = [self.save(source, args, error)]
            raise
