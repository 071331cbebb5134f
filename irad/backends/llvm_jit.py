"""Just-in-time compilation of textual LLVM IR with llvmlite.

llvmlite (PyPI) bundles its own LLVM, version 22 for llvmlite 0.50, the same
major version as the `mlir-translate` that writes the IR, so the textual IR
parses as is. One `JitModule` owns one MCJIT engine; the addresses it hands out
stay valid while the module lives.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from collections.abc import Callable, Sequence

from irad.backends import llvm_build, object_cache, tiers, vector_math
from irad.errors import BackendError

LLVMLITE_HINT = "pip install 'irad[native]' (llvmlite >= 0.50)"
LLVM_MAJOR = 22
# LLVM's pipeline level. -O3 ran a 6-step unrolled array LSTM gradient about
# 10% faster than -O2 but took 8 s instead of 2 s to compile, so -O2 is the
# default; IRAD_NATIVE_OPT_LEVEL (0-3) chooses another.
OPT_LEVEL = 2


def _opt_level() -> int:
    value = os.environ.get("IRAD_NATIVE_OPT_LEVEL", str(OPT_LEVEL))
    if value not in ("0", "1", "2", "3"):
        raise BackendError(f"IRAD_NATIVE_OPT_LEVEL must be 0, 1, 2 or 3, not {value!r}")
    return int(value)


@functools.cache
def _llvm():
    try:
        import llvmlite.binding as llvm
    except ImportError as exc:
        raise BackendError(f"backend='native' needs llvmlite, which is not importable: {exc}\n  hint: {LLVMLITE_HINT}") from None
    if llvm.llvm_version_info[0] < LLVM_MAJOR:
        version = ".".join(map(str, llvm.llvm_version_info))
        raise BackendError(
            f"backend='native' needs llvmlite built on LLVM {LLVM_MAJOR} or later, to read the IR "
            f"mlir-translate 22 writes; this llvmlite has LLVM {version}\n  hint: {LLVMLITE_HINT}"
        )
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    # Generated code calls libc (malloc, free) and libm (sin, erf, ...). The JIT
    # resolves symbols in this process; libm is made sure of by name.
    libm = ctypes.util.find_library("m")
    if libm:
        llvm.load_library_permanently(libm)
    return llvm


def llvm_version() -> str:
    return ".".join(map(str, _llvm().llvm_version_info))


def _llvmlite_version() -> str:
    import llvmlite

    return llvmlite.__version__


@functools.cache
def _host() -> tuple[str, str, dict[str, bool]]:
    """This CPU's name and features, for LLVM (flattened) and as a dict. The
    code runs where it is compiled, so it may use all of them: without them
    LLVM targets a generic x86-64 (SSE2), and loops vectorise two doubles wide
    where AVX2 takes four."""
    llvm = _llvm()
    features = llvm.get_host_cpu_features()
    return llvm.get_host_cpu_name(), features.flatten(), dict(features)


@functools.cache
def _load_library(path: str) -> None:
    _llvm().load_library_permanently(path)


def _check_externals(llvm, module, where: str) -> None:
    """An unresolved function would crash the process when called: refuse it now."""
    missing = [
        f.name
        for f in module.functions
        if f.is_declaration and not f.name.startswith("llvm.") and not llvm.address_of_symbol(f.name)
    ]
    if missing:
        raise BackendError(
            f"the machine code of {where} calls {', '.join(missing)}, which this process does not "
            "provide\n  hint: the MLIR runner utilities (libmlir_c_runner_utils, installed with "
            "mlir-22-tools) may be missing beside mlir-opt"
        )


class JitModule:
    """LLVM IR text, optimised (-O2 by default) and compiled to machine code in
    this process, or machine code loaded from the cache (object_cache.py) that
    another process compiled from the same IR: then `cached` holds it. With
    tiered compilation (tiers.py) and `exported` functions, a module not in
    the cache first runs at -O0 while its -O2 code compiles in the background:
    `tiered` is True then, and `wait_optimised()` waits for the -O2 code."""

    def __init__(
        self,
        llvm_ir: str,
        *,
        libraries: Sequence[str] = (),
        linked: Sequence[str] = (),
        where: str = "the lowered module",
        extend: Callable[[object], str] | None = None,
        determined_by: Sequence[str] | None = None,
        exported: Sequence[str] = (),
    ):
        """`linked`: more LLVM IR modules, linked into this one before it is
        optimised (definitions of functions it declares: irad.linalg's LAPACK
        calls). `extend`, given the parsed module, returns more LLVM IR to link
        in too (the native backend's runtime). `determined_by`: texts that
        determine `llvm_ir` and `linked` (what the tools that wrote them were
        given), for the cache's key when the IR itself varies from run to run;
        by default the IR is its own key. `exported`: the functions Python
        calls (through `address`), which tiering can switch to -O2 code."""
        llvm = _llvm()
        for library in libraries:  # loaded once per process; symbols resolve from them
            _load_library(library)
        level = _opt_level()
        cpu, features, feature_map = _host()
        # loops of exp, log, tanh call a vector math library (vector_math.py)
        llvm_ir = vector_math.vectorisable(llvm_ir, feature_map, llvm.add_symbol)
        texts = [llvm_ir, *linked] if determined_by is None else ["determined by", *determined_by]
        sources = [llvm_ir, *linked]  # what the module is compiled from
        machine = llvm_build.target_machine(llvm, cpu, features, level)
        try:
            module = llvm_build.link(llvm, sources, machine)
            if extend is not None:
                sources.append(extend(module))
                texts.append(sources[-1])
                module.link_in(llvm_build.parse(llvm, sources[-1], machine))
            module.verify()
        except RuntimeError as exc:
            raise BackendError(f"llvmlite rejected the LLVM IR of {where}:\n{exc}") from None
        _check_externals(llvm, module, where)
        # machine code another process compiled from the same IR (object_cache.py)
        self._cache = object_cache.directory()
        target = (machine.triple, cpu, features, str(level), vector_math.cache_key(), llvm_version(), _llvmlite_version())
        self._name = object_cache.key(texts, target)
        self.cached = object_cache.load(self._cache, self._name)
        self._level = level
        self._module = module
        self._sources = sources
        self._keep: tuple = (machine,)
        self._exported = {name: name for name in exported}
        self.upgrade: tiers.Upgrade | None = None
        self.tiered = self.cached is None and bool(exported) and level > tiers.TIER0_LEVEL and tiers.enabled()
        if self.tiered:
            # tier 0: the same module at -O0, its exported functions called through a global
            machine = llvm_build.target_machine(llvm, cpu, features, tiers.TIER0_LEVEL)
            self._keep = (machine,)
            dispatch = tiers.dispatch_ir({name: signature(module, name) for name in exported})
            module.link_in(llvm_build.parse(llvm, dispatch, machine))
            self._exported = {name: name + tiers.CALL_SUFFIX for name in exported}
            self._engine = llvm.create_mcjit_compiler(module, machine)
            self._engine.finalize_object()
            self.upgrade = tiers.Upgrade(sources, cpu, features, level, (self._cache, self._name), self._load_optimised)
            return
        if self.cached is None:
            self._keep += llvm_build.optimise(llvm, module, machine, level)
        self._engine = llvm.create_mcjit_compiler(module, machine)
        self._engine.set_object_cache(
            lambda _, code: object_cache.store(self._cache, self._name, bytes(code)), lambda _: self.cached
        )
        self._engine.finalize_object()

    def _load_optimised(self, code: bytes) -> None:
        """Load the -O2 object code of a tiered module (the child stored it in
        the cache) and switch its calls to it."""
        llvm = _llvm()
        cpu, features, _ = _host()
        machine = llvm_build.target_machine(llvm, cpu, features, self._level)
        engine = llvm.create_mcjit_compiler(llvm_build.parse(llvm, "", machine), machine)
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        engine.finalize_object()
        addresses = {}
        for name in self._exported:
            addresses[name] = engine.get_function_address(name)
            if not addresses[name]:
                raise BackendError(f"the -O2 object code has no function {name!r}")
        for name, address in addresses.items():
            ctypes.c_void_p.from_address(self._engine.get_global_value_address(name + tiers.SLOT_SUFFIX)).value = address
        self._optimised = (machine, engine)

    def wait_optimised(self, timeout: float | None = None) -> bool:
        """Wait until calls run the -O2 code (at once if they already do);
        False if its background compile failed (calls keep running tier 0)."""
        return self.upgrade is None or self.upgrade.wait(timeout)

    def optimised_ir(self) -> str:
        """The LLVM IR after optimisation at the chosen level (for inspection
        and tests). Code loaded from the cache was compiled elsewhere, and a
        tiered module's -O2 code in the background: its IR is optimised here,
        on a copy, when asked for."""
        if self.cached is None and not self.tiered:
            return str(self._module)
        llvm = _llvm()
        cpu, features, _ = _host()
        machine = llvm_build.target_machine(llvm, cpu, features, self._level)
        copy = llvm_build.link(llvm, self._sources, machine)
        llvm_build.optimise(llvm, copy, machine, self._level)
        return str(copy)

    @staticmethod
    def check_llvmlite() -> None:
        """Raise BackendError saying what to install if llvmlite cannot be used."""
        _llvm()

    def address(self, symbol: str) -> int:
        """The address Python calls function `symbol` at (an exported one:
        through tiering's indirection, if the module is tiered)."""
        address = self._engine.get_function_address(self._exported.get(symbol, symbol))
        if not address:
            raise BackendError(f"the native module has no function {symbol!r}")
        return address


def signature(module, symbol: str) -> tuple[str, list[str]]:
    """The (result, parameter) LLVM types of a function of a parsed module."""
    t = module.get_function(symbol).global_value_type
    return str(t.get_function_return()), [str(p) for p in t.get_function_parameters()]
