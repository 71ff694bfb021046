"""The owner of one loopback TCP socket, asked of the kernel by its addresses (sock_diag),
agrees with the kernel's socket table and never names a socket it was not asked about."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import time
from collections.abc import Iterator

import pytest

from launcher.backend.callers import peer_uid
from launcher.backend.sock_diag import held_by_owner, owner_uid

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="netlink: Linux")


def _ends(sock: socket.socket) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    host, port = sock.getsockname()[:2]
    return ipaddress.ip_address(host), port


@pytest.fixture
def connection() -> Iterator[tuple[socket.socket, socket.socket]]:
    """(client, listener) of a live loopback connection."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()) as client:
            accepted, _ = listener.accept()
            with accepted:
                yield client, listener


def test_a_live_connections_client_end_is_owned_by_this_user(
    connection: tuple[socket.socket, socket.socket],
) -> None:
    client, listener = connection
    assert owner_uid(socket.AF_INET, _ends(client), _ends(listener)) == os.geteuid()
    assert peer_uid(client.getsockname(), listener.getsockname()) == os.geteuid()


def test_no_socket_at_those_addresses_has_no_owner(
    connection: tuple[socket.socket, socket.socket],
) -> None:
    client, listener = connection
    address, port = _ends(client)
    other_port = port + 1 if port < 65535 else port - 1
    assert owner_uid(socket.AF_INET, (address, other_port), _ends(listener)) is None


def test_a_listener_is_never_taken_for_a_callers_end(
    connection: tuple[socket.socket, socket.socket],
) -> None:
    # A caller's end at the listener's address with no such connection: the kernel falls
    # back from the established table to the listener, whose owner must not be named.
    _, listener = connection
    nobody_there = (ipaddress.ip_address("127.0.0.1"), 9)  # no connection comes from here
    assert owner_uid(socket.AF_INET, _ends(listener), nobody_there) is None


def _proc_state(sock_end: tuple[str, int]) -> str | None:
    """The hex TCP state /proc/net/tcp shows for the socket whose own end is `sock_end`."""
    want = f"{int(ipaddress.IPv4Address(sock_end[0])):08X}"
    want = "".join(reversed([want[i : i + 2] for i in range(0, 8, 2)]))  # little-endian
    with open("/proc/net/tcp", encoding="ascii") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[1] == f"{want}:{sock_end[1]:04X}":
                return fields[3]
    return None


def test_a_caller_that_closed_its_end_has_no_owner() -> None:
    # The caller's end, orphaned by close() while serve's end stays open, goes FIN_WAIT2 as
    # a timewait socket, which the kernel reports with uid 0: that must not name root.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        with accepted:
            caller = client.getsockname()
            client.close()
            deadline = time.monotonic() + 30
            while _proc_state(caller) == "01" and time.monotonic() < deadline:
                time.sleep(0.01)  # the FIN's ACK on loopback: at once, unless very busy
            assert _proc_state(caller) != "01"
            addr = (ipaddress.ip_address(caller[0]), caller[1])
            assert owner_uid(socket.AF_INET, addr, _ends(listener)) is None
            assert peer_uid(caller, listener.getsockname()) is None


@pytest.mark.parametrize(
    ("state", "inode", "owned"),
    [
        (1, 4242, True),
        (1, 0, False),
        (5, 0, False),
        (5, 4242, False),
        (6, 0, False),
        (3, 0, False),
        (8, 4242, False),
        (10, 4242, False),
        (12, 0, False),
    ],
)
def test_only_an_established_socket_a_process_holds_has_an_owner(
    state: int, inode: int, owned: bool
) -> None:
    assert held_by_owner(state, inode) is owned
