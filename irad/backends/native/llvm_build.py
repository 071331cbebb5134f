"""LLVM modules built with llvmlite: parsed, linked, laid out for the host and
optimised; run as a script, the optimised object code of one module.

The script is tiered compilation's background compile (tiers.py): it reads a
JSON request from the file its argument names (and deletes the file), {"texts": [LLVM IR, ...], "cpu", "features", "level",
"cache", "name"}, links the texts into one module as llvm_jit.JitModule does,
runs LLVM's pipeline at `level`, stores the object file the JIT's code
generator makes for this target in the object cache (directory `cache`, key
`name`; none if null) and writes it on stdout. It imports llvmlite and nothing of irad, so it
starts in about 0.1 s, and it runs in its own process: llvmlite serialises
every call into LLVM under one process-wide lock, so a thread compiling -O2
would hold up every other compile of the process, and a crash of LLVM there
cannot take the user's process down.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path


# LLVM options (its command line: process-wide, set when LLVM is first set
# up in a process, the JIT's or a background compile's). -force-ordered-reductions lets the loop
# vectoriser vectorise a loop that sums floats without reassociating the sum:
# the additions stay one chain in the order of the scalar loop (the same
# bits), while the rest of the body runs on vectors. x86's cost model leaves
# it off, so a sum of a fused `tanh`, `exp` or `log` (np.sum(np.tanh(x)),
# a log-sum-exp, a mean log-loss) called libmvec's vector function once per
# element, for one of its lanes: np.sum(np.tanh(z)) over 4096×128 took
# 16.4 ms, 2.1 ms with it (docs/benchmarks.md).
OPTIONS = ("-force-ordered-reductions",)


def configure(llvm) -> None:
    """Set OPTIONS in this process's LLVM."""
    for option in OPTIONS:
        llvm.set_option("irad", option)


def target_machine(llvm, cpu: str, features: str, level: int):
    """A JIT target machine for this CPU. One per module: llvmlite's pass
    builder and engine refer to it, and sharing one across modules crashed
    after a dispose."""
    return llvm.Target.from_default_triple().create_target_machine(cpu=cpu, features=features, opt=level, jit=True)


def for_host(module, machine):
    """`module` laid out as this machine's C ABI lays out data. mlir-translate
    emits no data layout, and LLVM's default one aligns i64 to 4 bytes: a
    result struct `{i64, i32, i64}` would then put its last field at offset
    12 where C (and ctypes) reads it at 16."""
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    return module


def parse(llvm, text: str, machine):
    return for_host(llvm.parse_assembly(text), machine)


def link(llvm, texts: Sequence[str], machine):
    """One module: the first text with the others linked in."""
    module = parse(llvm, texts[0], machine)
    for text in texts[1:]:
        module.link_in(parse(llvm, text, machine))
    return module


def needs(module) -> list[str]:
    """The symbols `module` takes from the process: functions it declares
    (not LLVM's intrinsics) and external globals."""
    declared = [f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")]
    return declared + [g.name for g in module.global_variables if g.is_declaration]


def optimise(llvm, module, machine, level: int) -> tuple:
    """Run LLVM's pipeline at `level` on `module`; returns what must outlive it."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=level)
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    return tuning, builder


def main() -> None:
    with open(sys.argv[1]) as source:
        request = json.load(source)
    os.unlink(sys.argv[1])
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    configure(llvm)
    machine = target_machine(llvm, request["cpu"], request["features"], request["level"])
    module = link(llvm, request["texts"], machine)
    module.verify()
    needed = needs(module)
    optimise(llvm, module, machine, request["level"])
    code = machine.emit_object(module)
    if request.get("cache"):  # stored here: it outlives a parent that exits first
        _object_cache().store(Path(request["cache"]), request["name"], code, needed)
    try:
        sys.stdout.buffer.write(code)
        sys.stdout.flush()
    except BrokenPipeError:  # the parent is gone; the cache has the code
        pass


def _object_cache():
    """object_cache.py, loaded by its path: importing it as irad's would import irad."""
    spec = importlib.util.spec_from_file_location("irad_object_cache", Path(__file__).with_name("object_cache.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    main()
