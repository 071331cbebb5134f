"""Dict comprehensions: `{k: f(v) for k, v in params.items()}`.

A dict in a program has str keys known while lowering (a fixed structure),
so a dict comprehension is unrolled like a list comprehension
(iteration.py's `_unrolled_comprehension`): it runs over iterables whose
length is known while lowering (a dict's keys, items or values, zip,
range, tuples), with conditions known while lowering, and each key must
come out a str known while lowering. A later key replaces an earlier one's
value in place, as in Python.
"""

from __future__ import annotations

import ast

from irad.frontend.values import MappingValue, Static


def dict_comprehension(fl, node: ast.DictComp) -> MappingValue:
    """The dict `node` builds, lowered by the FunctionLowering `fl`."""
    pairs = fl.__dict__.setdefault("_dict_comprehension_pairs", {})
    if node not in pairs:  # one node per comprehension: its scoped copy is cached per node
        elt = ast.copy_location(ast.Tuple([node.key, node.value], ast.Load()), node)
        pairs[node] = ast.copy_location(ast.ListComp(elt, node.generators), node)
    items: dict[str, object] = {}
    for key, value in fl._unrolled_comprehension(pairs[node]):
        if not (isinstance(key, Static) and isinstance(key.obj, str)):
            raise fl.src.error(
                node, f"a dict comprehension's key must be a str known while lowering, got {fl.kind_of(key)}",
                "use str keys, such as the keys of a dict (`{k: ... for k in params}`): irad's dicts "
                "have a fixed structure; for numbered items build a list or a tuple",
            )
        items[key.obj] = value
    return MappingValue(dict, tuple(items.items()))
