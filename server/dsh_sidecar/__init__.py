"""dsh-search-sidecar: the stdio JSON-RPC sidecar (imported as ``dsh_sidecar``).

Layout: ``app``/``handlers`` speak JSON-RPC; ``router``, ``bandit``, ``suggester`` are the
cores (no pygls imports); ``workspace`` and ``state`` are what the cores stand on.
"""

__version__ = "0.1.0"
#: The project's home page: ``[project.urls] Homepage`` in pyproject.toml (a test keeps them
#: equal); the User-Agent sent to providers names it.
PROJECT_URL = "https://github.com/dsh-search/dsh-search-sidecar"
