"""A ``dsh-search`` process whose sidecar's build never ends: run ``python -c HELD_BUILD
<marker> <subcommand> …``; once the build starts it writes ``building`` to ``<marker>`` and then
waits for good (an event nobody sets). For the tests of a session that ends during the build."""

from __future__ import annotations

from typing import Final

HELD_BUILD: Final = """
import sys, threading
from pathlib import Path
from dsh_sidecar import sidecar
from dsh_sidecar.cli import main

marker = Path(sys.argv.pop(1))

def held(self, *args, **kwargs):
    marker.write_text("building")
    threading.Event().wait()

sidecar.Sidecar.__init__ = held
sys.argv[0] = "dsh-search"
sys.exit(main())
"""


#: ``python -c HELD_AT <marker> <module> <attribute> <subcommand> …``: ``dsh-search`` with
#: ``<module>.<attribute>`` (a function the command calls) replaced by one that writes ``held``
#: to ``<marker>`` and waits for good: a process held at that point of its start.
HELD_AT: Final = """
import importlib, sys, threading
from pathlib import Path
from dsh_sidecar.cli import main

marker = Path(sys.argv.pop(1))
module, attribute = importlib.import_module(sys.argv.pop(1)), sys.argv.pop(1)

def held(*args, **kwargs):
    marker.write_text("held")
    threading.Event().wait()

setattr(module, attribute, held)
sys.argv[0] = "dsh-search"
sys.exit(main())
"""
