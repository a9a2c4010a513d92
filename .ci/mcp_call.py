"""One real MCP call through an installed ``dsh-search mcp`` (the install-path checks of
``.ci/install-paths``): the official SDK's stdio client starts the given command line, lists
the tools and asks ``where_is`` where this repository keeps its package version (again, as the
answer asks, while it says the index is still being built); exit 0 when the answer names
``server/dsh_sidecar/__init__.py``.

    python .ci/mcp_call.py COMMAND [ARG...]     # run with a Python that has the mcp SDK
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(argv: list[str]) -> int:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        for _ in range(12):  # as the answer asks while the index is still being built
            result = await session.call_tool("where_is", {"query": "package version"})
            if "index" not in (result.structured_content or {}):
                break
            await asyncio.sleep(5)
    targets = [t["path"] for t in (result.structured_content or {}).get("targets", [])]
    print(f"mcp: tools {', '.join(tools)}; where_is(package version) -> {', '.join(targets[:3])}")
    return 0 if "server/dsh_sidecar/__init__.py" in targets else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(asyncio.wait_for(main(sys.argv[1:]), 300)))
