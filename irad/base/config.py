"""irad's switches, each declared once (the public door is `irad.config`).

A switch has a name (`native_opt_level`), an environment variable
(IRAD_NATIVE_OPT_LEVEL), a type (bool, int, str, or a choice of strings), a
default, a help text, and whether it enters the compile cache key: compiled
code is cached per the values of those switches (irad/compiled.py), so that
changing one recompiles. docs/configuration.md lists them all;
tests/test_config.py checks the page against SWITCHES, and that no other
module reads an IRAD_* variable.

A switch's value is what `update(name, value)` set in this process, else its
environment variable, read each time the switch is read (most are read when
a module is compiled), else its default. One rule for every boolean: 0, 1,
false or true, in any case. A value outside a switch's type is a ConfigError
naming the variable (or the switch) and what it may be.
"""

from __future__ import annotations

import contextlib
import difflib
import numbers
import os
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from irad.base.errors import ConfigError, IradWarning

DOCS = "docs/configuration.md"
_FALSE, _TRUE = ("0", "false"), ("1", "true")


@dataclass(frozen=True)
class Switch:
    """One switch. `kind`: "bool", "int" (a whole number from `least` up to
    `most`), "str" (any text, or what `form` describes and `check` accepts) or
    "choice" (one of `choices`)."""

    name: str
    variable: str
    kind: str
    default: object
    help: str
    cache_key: bool
    choices: tuple[str, ...] = ()
    least: int = 0
    most: int | None = None
    form: str = ""
    check: Callable[[str], bool] | None = None

    def allowed(self) -> str:
        """What a value may be, in words."""
        if self.kind == "bool":
            return "0 or 1 (or false or true, in any case)"
        if self.kind == "int":
            return f"a whole number from {self.least} to {self.most}" if self.most is not None else (
                f"a whole number, {self.least} or more")
        if self.kind == "choice":
            return "one of " + (" or ".join(self.choices) if len(self.choices) == 2 else
                                ", ".join(self.choices[:-1]) + " or " + self.choices[-1])
        return self.form or "any text"

    def parse(self, text: str) -> object:
        """The value of the environment variable's `text`."""
        if self.kind == "bool":
            if text.strip().lower() in _FALSE + _TRUE:
                return text.strip().lower() in _TRUE
        elif self.kind == "int":
            if re.fullmatch(r"\s*[0-9]+\s*", text) and self._in_range(int(text)):
                return int(text)
        elif self.kind == "choice":
            if text in self.choices:
                return text
        elif self.check is None or self.check(text):
            return text
        raise ConfigError(f"{self.variable} must be {self.allowed()}, not {text!r}\n  hint: {self._hint()}")

    def validate(self, value: object) -> object:
        """`value` as given to update(), checked."""
        if self.kind == "bool":
            ok = isinstance(value, bool)
        elif self.kind == "int":
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and self._in_range(int(value))
            value = int(value) if ok else value
        elif self.kind == "choice":
            ok = value in self.choices
        else:
            ok = isinstance(value, str) and (self.check is None or self.check(value))
        if not ok:
            allowed = "True or False" if self.kind == "bool" else self.allowed()
            raise ConfigError(f"the switch {self.name} must be {allowed}, not {value!r}\n  hint: {self._hint()}")
        return value

    def _in_range(self, number: int) -> bool:
        return number >= self.least and (self.most is None or number <= self.most)

    def _hint(self) -> str:
        return f"{self.name} ({self.variable}): {self.help} (see {DOCS})"


def _llvm_features(text: str) -> bool:
    """Comma-separated LLVM target features, each +name or -name (or none)."""
    return all(len(item) > 1 and item[0] in "+-" for item in (i.strip() for i in text.split(",")) if item)


_DECLARED = (
    # ---- every backend
    Switch("backend", "IRAD_BACKEND", "choice", "python",
           "the backend of a transformation created without backend=",
           cache_key=False, choices=("python", "native", "iree")),
    Switch("verify", "IRAD_VERIFY", "bool", False,
           "verify the module every pipeline leaves (the tests turn it on; a whole-module verify is a tenth of "
           "compile time on large call trees)",
           cache_key=False),
    Switch("log_compile", "IRAD_LOG_COMPILE", "bool", False,
           "log each compile stage's time (lowering, differentiation, optimisation, mlir-opt and mlir-translate, "
           "LLVM) to the `irad` logger at INFO level, printed to stderr if no handler is configured",
           cache_key=False),
    # ---- the native backend: finding the tools and libraries
    Switch("mlir_opt", "IRAD_MLIR_OPT", "str", "",
           "the mlir-opt to run (empty: the one on PATH, else /usr/lib/llvm-22/bin's)",
           cache_key=False, form="a path to mlir-opt 22, or empty"),
    Switch("mlir_translate", "IRAD_MLIR_TRANSLATE", "str", "",
           "the mlir-translate to run (empty: the one on PATH, else /usr/lib/llvm-22/bin's)",
           cache_key=False, form="a path to mlir-translate 22, or empty"),
    Switch("lapack_library", "IRAD_LAPACK_LIBRARY", "str", "",
           "a shared library with LAPACKE (and CBLAS) for native code, tried first; read once per process, "
           "when native code first needs LAPACK or BLAS",
           cache_key=False, form="a path to a shared library, or empty"),
    Switch("native_cache", "IRAD_NATIVE_CACHE", "str", "",
           "the directory of the native object cache (empty: $XDG_CACHE_HOME/irad/native, else "
           "~/.cache/irad/native); 0 turns the cache off",
           cache_key=False, form="a directory, 0, or empty"),
    Switch("keep_failed_modules", "IRAD_KEEP_FAILED_MODULES", "bool", False,
           "keep a module mlir-opt or mlir-translate rejects in a temporary file named in the error, and have "
           "mlir-opt verify after each pass (debugging)",
           cache_key=False),
    # ---- the native backend: what code is generated
    Switch("native_opt_level", "IRAD_NATIVE_OPT_LEVEL", "int", 2,
           "LLVM's optimisation level for native code (-O3 ran an unrolled LSTM gradient 10% faster but took "
           "4x as long to compile)",
           cache_key=True, most=3),
    Switch("native_tiered", "IRAD_NATIVE_TIERED", "bool", True,
           "tiered compilation: the first call runs code compiled at -O0 while the optimised code compiles "
           "in the background (the same results)",
           cache_key=False),
    Switch("native_tuning", "IRAD_NATIVE_TUNING", "str", "+prefer-no-gather,+prefer-no-scatter",
           "LLVM tuning features added to the host CPU's (x86-64; empty adds none): no gathers or scatters by "
           "default (they made the GMM gradient 2.5x slower on a Zen 4)",
           cache_key=True, form="LLVM target features, each +name or -name, separated by commas (empty adds none)",
           check=_llvm_features),
    Switch("native_vector_math", "IRAD_NATIVE_VECTOR_MATH", "choice", "libmvec",
           "the vector math library loops call for exp, log and tanh; 0 keeps libm's scalar functions "
           "(results equal libm's to the bit)",
           cache_key=True, choices=("libmvec", "0")),
    Switch("native_keep_shared", "IRAD_NATIVE_KEEP_SHARED", "int", 24,
           "a callee called from several places whose body has at least this many ops stays a function in "
           "native code, compiled once (irad-inline's keep-shared); 0 inlines all",
           cache_key=True),
    Switch("native_stack_kb", "IRAD_NATIVE_STACK_KB", "int", 256,
           "kilobytes that small temporaries moved to the stack may add to any chain of calls; 0 keeps every "
           "buffer on the heap",
           cache_key=True),
    Switch("native_verify_memrefs", "IRAD_NATIVE_VERIFY_MEMREFS", "bool", False,
           "check every memref access at run time (MLIR's runtime op verification; a failed check aborts the "
           "process; make memcheck turns it on)",
           cache_key=True),
    Switch("native_blas_min_flops", "IRAD_NATIVE_BLAS_MIN_FLOPS", "int", 4096,
           "a matrix product of fewer multiply-adds stays loops instead of a BLAS call (the crossover measured "
           "by bench/matmul_lowering.py)",
           cache_key=True),
    Switch("native_blas_threads", "IRAD_NATIVE_BLAS_THREADS", "int", 1,
           "the threads of irad's OpenBLAS (0: OpenBLAS's own choice); set when native code first needs BLAS, "
           "and products are split (native_split_products) only with 1",
           cache_key=True),
    Switch("native_split_products", "IRAD_NATIVE_SPLIT_PRODUCTS", "bool", True,
           "compute large matrix products in two chunks, on the calling thread and a helper thread (with "
           "BLAS on one thread and two cores or more)",
           cache_key=True),
    Switch("native_split_min_flops", "IRAD_NATIVE_SPLIT_MIN_FLOPS", "int", 1 << 22,
           "the fewest multiply-adds of a product that is split (native_split_products)",
           cache_key=True),
    Switch("native_split_loops", "IRAD_NATIVE_SPLIT_LOOPS", "bool", True,
           "run the rows of large loop nests on the calling thread and the helper thread (with two cores or "
           "more and a BLAS library)",
           cache_key=True),
    Switch("native_split_min_work", "IRAD_NATIVE_SPLIT_MIN_WORK", "int", 1 << 19,
           "the least work (elements written, more for math calls) of a loop nest that is split "
           "(native_split_loops)",
           cache_key=True),
    Switch("native_buffer_cache_mb", "IRAD_NATIVE_BUFFER_CACHE_MB", "int", 256,
           "megabytes of freed large buffers the native runtime keeps to hand out again; 0 turns the cache off; "
           "read when the process first compiles native code",
           cache_key=False),
    # ---- the IREE backend
    Switch("iree_flags", "IRAD_IREE_FLAGS", "str", "",
           "flags added to iree-compile's, separated by spaces (e.g. --iree-cuda-target=sm_80)",
           cache_key=True, form="iree-compile flags separated by spaces"),
)
SWITCHES: dict[str, Switch] = {s.name: s for s in _DECLARED}
_KEYED = tuple(s for s in _DECLARED if s.cache_key)
_KEYED_NAMES = tuple(os.environ.encodekey(s.variable) for s in _KEYED) if hasattr(os.environ, "encodekey") else ()

_updated: dict[str, object] = {}  # name -> value set in this process
_generation = 0  # bumped by every update() and reset(): cache_key() is read again
_key_memo: tuple = (None, ())  # ((variables' texts, generation), cache_key())


def switch(name: str) -> Switch:
    """The declaration of `name`; ConfigError if there is no such switch."""
    found = SWITCHES.get(name)
    if found is None:
        close = difflib.get_close_matches(name, SWITCHES, n=3)
        hint = f"did you mean {' or '.join(close)}?" if close else f"the switches are listed in {DOCS}"
        raise ConfigError(f"irad.config has no switch {name!r}\n  hint: {hint}")
    return found


def read(name: str) -> object:
    """The switch's value: set in process, else from its environment variable, else its default."""
    if name in _updated:
        return _updated[name]
    declared = switch(name)
    text = os.environ.get(declared.variable)
    return declared.default if text is None else declared.parse(text)


def default(name: str) -> object:
    return switch(name).default


def update(name: str, value: object) -> None:
    """Set the switch in this process: it wins over the environment variable."""
    global _generation
    _updated[name] = switch(name).validate(value)
    _generation += 1


def reset(*names: str) -> None:
    """Forget what update() set for `names` (all switches if none): the
    environment variables and defaults decide again."""
    global _generation
    for name in names or tuple(_updated):
        switch(name)
        _updated.pop(name, None)
    _generation += 1


@contextlib.contextmanager
def overriding(**values: object) -> Iterator[None]:
    """The switches set to `values` inside the block, as they were after it:
    `with irad.config.overriding(native_opt_level=0): ...`."""
    before = {name: _updated[name] for name in values if name in _updated}
    for name in values:
        switch(name)  # every name checked before anything changes
    try:
        for name, value in values.items():
            update(name, value)
        yield
    finally:
        reset(*(name for name in values if name not in before))
        for name, value in before.items():
            update(name, value)


def cache_key() -> tuple:
    """The values of the switches that enter the compile cache key."""
    global _key_memo
    # Each call of vjp or jvp looks its compiled code up under this key. An
    # unset variable costs os.environ.get 0.8 µs (a KeyError raised and
    # caught), a dozen 10 µs, twice a scalar vjp; the dict os.environ keeps
    # (CPython's, by encoded name) answers in 40 ns. Parsing is redone only
    # when a variable or an update changed.
    data = getattr(os.environ, "_data", None)
    texts = tuple(map(data.get, _KEYED_NAMES)) if data is not None else tuple(
        map(os.environ.get, (s.variable for s in _KEYED)))
    if _key_memo[0] != (texts, _generation):
        _key_memo = ((texts, _generation), tuple(read(s.name) for s in _KEYED))
    return _key_memo[1]


def unknown_variables() -> list[str]:
    """The IRAD_* environment variables that name no switch (a typo, or a
    switch that was retired: docs/configuration.md lists those)."""
    known = {s.variable for s in _DECLARED}
    return sorted(v for v in os.environ if v.startswith("IRAD_") and v not in known)


def _warn_about_unknown_variables() -> None:
    unknown = unknown_variables()
    if unknown:
        warnings.warn(f"irad has no switch for the environment variable{'s' if len(unknown) > 1 else ''} "
                      f"{', '.join(unknown)}, which {'are' if len(unknown) > 1 else 'is'} ignored (the switches "
                      f"and those retired are listed in {DOCS})", IradWarning, stacklevel=2)


_warn_about_unknown_variables()


def __getattr__(name: str) -> object:
    """`irad.config.native_opt_level`: read("native_opt_level")."""
    if name in SWITCHES:
        return read(name)
    raise AttributeError(f"irad.config has no switch or attribute {name!r}")


__all__ = ["SWITCHES", "ConfigError", "Switch", "cache_key", "default", "overriding", "read",
           "reset", "switch", "unknown_variables", "update"]
