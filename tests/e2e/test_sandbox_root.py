"""Root in the sandbox is not root: the model's shell, run by a root launcher, cannot read
or write the launcher's memory (ptrace, process_vm_readv, /proc/PID/task/TID/mem), cannot
signal the launcher or its confined thread, cannot make device nodes, and cannot change
the mode, owner or times of a file outside the writable roots. What must keep working,
in the same runs: signals to the shell's own children, chmod and touch in the workspace."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.sandbox_support import plant, results, run_commands

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(mechanism_problem() is not None, reason=f"{mechanism_problem()}"),
    pytest.mark.skipif(os.geteuid() != 0, reason="these attacks are root's"),
]

API_KEY = "sk-launcher-ABCdef0123456789-memory"

FIND_LAUNCHER = """
import os, sys
def launcher():
    # Up the parents to the launcher; its confined thread is the one with a seccomp filter.
    # The host's /proc names them: in the commands' PID namespace the parent is out of sight.
    pid = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[1])
    while pid > 1:
        cmdline = open(f'/proc/{pid}/cmdline', 'rb').read()
        if b'subagent' in cmdline or b'launcher' in cmdline:
            for tid in os.listdir(f'/proc/{pid}/task'):
                status = open(f'/proc/{pid}/task/{tid}/status').read()
                if 'Seccomp:\t2' in status:
                    return pid, int(tid)
        pid = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])
    sys.exit('no launcher found')
pid, tid = launcher()
print('launcher', pid, 'thread', tid)
"""

READ_MEMORY = (
    FIND_LAUNCHER
    + """
import ctypes
key = sys.argv[1].encode()
libc = ctypes.CDLL(None, use_errno=True)
# ptrace(PTRACE_ATTACH) on the confined thread and on the process.
for target in (tid, pid):
    rc = libc.ptrace(16, target, 0, 0)
    print('ptrace', target, rc, ctypes.get_errno())
    if rc == 0:
        print('ATTACHED')
# process_vm_readv of a page of the launcher's heap: needs an address, from maps.
try:
    maps = open(f'/proc/{pid}/task/{tid}/maps').read().splitlines()
    print('MAPS', len(maps))
except OSError as exc:
    maps = []
    print('maps refused', exc.errno)
class Iov(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
buf = ctypes.create_string_buffer(4096)
local = Iov(ctypes.addressof(buf), 4096)
start = int(maps[0].split('-')[0], 16) if maps else 0x400000
remote = Iov(start, 4096)
rc = libc.syscall(310, pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print('process_vm_readv', rc, ctypes.get_errno())
if rc > 0:
    print('VMREAD')
# /proc/PID/task/TID/mem: open it, then search every readable mapping for the key.
for path in (f'/proc/{pid}/task/{tid}/mem', f'/proc/{pid}/mem'):
    for mode in ('rb', 'r+b'):
        try:
            mem = open(path, mode, buffering=0)
        except OSError as exc:
            print('mem refused', path, mode, exc.errno)
            continue
        print('MEM OPENED', path, mode)
        for line in maps:
            fields = line.split()
            if 'r' not in fields[1]:
                continue
            lo, hi = (int(x, 16) for x in fields[0].split('-'))
            try:
                mem.seek(lo)
                if key in mem.read(hi - lo):
                    print('FOUND THE KEY')
            except (OSError, ValueError, OverflowError):
                pass
"""
)

SIGNALS = (
    FIND_LAUNCHER
    + """
import ctypes, signal
libc = ctypes.CDLL(None, use_errno=True)
def tried(what, rc):
    print(what, 'ok' if rc == 0 else f'refused {ctypes.get_errno()}')
# Signal 0: every check a real signal meets, nothing delivered.
tried('tgkill0', libc.syscall(234, pid, tid, 0))
tried('tgkill0-main', libc.syscall(234, pid, pid, 0))
tried('tkill0', libc.syscall(200, tid, 0))
tried('kill0', libc.kill(pid, 0))
tried('kill0-tid', libc.kill(tid, 0))
tried('kill0-all', libc.kill(-1, 0))
group = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[2])  # host's number
tried('kill0-group', libc.kill(-group, 0))
try:
    pidfd = os.pidfd_open(pid)  # the launcher's pid is not one in this PID namespace
except OSError:
    pidfd = -1
tried('pidfd0', libc.syscall(424, pidfd, 0, None, 0))
info = (ctypes.c_byte * 128)()
tried('sigqueue0', libc.syscall(129, pid, 0, info))
# SIGIO with SIGKILL, aimed at the launcher.
r, w = os.pipe()
tried('setown', libc.fcntl(r, 8, pid))
# The real thing last: on a launcher that is not guarded this kills it.
tried('tgkill-stop', libc.syscall(234, pid, tid, signal.SIGSTOP))
tried('tgkill-kill', libc.syscall(234, pid, tid, signal.SIGKILL))
"""
)


def _py(code: str, *args: str) -> str:
    return f"python3 -c {json.dumps(code)} " + " ".join(args)


def _script(where: Path, name: str, code: str) -> str:
    """`code` saved in the workspace as `name`; the command that runs it."""
    (where / name).write_text(code)
    return f"python3 {name}"


def test_root_shell_cannot_reach_the_launchers_memory(tmp_path: Path) -> None:
    p = plant(tmp_path)
    attack = _script(p.workspace, "memory.py", READ_MEMORY) + f" {API_KEY}"
    run = run_commands(p, [attack], env={"OPENAI_API_KEY": API_KEY})
    assert run.code == 0, run.stderr
    (out,) = results(run)
    text = str(out["content"])
    assert "maps refused" in text or "MAPS" in text, text  # the script got that far
    for success in ("ATTACHED", "VMREAD", "MEM OPENED", "FOUND THE KEY"):
        assert success not in text, text
    assert text.count("ptrace") == 2 and "process_vm_readv -1" in text, text
    assert text.count("mem refused") == 4, text
    assert API_KEY not in json.dumps(run.events)


def test_root_shell_cannot_signal_the_launcher_but_its_own_children(tmp_path: Path) -> None:
    p = plant(tmp_path)
    own = "sleep 100 & kill %1; wait %1; echo own child ended: $?"
    run = run_commands(p, [_script(p.workspace, "signals.py", SIGNALS), own, "echo still here"])
    assert run.code == 0, run.stderr
    first, second, third = results(run)
    text = str(first["content"])
    names = ("tgkill0", "tgkill0-main", "tkill0", "kill0", "kill0-tid", "kill0-all")
    names += ("kill0-group", "pidfd0", "sigqueue0", "setown", "tgkill-stop", "tgkill-kill")
    for name in names:
        assert f"{name} refused" in text, text
    assert "own child ended: 143" in str(second["content"]), second
    assert "still here" in str(third["content"])


def test_root_shell_makes_no_device_node_and_changes_nothing_outside(tmp_path: Path) -> None:
    p = plant(tmp_path)
    victim = p.outside / "victim"
    victim.write_text("x")
    victim.chmod(0o600)
    os.utime(victim, (1_000_000_000, 1_000_000_000))
    before = victim.stat()
    dir_mode = p.outside.stat().st_mode
    commands = [
        "mknod null-again c 1 3; echo mknod $?",
        "mknod disk b 8 0; echo mknod-block $?",
        f"chmod 777 {victim}; echo chmod $?",
        f"chown 65534:65534 {victim}; echo chown $?",
        f"touch {victim}; echo touch $?",
        _py(f"import os; os.setxattr('{victim}', 'user.x', b'1')") + "; echo xattr $?",
        f"chmod 700 {p.outside}; echo chmod-dir $?",
        # Allowed: the workspace's own files.
        "mkfifo pipe && echo x > f && chmod 755 f && touch -d 2001-01-01 f && stat -c %a f",
    ]
    run = run_commands(p, commands)
    assert run.code == 0, run.stderr
    out = [str(r["content"]) for r in results(run)]
    assert out[0].rstrip().endswith("mknod 1") and out[1].rstrip().endswith("mknod-block 1"), out
    for line, what in zip(out[2:7], ("chmod", "chown", "touch", "xattr", "chmod-dir"), strict=True):
        assert line.rstrip().endswith(f"{what} 1"), out
    after = victim.stat()
    assert (after.st_mode, after.st_uid, after.st_mtime) == (
        before.st_mode,
        before.st_uid,
        before.st_mtime,
    )
    assert not os.listxattr(victim)
    assert p.outside.stat().st_mode == dir_mode
    assert "755" in out[7], out
    assert not (p.workspace / "null-again").exists() and not (p.workspace / "disk").exists()
