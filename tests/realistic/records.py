"""A parameter record the realistic programs import, as a project keeps its model
types in a module of their own (a dataclass: JAX cannot take it, so its program is
checked by central differences)."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class WeibullParams:
    coef: np.ndarray
    log_shape: float
