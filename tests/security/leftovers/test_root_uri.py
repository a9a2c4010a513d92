"""``initialize`` refuses a workspace URI or path that cannot name a folder with -32602 naming
the field (docs/SECURITY.md, "Leftovers of the earlier suite"): it was accepted, and then every
``dsh/status`` failed with an internal error. The value itself is never echoed."""

from __future__ import annotations

import pytest
from support.rawrpc import RawServer


def _params(ws, **root):
    return {"processId": None, "capabilities": {}, "initializationOptions": {"suggester": {"enabled": True}}, **root}


@pytest.mark.parametrize(
    ("root", "message"),
    [
        ({"rootUri": "{ws}%00evil"}, "rootUri: the path contains a NUL character"),
        ({"rootUri": "{ws}%00"}, "rootUri: the path contains a NUL character"),
        ({"rootUri": "{ws}\u0000evil"}, "rootUri: the path contains a NUL character"),
        ({"rootUri": "{ws}/a%FFb"}, "rootUri: the path is not UTF-8 once percent-decoded"),
        ({"rootUri": "{ws}/a%C3"}, "rootUri: the path is not UTF-8 once percent-decoded"),
        ({"rootUri": "{ws}\ud800"}, "rootUri: the path is not valid Unicode (a lone surrogate)"),
        ({"rootUri": "{ws}\udcff"}, "rootUri: the path is not valid Unicode (a lone surrogate)"),
        ({"rootUri": "file://[broken/x"}, "rootUri: not a valid URI"),
        ({"rootUri": "{ws}/" + "a" * 5000}, "rootUri: the path is longer than 4095 bytes"),
        ({"rootUri": "{ws}/" + "%C3%A9" * 200}, "rootUri: a folder name on the path is longer than 255 bytes"),
        (
            {"workspaceFolders": [{"uri": "{ws}%00", "name": "w"}], "rootUri": "{ws}"},
            "workspaceFolders[0].uri: the path contains a NUL character",
        ),
        ({"rootUri": None, "rootPath": "{path}\u0000x"}, "rootPath: the path contains a NUL character"),
        (
            {"rootUri": None, "rootPath": "{path}/" + "b" * 300},
            "rootPath: a folder name on the path is longer than 255 bytes",
        ),
    ],
    ids=[
        "pct00",
        "pct00-end",
        "raw-nul",
        "pctFF",
        "truncated-utf8",
        "lone-surrogate",
        "escaped-surrogate",
        "bad-host",
        "too-long",
        "name-too-long",
        "workspace-folder",
        "root-path-nul",
        "root-path-name",
    ],
)
def test_an_unusable_root_is_refused_naming_the_field(dsh_home, tmp_path, root, message):
    ws = tmp_path / "ws"
    ws.mkdir()

    def fill(value):
        if isinstance(value, str):
            return value.replace("{ws}", ws.as_uri()).replace("{path}", str(ws))
        if isinstance(value, list):
            return [{k: fill(v) for k, v in item.items()} for item in value]
        return value

    srv = RawServer(dsh_home)
    try:
        reply = srv.request("initialize", _params(ws, **{k: fill(v) for k, v in root.items()}), timeout=60)
        assert reply["error"] == {"code": -32602, "message": message}
        # nothing was initialised: requests are refused as before initialize, not failed
        assert srv.request("dsh/status", {}, timeout=60)["error"]["code"] == -32002
        # and the client may try again with a usable root
        again = srv.request("initialize", _params(ws, rootUri=ws.as_uri()), timeout=60)
        assert "result" in again, again
        status = srv.request("dsh/status", {}, timeout=60)
        assert status["result"]["workspace"] == str(ws)
    finally:
        srv.close()


@pytest.mark.parametrize(
    ("root", "workspace"),
    [
        ({"rootUri": "{ws}"}, "{path}"),
        ({"rootUri": "{ws}/a%20b%2Fc"}, "{path}/a b/c"),  # encoded characters that decode fine
        ({"rootUri": "{ws}/caf%C3%A9"}, "{path}/café"),
        ({"rootUri": "{ws}/%zz"}, "{path}/%zz"),  # not an escape: kept as written
        ({"rootUri": "untitled:Untitled-1"}, None),  # not a file: no workspace folder
        ({"rootUri": None, "rootPath": "{path}"}, "{path}"),
    ],
    ids=["plain", "encoded", "utf8", "percent-literal", "other-scheme", "root-path"],
)
def test_a_usable_root_is_still_accepted(dsh_home, tmp_path, root, workspace):
    ws = tmp_path / "ws"
    ws.mkdir()
    fill = {"{ws}": ws.as_uri(), "{path}": str(ws)}

    def sub(value):
        for k, v in fill.items():
            value = value.replace(k, v) if isinstance(value, str) else value
        return value

    srv = RawServer(dsh_home)
    try:
        reply = srv.request("initialize", _params(ws, **{k: sub(v) for k, v in root.items()}), timeout=60)
        assert "result" in reply, reply
        status = srv.request("dsh/status", {}, timeout=60)
        assert status["result"]["workspace"] == sub(workspace)
    finally:
        srv.close()
