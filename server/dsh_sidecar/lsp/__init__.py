"""The JSON-RPC layer: the pygls app, thin handlers, the stdio transport and ``$/progress``.

The only package of the sidecar that knows LSP framing or imports pygls; the cores below
it (router, bandit, suggester, workspace, state) are reached through :mod:`dsh_sidecar.sidecar`.
"""
