"""Rules written directly as MLIR text: a `@forward` and a `@pullback` function.

The built-in rules use this form. Inside `@forward`, a call to the rule's own
target symbol means "the primal function itself"; the pass points it at the
callee of the call site it inlines into.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.parser import Parser

from irad.rules.table import Rule, RuleIR, caller_location


def parse_rule_ir(text: str, num_results: int = 1) -> RuleIR:
    from irad.dialect import make_context  # lazy: parsing needs the dialects

    module: ModuleOp = Parser(make_context(), text).parse_module()
    module.verify()
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    return RuleIR(funcs["forward"], funcs["pullback"], num_results)


def mlir_rule(
    target: str, types: tuple[Attribute, ...] | None, text: str, num_results: int = 1
) -> Rule:
    """A rule whose IR is `text`, parsed the first time it is needed."""
    parsed: list[RuleIR] = []

    def build(arg_types: tuple[Attribute, ...]) -> RuleIR:
        if not parsed:
            parsed.append(parse_rule_ir(text, num_results))
        return parsed[0]

    return Rule(target, types, build, caller_location())
