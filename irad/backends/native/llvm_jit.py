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
from collections.abc import Callable, Sequence

from irad.backends.native import background, llvm_build

from irad.backends.native import object_cache

from irad.backends.native import tiers

from irad.backends.native import vector_math
from irad.base import config, progress
from irad.base.errors import BackendError

LLVMLITE_HINT = "pip install 'irad[native]' (llvmlite >= 0.50)"
LLVM_MAJOR = 22
# LLVM's pipeline level, irad.config's `native_opt_level`: -O3 ran a 6-step
# unrolled array LSTM gradient about 10% faster than -O2 but took 8 s instead
# of 2 s to compile, so -O2 is the default.
def _opt_level() -> int:
    return config.read("native_opt_level")


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
    llvm_build.configure(llvm)  # _llvm() runs once per process
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


# LLVM tuning features added to the host's (x86-64 only): irad.config's
# `native_tuning` ("" adds none). No gathers or scatters by default: with
# AVX-512 LLVM may always use them, and it vectorised fused loops whose
# innermost dimension it had unrolled (the GMM's d = 10) across the next one,
# reading through 8-lane gathers; on an AMD EPYC (Zen 4) the GMM gradient
# then took 2.5x as long as with plain loads (docs/benchmarks.md, "Gathers").
def _tuning() -> str:
    if not _llvm().get_default_triple().startswith("x86_64"):
        return ""
    return ",".join(item.strip() for item in config.read("native_tuning").split(",") if item.strip())


@functools.cache
def _detected() -> tuple[str, str, dict[str, bool]]:
    llvm = _llvm()
    features = llvm.get_host_cpu_features()
    return llvm.get_host_cpu_name(), features.flatten(), dict(features)


def _host() -> tuple[str, str, dict[str, bool]]:
    """This CPU's name and features, for LLVM (flattened, with the tuning features after
    them) and as a dict. The code runs where it is compiled, so it may use
    all of them: without them LLVM targets a generic x86-64 (SSE2), and loops
    vectorise two doubles wide where AVX2 takes four."""
    cpu, features, feature_map = _detected()
    tuning = _tuning()
    return cpu, f"{features},{tuning}" if tuning else features, feature_map


@functools.cache
def _load_library(path: str) -> None:
    _llvm().load_library_permanently(path)


def _check_externals(llvm, module, where: str, elsewhere: frozenset[str] = frozenset()) -> None:
    """An unresolved function would crash the process when called: refuse it
    now. `elsewhere`: the functions object code linked beside it defines."""
    missing = [
        f.name
        for f in module.functions
        if f.is_declaration and not f.name.startswith("llvm.") and f.name not in elsewhere
        and not llvm.address_of_symbol(f.name)
    ]
    if missing:
        raise BackendError(
            f"the machine code of {where} calls {', '.join(missing)}, which this process does not "
            "provide\n  hint: the MLIR runner utilities (libmlir_c_runner_utils, installed with "
            "mlir-22-tools) may be missing beside mlir-opt"
        )


def _target(level: int) -> tuple[str, ...]:
    """What besides the IR decides the machine code, for the cache's key."""
    cpu, features, _ = _host()
    triple = _llvm().get_default_triple()
    return (triple, cpu, features, str(level), vector_math.cache_key(), llvm_version(), _llvmlite_version(),
            *llvm_build.OPTIONS)


def _loadable(entry: object_cache.Entry | None) -> bytes | None:
    """The code of a cache entry, if every symbol it needs is in this process
    (else linking it would abort the process: a miss, compiled here)."""
    if entry is None:
        return None
    llvm = _llvm()
    if not all(llvm.address_of_symbol(name) for name in entry.needs):
        return None
    return entry.code


class _ObjectEngine:
    """An MCJIT engine running object code (from the cache or a child
    process), with the target machine and empty module it needs alive."""

    def __init__(self, code: bytes, level: int):
        llvm = _llvm()
        cpu, features, _ = _host()
        self._machine = llvm_build.target_machine(llvm, cpu, features, level)
        self._engine = llvm.create_mcjit_compiler(llvm_build.parse(llvm, "", self._machine), self._machine)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        self._engine.finalize_object()

    def get_function_address(self, name: str) -> int:
        return self._engine.get_function_address(name)


class JitModule:
    """LLVM IR text, optimised (-O2 by default) and compiled to machine code in
    this process, or machine code loaded from the cache (object_cache.py) that
    another process compiled from the same IR: then `cached` holds it. With
    tiered compilation (tiers.py) and `exported` functions, a module not in
    the cache first runs at -O0 while its -O2 code compiles in the background:
    `tiered` is True then, and `wait_optimised()` waits for the -O2 code."""

    def __init__(
        self,
        llvm_ir: str | Callable[[], str],
        *,
        libraries: Sequence[str] = (),
        linked: Sequence[str] | Callable[[], Sequence[str]] = (),
        where: str = "the lowered module",
        extend: Callable[[object], Sequence[str]] | None = None,
        extend_ahead: Callable[[], Sequence[str] | None] | None = None,
        determined_by: Sequence[str] | None = None,
        exported: Sequence[str] = (),
        tierable: bool = True,
        optimised_llvm_ir: Callable[[], str] | None = None,
        checked: Callable[[], None] | None = None,
        deferred: tiers.Deferred | None = None,
    ):
        """`linked`: more LLVM IR modules, linked into this one before it is
        optimised (definitions of functions it declares: irad.linalg's LAPACK
        calls). `extend`, given the parsed module, returns more LLVM IR modules to link
        in too (the native backend's runtime: its library, the same text for
        every module of the process, then the module's entries).
        `extend_ahead`: the texts `extend` is expected to return, made
        before `llvm_ir` (None if they cannot be): a tiered module compiles
        them to object code at -O0 (the first once per process, as
        `_Ahead` says), with the indirection of the `exported` functions
        they define, while `llvm_ir` is made (a function `llvm_ir` is given
        that work, to run once the MLIR tools have their input), and links
        that code into tier 0, unless `extend` returns other texts, which
        are then linked into the module as without it. `determined_by`: texts that
        determine `llvm_ir`, `linked` and what `extend` returns (what the
        tools that wrote them were given), for the cache's key when the IR
        itself varies from run to run; then `llvm_ir` and `linked` may be
        functions returning them, which a cache hit never calls (the tools
        do not run). By default the IR is its own key. `exported`: the
        functions Python calls (through `address`), which tiering switches to
        -O2 code. `tierable` False compiles at -O2 at once (tiers.py: a module
        whose results would depend on the tier). `optimised_llvm_ir`: the LLVM IR of
        the code at the chosen level when it is not tier 0's `llvm_ir` (the
        same functions and bits, made differently: large loop nests split
        over threads), made by the background compile or, untiered, in its
        place. `checked`, called once the IR is made and before code made
        from it is kept (the -O2 compile, the object cache) or run, raises if
        the IR must not be used (native: the exit statuses of the tools that
        wrote it, which come after it). `deferred`: the background -O2
        compile starts when it starts (after the module's first call), not at
        once."""
        llvm = _llvm()
        for library in libraries:  # loaded once per process; symbols resolve from them
            _load_library(library)
        self._level = _opt_level()
        tiering = tierable and bool(exported) and self._level > tiers.TIER0_LEVEL and tiers.enabled()
        self._cache = object_cache.directory(config.read("native_cache"))
        self._exported = {name: name for name in exported}
        self._keep: tuple = ()
        self._sources: list[str] | None = None
        self._ir = (llvm_ir if tiering or optimised_llvm_ir is None else optimised_llvm_ir, linked, extend, where)
        self._ahead: _Ahead | None = None  # tier 0's compile of `extend_ahead`, while `llvm_ir` is made
        self._ahead_code: list[bytes] | None = None
        # the texts of a tiered module's -O2 code, when they are not tier 0's
        self._optimised_texts = self._optimised_sources(optimised_llvm_ir) if tiering and optimised_llvm_ir else None
        self.upgrade: tiers.Upgrade | None = None
        self._deferred = deferred
        self.tiered = False
        self._optimised: _ObjectEngine | None = None
        self.cached = None
        if determined_by is not None:  # looked up before the IR is made
            vector_math.bind_all(_host()[1], llvm.add_symbol)
            if self._from_cache(["determined by", *determined_by]):
                return
        if tiering and extend is not None and extend_ahead is not None and exported:
            self._ahead = _Ahead(extend_ahead, list(exported))
        module = self._build()
        if determined_by is None and self._from_cache(self._sources):
            return
        cpu, features, _ = _host()
        self.tiered = tiering
        if self.tiered:
            # `checked` (the tools' ending) runs while LLVM compiles tier 0, which nothing runs before it returns
            checking = background.submit(checked) if checked is not None else None
            try:
                # tier 0: the same module at -O0, its exported functions called through a global
                with progress.stage("LLVM -O0 (tier 0)"):
                    machine = llvm_build.target_machine(llvm, cpu, features, tiers.TIER0_LEVEL)
                    if self._ahead_code is None:
                        dispatch = tiers.dispatch_ir({name: signature(module, name) for name in exported})
                        module.link_in(llvm_build.parse(llvm, dispatch, machine))
                    self._exported = {name: name + tiers.CALL_SUFFIX for name in exported}
                    self._engine = llvm.create_mcjit_compiler(module, machine)
                    for code in self._ahead_code or ():  # the extension and the indirection, compiled already
                        self._engine.add_object_file(llvm.ObjectFileRef.from_data(code))
                    self._engine.finalize_object()
            finally:
                if checking is not None:
                    checking.join()  # a tool that failed is the error, before LLVM's
            self._keep = (machine, module)
            upgrade = functools.partial(
                tiers.Upgrade, self._optimised_texts or self._sources, cpu, features, self._level,
                (self._cache, self._name), self._load_optimised,
            )
            if deferred is None:
                self.upgrade = upgrade()
            else:  # (a child storing its code in the cache still starts if the process exits first)
                deferred.add(lambda: setattr(self, "upgrade", upgrade()), at_exit=self._cache is not None)
            return
        if checked is not None:
            checked()
        with progress.stage(f"LLVM -O{self._level}"):
            needed = llvm_build.needs(module)
            machine = llvm_build.target_machine(llvm, cpu, features, self._level)
            self._keep = (machine, module, *llvm_build.optimise(llvm, module, machine, self._level))
            self._engine = llvm.create_mcjit_compiler(module, machine)
            self._engine.set_object_cache(
                lambda _, code: object_cache.store(self._cache, self._name, bytes(code), needed), lambda _: None
            )
            self._engine.finalize_object()

    def _from_cache(self, key_parts: list[str]) -> bool:
        """Look the code up under the key of `key_parts` (kept as `_name`, where
        the compile stores it on a miss); on a hit, run it."""
        self._name = object_cache.key(key_parts, _target(self._level))
        self.cached = _loadable(object_cache.load(self._cache, self._name))
        if self.cached is not None:
            self._engine = _ObjectEngine(self.cached, self._level)
        return self.cached is not None

    def _build(self):
        """The module to compile, parsed and linked (its texts in `_sources`)."""
        llvm_ir, linked, extend, where = self._ir
        if callable(llvm_ir):
            llvm_ir = llvm_ir(self._ahead.run) if self._ahead is not None else llvm_ir()
        linked = linked() if callable(linked) else linked
        with progress.stage("LLVM parse and link"):
            return self._parse(llvm_ir, linked, extend, where)

    def _parse(self, llvm_ir: str, linked: Sequence[str], extend, where: str):
        """`_build` once the LLVM IR is made."""
        llvm = _llvm()
        cpu, features, _ = _host()
        # loops of exp, log, tanh call a vector math library (vector_math.py)
        sources = [vector_math.vectorisable(llvm_ir, features, llvm.add_symbol), *linked]
        machine = llvm_build.target_machine(llvm, cpu, features, self._level)
        ahead, self._ahead = self._ahead, None
        self._ahead_code, elsewhere = None, frozenset()  # (the object code of the extension, made ahead)
        try:
            module = llvm_build.link(llvm, sources, machine)
            if extend is not None:
                extension = list(extend(module))
                sources += extension
                compiled = ahead.result(extension) if ahead is not None else None
                if compiled is None:
                    for text in extension:
                        module.link_in(llvm_build.parse(llvm, text, machine))
                else:  # tier 0 links their object code instead
                    self._ahead_code, elsewhere = compiled
            module.verify()
        except RuntimeError as exc:
            raise BackendError(f"llvmlite rejected the LLVM IR of {where}:\n{exc}") from None
        _check_externals(llvm, module, where, elsewhere)
        self._sources = sources
        return module

    def _optimised_sources(self, optimised_llvm_ir: Callable[[], str]) -> Callable[[], list[str]]:
        """A function making the texts of the -O2 code from `optimised_llvm_ir`
        (the same linked modules and runtime as tier 0's)."""

        def make() -> list[str]:
            _, features, _ = _host()
            return [vector_math.vectorisable(optimised_llvm_ir(), features, _llvm().add_symbol), *self._sources[1:]]

        return make

    def _load_optimised(self, code: bytes) -> None:
        """Load the -O2 object code of a tiered module (the child stored it in
        the cache) and switch its calls to it."""
        engine = _ObjectEngine(code, self._level)
        addresses = {}
        for name in self._exported:
            addresses[name] = engine.get_function_address(name)
            if not addresses[name]:
                raise BackendError(f"the -O2 object code has no function {name!r}")
        for name, address in addresses.items():
            ctypes.c_void_p.from_address(self._engine.get_global_value_address(name + tiers.SLOT_SUFFIX)).value = address
        self._optimised = engine

    @property
    def extended_ahead(self) -> bool:
        """Whether tier 0 links the extension's object code made while the
        module's IR was (`extend_ahead`), rather than its texts."""
        return self._ahead_code is not None

    @property
    def optimised(self) -> bool:
        """Whether calls run code optimised at the chosen level (a tiered
        module's only once its -O2 code is loaded)."""
        return not self.tiered or self._optimised is not None

    def wait_optimised(self, timeout: float | None = None) -> bool:
        """Wait until calls run the -O2 code (at once if they already do);
        False if its background compile failed (calls keep running tier 0)."""
        if self._deferred is not None:
            self._deferred.join(timeout)
            if self.tiered and self.upgrade is None:  # not started in time (or the process exits)
                return False
        return self.upgrade is None or self.upgrade.wait(timeout)

    def optimised_ir(self) -> str:
        """The LLVM IR after optimisation at the chosen level (for inspection
        and tests). Code loaded from the cache was compiled elsewhere, and a
        tiered module's -O2 code in the background: its IR is made and
        optimised here, on a copy, when asked for."""
        llvm = _llvm()
        if self._sources is None:
            self._build()
        cpu, features, _ = _host()
        machine = llvm_build.target_machine(llvm, cpu, features, self._level)
        copy = llvm_build.link(llvm, self._optimised_texts() if self._optimised_texts else self._sources, machine)
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


# The object code of extension libraries at tier 0's level, by their text, with the
# functions each defines and their signatures: the same text for every module of the process
_LIBRARIES: dict[str, tuple[bytes, dict[str, tuple[str, list[str]]]]] = {}


class _Ahead:
    """A JIT module's extension (`extend_ahead`'s texts: a library, then the
    module's own) and the tier-0 indirection of its `exported` functions,
    compiled at -O0 to object code by `run`, which the function making the
    module's IR calls while the tools run (this thread is idle then). The
    library's code is compiled once per process (it is the same text for
    every module) and loaded into each module's engine, so each module
    still has its own copy, as when it is linked into the module. `result`
    hands the code over if the texts are the ones the module needs."""

    def __init__(self, make: Callable[[], Sequence[str] | None], exported: list[str]):
        self._make = make
        self._exported = exported
        self._compiled: tuple[list[str], list[bytes], frozenset[str]] | None = None
        self._ran = False

    def run(self) -> None:
        if self._ran:
            return
        self._ran = True
        try:
            texts = self._make()
            if texts is None:
                return
            library, own = texts
            llvm = _llvm()
            cpu, features, _ = _host()
            machine = llvm_build.target_machine(llvm, cpu, features, tiers.TIER0_LEVEL)
            if library not in _LIBRARIES:
                _LIBRARIES[library] = self._object(llvm, machine, llvm_build.parse(llvm, library, machine))
            library_code, defined = _LIBRARIES[library]
            module = llvm_build.parse(llvm, own, machine)
            defined = {**defined, **self._defined(module)}
            if not set(self._exported) <= defined.keys():
                return
            dispatch = tiers.dispatch_ir({name: defined[name] for name in self._exported})
            module.link_in(llvm_build.parse(llvm, dispatch, machine))
            own_code, _ = self._object(llvm, machine, module)
            self._compiled = ([library, own], [library_code, own_code], frozenset(defined))
        except Exception:  # noqa: BLE001 -- the module's own compile then links the texts and reports what is wrong
            self._compiled = None

    @staticmethod
    def _defined(module) -> dict[str, tuple[str, list[str]]]:
        return {f.name: signature(module, f.name) for f in module.functions if not f.is_declaration}

    @classmethod
    def _object(cls, llvm, machine, module) -> tuple[bytes, dict[str, tuple[str, list[str]]]]:
        module.verify()
        return bytes(machine.emit_object(module)), cls._defined(module)

    def result(self, texts: list[str]) -> tuple[list[bytes], frozenset[str]] | None:
        """The object code of `texts` and the functions it defines, if made
        from them (`run` first, if the IR was made without it)."""
        self.run()
        if self._compiled is None or self._compiled[0] != texts:
            return None
        return self._compiled[1:]


def signature(module, symbol: str) -> tuple[str, list[str]]:
    """The (result, parameter) LLVM types of a function of a parsed module."""
    t = module.get_function(symbol).global_value_type
    return str(t.get_function_return()), [str(p) for p in t.get_function_parameters()]
