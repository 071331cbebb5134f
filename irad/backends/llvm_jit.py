"""Just-in-time compilation of textual LLVM IR with llvmlite.

llvmlite (PyPI) bundles its own LLVM, version 22 for llvmlite 0.50, the same
major version as the `mlir-translate` that writes the IR, so the textual IR
parses as is. One `JitModule` owns one MCJIT engine; the addresses it hands out
stay valid while the module lives.
"""

from __future__ import annotations

import ctypes.util
import functools
import os
from collections.abc import Callable, Sequence

from irad.backends import object_cache, vector_math
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


def _for_host(module, machine):
    """`module` laid out as this machine's C ABI lays out data. mlir-translate
    emits no data layout, and LLVM's default one aligns i64 to 4 bytes: a
    result struct `{i64, i32, i64}` would then put its last field at offset
    12 where C (and ctypes) reads it at 16."""
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    return module


class JitModule:
    """LLVM IR text, optimised (-O2 by default) and compiled to machine code in
    this process, or machine code loaded from the cache (object_cache.py) that
    another process compiled from the same IR: then `cached` holds it."""

    def __init__(
        self,
        llvm_ir: str,
        *,
        libraries: Sequence[str] = (),
        linked: Sequence[str] = (),
        where: str = "the lowered module",
        extend: Callable[[object], str] | None = None,
        determined_by: Sequence[str] | None = None,
    ):
        """`linked`: more LLVM IR modules, linked into this one before it is
        optimised (definitions of functions it declares: irad.linalg's LAPACK
        calls). `extend`, given the parsed module, returns more LLVM IR to link
        in too (the native backend's runtime). `determined_by`: texts that
        determine `llvm_ir` and `linked` (what the tools that wrote them were
        given), for the cache's key when the IR itself varies from run to run;
        by default the IR is its own key."""
        llvm = _llvm()
        for library in libraries:  # loaded once per process; symbols resolve from them
            _load_library(library)
        # One target machine per module: llvmlite's pass builder and engine
        # refer to it, and sharing one across modules crashed after a dispose.
        level = _opt_level()
        cpu, features, feature_map = _host()
        machine = llvm.Target.from_default_triple().create_target_machine(cpu=cpu, features=features, opt=level, jit=True)
        # loops of exp, log, tanh call a vector math library (vector_math.py)
        llvm_ir = vector_math.vectorisable(llvm_ir, feature_map, llvm.add_symbol)
        texts = [llvm_ir, *linked] if determined_by is None else ["determined by", *determined_by]
        try:
            module = _for_host(llvm.parse_assembly(llvm_ir), machine)
            for text in linked:
                module.link_in(_for_host(llvm.parse_assembly(text), machine))
            if extend is not None:
                texts.append(extend(module))
                module.link_in(_for_host(llvm.parse_assembly(texts[-1]), machine))
            module.verify()
        except RuntimeError as exc:
            raise BackendError(f"llvmlite rejected the LLVM IR of {where}:\n{exc}") from None
        _check_externals(llvm, module, where)
        # machine code another process compiled from the same IR (object_cache.py)
        cache = object_cache.directory()
        target = (machine.triple, cpu, features, str(level), str(vector_math.choice()), llvm_version(), _llvmlite_version())
        name = object_cache.key(texts, target)
        self.cached = object_cache.load(cache, name)
        self._keep: tuple = (machine,)
        if self.cached is None:
            self._optimise(module, machine, level)
        self._engine = llvm.create_mcjit_compiler(module, machine)
        self._engine.set_object_cache(
            lambda _, code: object_cache.store(cache, name, bytes(code)), lambda _: self.cached
        )
        self._engine.finalize_object()
        self._module = module
        self._level = level

    def _optimise(self, module, machine, level: int) -> None:
        llvm = _llvm()
        tuning = llvm.create_pipeline_tuning_options(speed_level=level)
        builder = llvm.create_pass_builder(machine, tuning)
        builder.getModulePassManager().run(module, builder)
        self._keep += (tuning, builder)

    def optimised_ir(self) -> str:
        """The LLVM IR after optimisation, as compiled (for inspection and tests).
        Code loaded from the cache was compiled elsewhere: its IR is optimised
        here, on a copy, when asked for."""
        if self.cached is None:
            return str(self._module)
        llvm = _llvm()
        copy = llvm.parse_assembly(str(self._module))
        self._optimise(copy, self._keep[0], self._level)
        return str(copy)

    @staticmethod
    def check_llvmlite() -> None:
        """Raise BackendError saying what to install if llvmlite cannot be used."""
        _llvm()

    def address(self, symbol: str) -> int:
        address = self._engine.get_function_address(symbol)
        if not address:
            raise BackendError(f"the native module has no function {symbol!r}")
        return address


def signature(module, symbol: str) -> tuple[str, list[str]]:
    """The (result, parameter) LLVM types of a function of a parsed module."""
    t = module.get_function(symbol).global_value_type
    return str(t.get_function_return()), [str(p) for p in t.get_function_parameters()]
