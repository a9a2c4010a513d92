"""The pygls private API the transport relies on, pinned: an upgrade that moves it fails here."""

from __future__ import annotations

from importlib.metadata import version

from dsh_sidecar.lsp.pygls_adapter import PRIVATE_NAMES, PYGLS_MAJOR, PyglsPeer
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol


def _protocol() -> LanguageServerProtocol:
    return LanguageServer("adapter-test", "0", protocol_cls=LanguageServerProtocol).protocol


def test_pygls_is_the_major_version_the_adapter_was_written_for():
    assert int(version("pygls").split(".")[0]) == PYGLS_MAJOR


def test_the_private_names_still_exist_on_a_pygls_protocol():
    proto = _protocol()
    for name in PRIVATE_NAMES:
        assert hasattr(proto, name), f"pygls {version('pygls')} has no {name}: update lsp/pygls_adapter.py"
    assert callable(proto._send_data) and proto._shutdown is False


def test_send_raw_writes_one_frame_through_the_protocol_writer():
    proto = _protocol()
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

    proto.set_writer(Writer())
    PyglsPeer(proto).send_raw({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "x"}})
    (frame,) = written
    header, body = frame.split(b"\r\n\r\n", 1)
    assert header.startswith(b"Content-Length: ") and int(header.split(b": ")[1].split(b"\r\n")[0]) == len(body)
    assert b'"id": 7' in body or b'"id":7' in body


def test_shut_down_follows_the_protocol_flag():
    proto = _protocol()
    peer = PyglsPeer(proto)
    assert peer.shut_down is False
    proto._shutdown = True
    assert peer.shut_down is True
