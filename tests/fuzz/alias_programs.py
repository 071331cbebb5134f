"""Programs whose helper's result may be, or hold, an array it was given,
reached through a loop, a list, a dict, a branch or a while loop, after which
the given array is written (irad/frontend/call_aliases.py). numpy shows the
write through the result; irad must give numpy's value or refuse, never a
different value. Every combination of a helper, a carrier and a write is a
program; the result's last element and the written array are read back."""

from __future__ import annotations

import itertools
import textwrap

HELPERS = {
    "ident": "def helper(w):\n    return w\n",
    "view": "def helper(w):\n    return w[1:]\n",
    "first": "def helper(w):\n    return (w, w * 2.0)[0]\n",
    "fresh": "def helper(w):\n    return w * 2.0\n",
    "copy": "def helper(w):\n    return np.copy(w)\n",
    "reshaped": "def helper(w):\n    return w.reshape(1, -1)[0]\n",
    "loop_return": "def helper(w):\n    v = w\n    for i in range(2):\n        v = v\n    return v\n",
    "branch_return": "def helper(w):\n    if w[0] > -100.0:\n        return w\n    return w * 1.0\n",
}
CARRIERS = {
    "direct": "u = helper(w)\n",
    "loop": "u = helper(w) * 0.0\nfor i in range(n):\n    u = helper(w)\n",
    "list": "us = []\nfor i in range(2):\n    us.append(helper(w))\nu = us[0]\n",
    "dict": "p = {'a': helper(w)}\nu = p['a']\n",
    "dict_loop": "p = {'a': helper(w) * 0.0}\nfor i in range(2):\n    p = {'a': helper(w)}\nu = p['a']\n",
    "branch": "if x[0] > 0.0:\n    u = helper(w)\nelse:\n    u = helper(w) * 1.0\n",
    "while": "u = helper(w) * 0.0\nk = 0\nwhile k < n:\n    u = helper(w)\n    k += 1\n",
    "sum": "u = helper(w) * 0.0\nfor i in range(n):\n    u = u + helper(w)\n",
    "tuple": "t = (helper(w), 1.0)\nu = t[0]\n",
}
WRITES = {"item": "w[1] = 5.0\n", "add": "w += 1.0\n", "slice": "w[1:] *= 2.0\n", "none": ""}

COMBINATIONS = list(itertools.product(HELPERS, CARRIERS, WRITES))


def program(helper: str, carrier: str, write: str) -> str:
    """The source of `f(x, n)` for one combination."""
    body = "w = x * 1.0\n" + CARRIERS[carrier] + WRITES[write] + "return np.sum(u[-1:] * x[-1:]) + np.sum(w * x)\n"
    return "import numpy as np\n\n" + HELPERS[helper] + "\n\ndef f(x, n):\n" + textwrap.indent(body, "    ")
