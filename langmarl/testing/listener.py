"""`LoopbackListener`: a UDP and a TCP socket on one loopback port, to show that nothing
sandboxed code sends reaches the host."""

from __future__ import annotations

import contextlib
import socket


class LoopbackListener:
    """Listens on ``127.0.0.1:port`` for datagrams and TCP connections; use as a context
    manager. :meth:`received` waits ``wait_s`` for anything that arrives."""

    def __init__(self, wait_s: float = 0.5) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(4)
        self.tcp.settimeout(wait_s)
        self.port: int = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.settimeout(wait_s)

    def received(self) -> list[bytes]:
        """Every datagram, and the first bytes of a TCP connection, that reached the port."""
        got = []
        with contextlib.suppress(TimeoutError):
            while True:
                got.append(self.udp.recvfrom(65536)[0])
        with contextlib.suppress(TimeoutError):
            connection, _ = self.tcp.accept()
            got.append(b"tcp connection: " + connection.recv(65536))
            connection.close()
        return got

    def close(self) -> None:
        self.udp.close()
        self.tcp.close()

    def __enter__(self) -> LoopbackListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
