"""The owner of one local TCP socket, asked of the kernel by its exact addresses (Linux).

serve's loopback listener without tokens lets in only its own user, so every request needs
the uid owning the caller's end of the connection. /proc/net/tcp answers too, but the
kernel writes out its whole socket table for each read (~10 ms on a busy machine, the
larger part of a spawn's cost over HTTP); a sock_diag request names one socket by its
addresses and ports, and the kernel looks it up in its hash table. Standard netlink
messages (linux/inet_diag.h); any failure returns None and the caller falls back.
"""

from __future__ import annotations

import ipaddress
import socket
import struct

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
NOCOOKIE = 0xFFFFFFFF
"""INET_DIAG_NOCOOKIE: the socket is named by its addresses alone."""
ALL_STATES = 0xFFFFFFFF
NLMSG_HEADER = struct.Struct("=IHHII")
"""nlmsghdr: length, type, flags, sequence, port id."""
REQUEST = struct.Struct("=BBBBI")
"""inet_diag_req_v2 before its socket id: family, protocol, extensions, pad, states."""
SOCKID = struct.Struct(">HH16s16s")
"""inet_diag_sockid's ports and addresses (network byte order); then if and cookie."""
SOCKID_TAIL = struct.Struct("=III")
MSG_HEAD = struct.Struct("=BBBB")
"""inet_diag_msg before its socket id: family, state, timer, retransmits."""
MSG_TAIL = struct.Struct("=IIIII")
"""inet_diag_msg after its socket id: expires, rqueue, wqueue, uid, inode."""
ESTABLISHED = 1
"""The one TCP state a caller's end is in while it waits for an answer. Others are refused:
a timewait socket reports its substate (FIN_WAIT2 or TIME_WAIT) with uid 0, as do request
sockets (SYN_RECV, NEW_SYN_RECV); a LISTEN socket is never the caller's end; and a caller
that half-closed or closed (FIN_WAIT1/2, CLOSING, LAST_ACK, CLOSE_WAIT) can be told no."""
TIMEOUT_S = 1.0
"""A lookup is one hash probe in the kernel; a reply later than this means something else
is wrong, and the caller falls back."""
RECV_BYTES = 8192


def held_by_owner(state: int, inode: int) -> bool:
    """Whether a socket the kernel reports in `state` with `inode` has a uid to believe:
    established and still held by a process (an orphaned socket has inode 0)."""
    return state == ESTABLISHED and inode != 0


def _packed(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bytes:
    return address.packed.ljust(16, b"\0")


def owner_uid(
    family: int,
    local: tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int],
    remote: tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int],
) -> int | None:
    """The uid owning the TCP socket whose own end is `local` and whose other end is
    `remote` (`family`: AF_INET or AF_INET6, the addresses' own); None if the kernel has
    no such socket or cannot be asked."""
    sockid = SOCKID.pack(local[1], remote[1], _packed(local[0]), _packed(remote[0]))
    body = REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, ALL_STATES)
    body += sockid + SOCKID_TAIL.pack(0, NOCOOKIE, NOCOOKIE)
    header = NLMSG_HEADER.pack(NLMSG_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY,
                               NLM_F_REQUEST, 1, 0)  # fmt: skip
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as nl:
            nl.settimeout(TIMEOUT_S)
            nl.sendto(header + body, (0, 0))
            reply = nl.recv(RECV_BYTES)
    except (OSError, AttributeError):  # no netlink here (not Linux), or no answer
        return None
    return _uid_of(reply, family, sockid)


def _uid_of(reply: bytes, family: int, sockid: bytes) -> int | None:
    """The uid in a SOCK_DIAG_BY_FAMILY reply, if it is the socket asked about."""
    if len(reply) < NLMSG_HEADER.size:
        return None
    length, kind, _, _, _ = NLMSG_HEADER.unpack_from(reply)
    if kind != SOCK_DIAG_BY_FAMILY or length > len(reply):
        return None  # NLMSG_ERROR (no such socket) or anything unexpected
    offset = NLMSG_HEADER.size
    need = MSG_HEAD.size + SOCKID.size + SOCKID_TAIL.size + MSG_TAIL.size
    if length < offset + need:
        return None
    got_family, state = MSG_HEAD.unpack_from(reply, offset)[:2]
    got_id = reply[offset + MSG_HEAD.size : offset + MSG_HEAD.size + SOCKID.size]
    if got_family != family or got_id != sockid[: SOCKID.size]:
        return None  # the kernel answered about another socket: believe nothing
    tail = offset + MSG_HEAD.size + SOCKID.size + SOCKID_TAIL.size
    uid, inode = MSG_TAIL.unpack_from(reply, tail)[3:5]
    if not held_by_owner(state, inode):
        return None
    return int(uid)
