"""The owner of one loopback TCP socket, asked of the kernel by its addresses (sock_diag),
agrees with the kernel's socket table and never names a socket it was not asked about."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterator

import pytest

from launcher.backend.callers import peer_uid
from launcher.backend.sock_diag import owner_uid

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
