"""A lost Neo4j server is one line: a server that is down, or that goes away in the middle of
`cg index`, gives one line on stderr and a non-zero exit within seconds, never half a minute of
driver warnings and an internal error."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from tests.cli.test_cli_neo4j import NEO4J, needs_server
from tests.conftest import cg_command, copy_shop


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _one_line(result, *words: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1, result.stderr
    assert all(word in lines[0] for word in words), lines[0]
    assert "internal error" not in lines[0]
    return lines[0]


def test_a_server_that_is_down_is_one_line_for_queries_and_index(shop_copy: Path) -> None:
    env = {**NEO4J, "NEO4J_URI": f"bolt://127.0.0.1:{_free_port()}"}  # nothing listens there
    for args in (
        ("callers", "charge_card", "--repo", str(shop_copy)),
        ("cypher", "MATCH (s:Symbol) RETURN count(s)", "--repo", str(shop_copy)),
        ("index", str(shop_copy)),
    ):
        started = time.monotonic()
        result = cg_command(*args, check=False, env=env)
        assert time.monotonic() - started < 30
        _one_line(result, "Neo4j", "is the server running?")


class _CuttingProxy:
    """A TCP relay to the real server that drops every connection, and stops listening, once the
    client has sent ``cut_after`` bytes: a server lost in the middle of a run, at a chosen point."""

    def __init__(self, upstream: tuple[str, int], cut_after: int) -> None:
        self.upstream, self.cut_after, self.sent = upstream, cut_after, 0
        self.cut = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.cut.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, outgoing: bool) -> None:
        while not self.cut.is_set():
            try:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
            except OSError:
                break
            if outgoing:
                with self._lock:
                    self.sent += len(data)
                if self.sent >= self.cut_after:
                    self.close()

    def close(self) -> None:
        self.cut.set()
        with self._lock:
            for sock in [self.listener, *self._sockets]:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()


class TestLostMidRun:
    pytestmark = needs_server

    @pytest.mark.parametrize("cut_after", [40_000, 400_000], ids=["schema", "writes"])
    def test_a_server_lost_during_index_is_one_line(self, tmp_path: Path, cut_after: int) -> None:
        _lost_during_index(tmp_path, cut_after)


def _lost_during_index(tmp_path: Path, cut_after: int) -> None:
    uri = NEO4J["NEO4J_URI"].removeprefix("bolt://")
    host, port = uri.rsplit(":", 1)
    proxy = _CuttingProxy((host, int(port)), cut_after)
    repo = copy_shop(tmp_path / "shop")
    env = {**NEO4J, "NEO4J_URI": f"bolt://127.0.0.1:{proxy.port}"}
    try:
        started = time.monotonic()
        result = cg_command("index", str(repo), "--rebuild", check=False, env=env)
        seconds = time.monotonic() - started
    finally:
        proxy.close()
    assert proxy.cut.is_set(), f"the run sent only {proxy.sent} bytes: the cut never happened"
    _one_line(result, "Neo4j", "is the server running?")
    assert seconds < 60, f"took {seconds:.0f} s to give up"
    query = cg_command("callers", "charge_card", "--repo", str(repo), check=False, env=env)
    _one_line(query, "Neo4j")
