"""A Ray that `batch --engine ray` starts is reachable from this machine only, and quiet.

While a task runs (its shell waits for a file the test writes, so nothing depends on the
machine's speed), every TCP socket the batch's process tree listens on is read from
/proc/net/tcp{,6}: each must be a loopback address, and so must the raylet's node address.
Ray's own log lines land in SUBAGENT_HOME/batch/ray.log, not on the terminal.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
from pathlib import Path

import pytest

from tests.e2e.batch_support import need_ray, thinking
from tests.e2e.conftest import Subagent, wait_until, write_config
from tests.e2e.test_batch_ray import RAY_LIMIT_S

pytestmark = pytest.mark.e2e

LISTEN = "0A"
"""The TCP state code of a listening socket in /proc/net/tcp."""


def descendants(root: int) -> list[int]:
    """`root` and every live process below it (by parent pid)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # Field 4 is the parent pid; the name (field 2) may hold spaces, in parentheses.
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [root], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def cmdline(pid: int) -> list[bytes]:
    """A process's arguments ([] once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def hex_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address as /proc/net/tcp{,6} writes it (32-bit words in host byte order)."""
    raw = bytes.fromhex(text)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if len(words) == 4:
        return ipaddress.IPv4Address(words)
    address = ipaddress.IPv6Address(words)
    return address.ipv4_mapped or address


def listening() -> dict[str, ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """socket inode -> local address of every listening TCP socket on this machine."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == LISTEN:
                found[fields[9]] = hex_address(fields[1].split(":")[0])
    return found


def test_the_address_reader_knows_loopback_from_any() -> None:
    # Without this, a reader that always said "loopback" would pass the test below.
    assert hex_address("0100007F") == ipaddress.IPv4Address("127.0.0.1")
    assert hex_address("00000000") == ipaddress.IPv4Address("0.0.0.0")
    assert hex_address("0000000000000000FFFF00000100007F") == ipaddress.IPv4Address("127.0.0.1")
    assert hex_address("00000000000000000000000000000000") == ipaddress.IPv6Address("::")
    assert not hex_address("00000000000000000000000000000000").is_loopback


def test_a_started_ray_listens_on_loopback_only_and_logs_to_a_file(
    tmp_path: Path, subagent: Subagent
) -> None:
    need_ray()
    config = write_config(tmp_path / "cfg", {})
    go = tmp_path / "go"
    wait = f"for i in $(seq 2400); do [ -e {go} ] && exit 0; sleep 0.1; done; exit 1"
    script = tmp_path / "wait.yaml"
    script.write_text(
        json.dumps({"steps": [{"call": [{"tool": "bash", "args": {"command": wait}}]},
                              {"say": "went"}]})
    )  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t0", "prompt": "wait", "model": f"scripted:{script}"}))
    out = tmp_path / "results.jsonl"
    batch = subagent.start(
        "batch", str(tasks), "--config-dir", str(config), "--out", str(out),
        "--workspace", str(tmp_path), "--engine", "ray",
    )  # fmt: skip
    try:
        assert wait_until(lambda: thinking(subagent, "wait"), RAY_LIMIT_S), "no task started"
        tree = descendants(batch.pid)
        sockets = listening()
        bound = {
            (pid, str(sockets[inode]))
            for pid in tree
            for inode in socket_inodes(pid)
            if inode in sockets
        }
        raylets = [argv for argv in map(cmdline, tree) if any(b"raylet" in a for a in argv)]
        go.touch()
        batch.wait(timeout=RAY_LIMIT_S)
    finally:
        if batch.poll() is None:
            batch.send_signal(signal.SIGTERM)
            batch.wait(timeout=RAY_LIMIT_S)
    stderr = batch.stderr.read() if batch.stderr else ""
    assert batch.returncode == 0, stderr

    assert bound, "found no listening socket of the batch's Ray (the check would be vacuous)"
    wide = sorted(
        (pid, address) for pid, address in bound if not ipaddress.ip_address(address).is_loopback
    )
    assert wide == [], f"Ray sockets listening beyond loopback: {wide}"
    assert raylets, "no raylet among the batch's processes"
    nodes = {
        arg.split(b"=", 1)[1].decode()
        for argv in raylets
        for arg in argv
        if arg.startswith(b"--node_ip_address=")
    }
    assert nodes == {"127.0.0.1"}

    # Ray's own lines: in the log file, not on the user's terminal.
    assert "Started a local Ray instance" not in stderr
    assert "WARNING" not in stderr, stderr
    ray_log = subagent.home / "batch" / "ray.log"
    assert "Started a local Ray instance" in ray_log.read_text()
    assert ray_log.stat().st_mode & 0o777 == 0o600
