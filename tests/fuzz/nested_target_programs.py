"""Programs that write an array's item through an expression
(irad/frontend/nested_targets.py): the array held by a container (a dict, a
list, a tuple, a NamedTuple, a dict in a list, a list in a dict) or a view
of a named array, with another holder of the array or of its container, or
none, then a write (an item, `+=` on a row, an item of a view, through a mask
of data, indices that pop from a list; in a `for` or `while` loop, of a helper's value). numpy shows
the write through every holder; irad must give numpy's value or refuse, never
a different value. Every holder is read back into the result."""

from __future__ import annotations

import itertools
import textwrap

CONTAINERS = {  # `a` is the array written; `get` reads it back through the container
    "dict": ("c = {'k': a, 'z': x * 3.0}\n", "c['k']"),
    "list": ("c = [x * 3.0, a]\n", "c[1]"),
    "tuple": ("c = (a, x * 3.0)\n", "c[0]"),
    "record": ("c = Pair(a, x * 3.0)\n", "c.first"),
    "dict_in_list": ("c = [{'k': a}, {'k': x * 3.0}]\n", "c[0]['k']"),
    "list_in_dict": ("c = {'k': [x * 3.0, a]}\n", "c['k'][1]"),
    "named": ("c = a\n", "c"),
}
HOLDERS = {
    "none": "",
    "array_named": "b = a\n",
    "array_view": "b = a[1:]\n",
    "container_named": "d = c\n",
    "twice": "e = [a, a]\n",
    "inner_named": "d = INNER\n",
}
WRITES = {
    "item": "{get}[1] = x[0] * 5.0\n",
    "row_add": "{get}[1] += x * 2.0\n",
    "view_item": "{get}[1][2] = x[1] ** 2\n",
    "transposed": "{get}.T[0] = x\n",
    "masked": "{get}[{get} > 1.0] = x[0] * 5.0\n",  # masks of data (masked_writes.py)
    "masked_rows": "{get}[x > 0.0] *= x[1]\n",
    "masked_copy": "{get}[np.abs({get}) > 0.5] = ({get} * 0.5 + x)[np.abs({get}) > 0.5]\n",
    # with helper calls and loops: `a[i][j] = v` in a loop, a helper's value written, a row op= per iteration
    "loop_item": "for i in range(3):\n    {get}[i][(i + 1) % 3] = x[i] * 2.0\n",
    "helper_item": "{get}[2][0] = scale(x)\n",
    "loop_helper_row": "for i in range(2):\n    {get}[i] += scale(x * (i + 1.0)) * x\n",
    "while_item": "i = 0\nwhile i < 3 and x[i] < 1.0:\n    {get}[i][i] *= x[i]\n    i += 1\n",
    # indices with side effects: each runs once, in Python's order (the source's before the target's)
    "popped_items": "order = [2, 0, 1]\n{get}[order.pop()][order.pop()] += x[2] * 3.0\n",
    "popped_mask": "order = [0, 1]\n{get}[order.pop()][x > 0.0] = x[order.pop()]\n",
}
INNER = {"dict_in_list": "c[0]", "list_in_dict": "c['k']"}

COMBINATIONS = [
    combo for combo in itertools.product(CONTAINERS, HOLDERS, WRITES)
    if not (combo[1] == "inner_named" and combo[0] not in INNER)
]


def program(container: str, holder: str, write: str) -> str:
    """The source of `f(x)` for one combination."""
    make, get = CONTAINERS[container]
    holds = HOLDERS[holder].replace("INNER", INNER.get(container, "c"))
    reads = {"none": "", "array_named": " + np.sum(b * x)", "array_view": " + np.sum(b * 2.0)",
             "container_named": " + np.sum(" + get.replace("c", "d", 1) + ")",
             "twice": " + np.sum(e[1] * x)", "inner_named": " + np.sum(d[0] if isinstance(d, dict) else 0.0)"}
    if holder == "inner_named":
        reads[holder] = " + np.sum(" + ("d['k']" if container == "dict_in_list" else "d[1]") + ")"
    body = ("a = np.outer(x, x + 1.0)\n" + make + holds + WRITES[write].format(get=get)
            + f"return np.sum(np.sin({get}) * 2.0) + np.sum(a){reads[holder]}\n")
    return ("import numpy as np\nfrom typing import NamedTuple\n\n\nclass Pair(NamedTuple):\n"
            "    first: np.ndarray\n    second: np.ndarray\n\n\ndef scale(v):\n    return np.sum(v * v) * 0.5\n\n\n"
            "def f(x):\n" + textwrap.indent(body, "    "))
