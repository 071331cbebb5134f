"""A check of IREE's VM register allocation for the miscompile irad cannot write around.

IREE 3.13's VM allocator (linear scan over one interval per value) frees a
value's register when the next interval starts at or after the value's last
use. A block with arguments starts at its first op, so a value whose last use
is that op is freed before the block's arguments are placed: an argument can
get its register, and the branch into the block overwrites the value before
the op reads it (`if c { sin(x) } else { -1 } - (-1)` computed 0). irad turns
branches of plain arithmetic into selects (iree_forms), which leaves no block
argument; a branch that must stay a branch (it holds a loop, a check, an array
op) and a loop's header still have them.

`hazards` reads IREE's own record of the allocation (the VM module printed as
`annotated-mlir-text`: each block's argument registers, each op's operand
registers) and finds every block whose first op reads, from a register one of
the block's arguments also occupies, a value that is not that argument, or
whose arguments share a register. Such a module would compute a wrong value,
so compile_to_vmfb refuses it with an error instead.
"""

from __future__ import annotations

import re

_BLOCK = re.compile(r"^\s*\^(bb\d+)\(([^)]*)\):")
_FUNCTION = re.compile(r"vm\.func\b.*?@([\w.$-]+)\(")
_REGISTERS = re.compile(r'(block_registers|operand_registers) = \[([^\]]*)\]')
_ATTRIBUTES = re.compile(r"\{[^{}]*\}")


def _slots(register: str) -> set[tuple[str, int]]:
    """The slots a register occupies: i8+9 is two 32-bit slots, r3 one ref slot."""
    bank = "i" if register[0] == "i" else "r"
    return {(bank, int(n)) for n in register[1:].split("+")}


def _operand_names(op: str) -> list[str]:
    """The operands of a printed op, in order: its text without the results
    (before ` = `) and the attribute dictionary."""
    text = _ATTRIBUTES.sub("", op, count=1)
    if " = " in text.split("(", 1)[0]:
        text = text.split(" = ", 1)[1]
    return re.findall(r"%[\w$.-]+", text)


def hazards(annotated: str) -> list[str]:
    """Where the annotated VM module reads a register a block argument overwrote."""
    found = []
    function = "?"
    lines = annotated.splitlines()
    for i, line in enumerate(lines):
        if (f := _FUNCTION.search(line)) and "vm.func" in line:
            function = f.group(1)
        block = _BLOCK.match(line)
        if not block or i + 1 >= len(lines):
            continue
        arguments = [a.split(":")[0].strip() for a in block.group(2).split(",")]
        first = lines[i + 1]
        fields = dict(_REGISTERS.findall(first))
        registers = [r.strip().strip('"') for r in fields.get("block_registers", "").split(",") if r.strip()]
        if len(registers) != len(arguments):
            continue
        occupied: dict[tuple[str, int], list[str]] = {}
        for name, register in zip(arguments, registers):
            for slot in _slots(register):
                if slot in occupied:
                    found.append(f"@{function} ^{block.group(1)}: arguments {occupied[slot][0]} and {name} share a register")
                occupied.setdefault(slot, []).append(name)
        read = [r.strip().strip('"') for r in fields.get("operand_registers", "").split(",") if r.strip()]
        for name, register in zip(_operand_names(first), read):
            for slot in _slots(register):
                owners = occupied.get(slot, [])
                if owners and name not in owners:
                    found.append(
                        f"@{function} ^{block.group(1)}: its first op reads {name} from the register of argument {owners[0]}"
                    )
                    break
    return found
