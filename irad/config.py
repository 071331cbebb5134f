"""irad's configuration: `irad.config.update("native_opt_level", 3)`,
`irad.config.read("backend")`, `irad.config.native_tiered`,
`with irad.config.overriding(native_split_products=False): ...`.

The switches are declared in irad/base/config.py (every layer reads them);
docs/configuration.md lists them.
"""

from irad.base.config import (  # noqa: F401  (__getattr__: a switch by attribute)
    SWITCHES,
    ConfigError,
    Switch,
    __getattr__,
    cache_key,
    default,
    overriding,
    read,
    reset,
    switch,
    update,
)

__all__ = ["SWITCHES", "ConfigError", "Switch", "cache_key", "default", "overriding", "read", "reset", "switch",
           "update"]
