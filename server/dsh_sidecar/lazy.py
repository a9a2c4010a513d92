"""Package exports imported on first use (PEP 562 module ``__getattr__``).

A package ``__init__`` that re-exports its submodules' names would import them all whenever one
submodule is imported (the config parser that a server's ``initialize`` reply needs would pull
in the whole core: cold start). Instead it maps each public name to the submodule that
defines it and sets ``__getattr__ = lazy_exports(__name__, {...})``; the first access imports
that submodule and caches the name in the package's namespace, so later accesses are plain
attribute lookups.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps a public name to the
    submodule (relative to ``package``) that defines it. Raises ``AttributeError`` for any
    other name, as a module without the hook would."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
