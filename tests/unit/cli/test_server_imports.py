"""A server process imports httpx without httpx's own command line (``cli/serving.py``,
``without_httpx_cli``): the client works, and rich, pygments and click stay unimported."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from dsh_sidecar.cli.serving import without_httpx_cli
without_httpx_cli()
import httpx
url = httpx.URL("http://127.0.0.1:8080/search")
try:
    httpx.URL("http://[::1/")
    refused = False
except httpx.InvalidURL:
    refused = True
print(json.dumps({
    "host": url.host, "port": url.port, "refused": refused, "client": callable(httpx.AsyncClient),
    "cli": sorted(m for m in ("rich", "pygments", "click") if m in sys.modules),
}))
"""


def test_a_server_imports_httpx_without_its_command_line() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == {"host": "127.0.0.1", "port": 8080, "refused": True, "client": True, "cli": []}


def test_httpx_already_imported_is_left_as_it_is() -> None:
    probe = (
        "import sys, httpx\nfrom dsh_sidecar.cli.serving import without_httpx_cli\n"
        "without_httpx_cli()\nprint(sys.modules.get('httpx._main') is not None)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "True"
