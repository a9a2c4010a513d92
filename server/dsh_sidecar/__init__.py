"""dsh-search-sidecar: the stdio JSON-RPC sidecar (imported as ``dsh_sidecar``).

Layout: ``app``/``handlers`` speak JSON-RPC; ``router``, ``bandit``, ``suggester`` are the
cores (no pygls imports); ``workspace`` and ``state`` are what the cores stand on.
"""

__version__ = "0.1.0"
