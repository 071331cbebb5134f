"""What one control-flow path of a function being lowered knows: its `Path`.

A path holds three separate things:

* `env`: the user's variables (and irad's hidden ones, `iter.1`, `a.1`), by
  name, and nothing else;
* `control`: a `ControlState`, whether a `return`, `break` or `continue` has
  been taken and what `return` gave;
* `views`: a views.ViewState, which names share which numpy array.

The arms of an `if` and a loop body each lower on a copy of the path before
them, and the joins (control_flow.py) merge the paths' *slots*: every variable,
every shared array's base value, and the control state's entries. A slot's
key says where it lives: a `str` is a variable, a views.Base is a shared
array, a `ControlSlot` is a jump flag or the returned value.

A jump flag is a Python bool while it is known at lowering time and an `i1`
value once it depends on data (control_flow.py says how statements after a
possible jump run).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

from irad.frontend.views import Base, ViewState


class ControlSlot(enum.Enum):
    """The control state's entries, as slots a join merges."""

    RETURNED = "returned"
    BROKE = "broke"
    CONTINUED = "continued"
    VALUE = "value"  # what `return` gave


FLAGS = (ControlSlot.RETURNED, ControlSlot.BROKE, ControlSlot.CONTINUED)
VALUE = ControlSlot.VALUE
RETURNED, BROKE, CONTINUED = FLAGS


class _NotReturned:
    """The returned value of a path that has not reached a `return`."""

    def __repr__(self) -> str:
        return "NOT_RETURNED"


NOT_RETURNED = _NotReturned()


class PathEnded(Exception):
    """A statement called a function every path of which raises (Python's
    call would not return): the statement, and its path, end there."""


@dataclass
class ControlState:
    """The jumps taken on a path: each flag False, True or an i1 value (taken
    where it is true), and the value its `return` gave (NOT_RETURNED before one)."""

    returned: object = False
    broke: object = False
    continued: object = False
    value: object = NOT_RETURNED

    def copy(self) -> ControlState:
        return replace(self)

    def get(self, slot: ControlSlot):
        return getattr(self, slot.value)

    def set(self, slot: ControlSlot, state) -> None:
        setattr(self, slot.value, state)

    def flags(self) -> list:
        return [self.returned, self.broke, self.continued]

    def slots(self) -> dict[ControlSlot, object]:
        """The flags, and the returned value once there is one."""
        slots = {flag: self.get(flag) for flag in FLAGS}
        if self.value is not NOT_RETURNED:
            slots[VALUE] = self.value
        return slots

    def clear_jumps(self) -> None:
        """On this path no jump was taken."""
        self.returned = self.broke = self.continued = False


@dataclass
class Path:
    """One control-flow path's variables, jumps and array sharing (see the module docstring)."""

    env: dict = field(default_factory=dict)
    control: ControlState = field(default_factory=ControlState)
    views: ViewState = field(default_factory=ViewState)

    def copy(self) -> Path:
        return Path(dict(self.env), self.control.copy(), self.views.copy())

    # ---- slots: what a join merges --------------------------------------------
    def slots(self) -> dict:
        """Every slot of the path: variables, shared arrays' bases, control state."""
        return {**self.env, **self.views.bases, **self.control.slots()}

    def get(self, key, default=None):
        if isinstance(key, ControlSlot):
            state = self.control.get(key)
            return default if state is NOT_RETURNED else state
        return self._holder(key).get(key, default)

    def __contains__(self, key) -> bool:
        if isinstance(key, ControlSlot):
            return key is not VALUE or self.control.value is not NOT_RETURNED
        return key in self._holder(key)

    def __getitem__(self, key):
        if key not in self:
            raise KeyError(key)
        return self.get(key)

    def __setitem__(self, key, value) -> None:
        if isinstance(key, ControlSlot):
            self.control.set(key, value)
        else:
            self._holder(key)[key] = value

    def pop(self, key, default=None):
        if isinstance(key, ControlSlot):
            state = self.get(key, default)
            self.control.set(key, NOT_RETURNED if key is VALUE else False)
            return state
        return self._holder(key).pop(key, default)

    def _holder(self, key) -> dict:
        return self.views.bases if isinstance(key, Base) else self.env


def is_variable(key) -> bool:
    """Is a slot's key a variable's name (not a base or the control state)?"""
    return isinstance(key, str)


def is_user_variable(key) -> bool:
    """Is a slot's key a name from the program (not irad's `a.1`, `iter.1`)?"""
    return isinstance(key, str) and key.isidentifier()
