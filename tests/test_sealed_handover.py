"""The sealed hand-over (procs/sealed.py): secrets and a Job sealed to the key a worker
offers open there and nowhere else; the box holds neither in the clear; a tampered box,
one sealed to another key or a malformed answer is refused. And a real `worker --sealed`:
it offers a key before it reads anything, runs the Job from the box, and the secrets it
opens are hidden and masked."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.backend import protocol
from launcher.backend.protocol import Job
from launcher.procs.hidden import PulledHandover
from launcher.procs.sealed import OFFER_NONCE_VAR, SEAL_KEY_OP, SENDER_VAR, DriverKey, Opening

SECRET = "sk-sealed-0123456789abcdef"
PROMPT = "a prompt only the worker may read"
JOB_LINE = Job(prompt=PROMPT).to_line().decode()
LIMIT_S = 120


def test_a_sealed_box_opens_with_the_offered_key_only() -> None:
    driver = DriverKey()
    worker, other = Opening(driver.public), Opening(driver.public)
    box = driver.seal(worker.offer(), {"SUBAGENT_TEST_API_KEY": SECRET}, JOB_LINE)
    wire = json.dumps(box)
    for clear in (SECRET, PROMPT):
        assert clear not in wire
        for form in (base64.b64encode(clear.encode()).decode(), clear.encode().hex()):
            assert form not in wire
    opened = worker.open(json.loads(wire))
    assert opened.secrets == {"SUBAGENT_TEST_API_KEY": SECRET}
    assert opened.job == JOB_LINE
    with pytest.raises(ValueError, match="does not open"):
        other.open(box)  # replayed to another worker of the same driver


def test_a_box_from_another_sender_key_is_refused() -> None:
    driver, intruder = DriverKey(), DriverKey()
    worker = Opening(driver.public)
    # Whoever saw the worker's public key seals a Job of its own to it: refused.
    forged = intruder.seal(worker.offer(), {"K": "forged"}, JOB_LINE)
    with pytest.raises(ValueError, match="not from the driver"):
        worker.open(forged)
    # Nor does relabelling the box with the driver's public key make it open.
    with pytest.raises(ValueError, match="does not open"):
        worker.open({**forged, "key": driver.public})
    assert worker.open(driver.seal(worker.offer(), {"K": SECRET}, JOB_LINE)).secrets == {
        "K": SECRET
    }


def test_an_offer_echoes_the_nonce_and_a_bad_driver_key_is_refused() -> None:
    driver = DriverKey()
    assert Opening(driver.public, "n-123").offer()["nonce"] == "n-123"
    assert "nonce" not in Opening(driver.public).offer()
    for bad in ("", "!!", base64.b64encode(b"short").decode()):
        with pytest.raises(ValueError, match="sealed hand-over"):
            Opening(bad)


def test_a_tampered_or_malformed_answer_is_refused() -> None:
    driver = DriverKey()
    worker = Opening(driver.public)
    box = driver.seal(worker.offer(), {"K": SECRET}, JOB_LINE)
    raw = bytearray(base64.b64decode(box["box"]))
    raw[0] ^= 1
    with pytest.raises(ValueError, match="does not open"):
        worker.open({**box, "box": base64.b64encode(bytes(raw)).decode()})
    for bad in ([], {"op": "steer"}, {**box, "nonce": "!!"}, {**box, "key": 5}):
        with pytest.raises(ValueError, match="sealed hand-over"):
            worker.open(bad)
    with pytest.raises(ValueError, match="X25519"):
        driver.seal({"op": SEAL_KEY_OP, "key": base64.b64encode(b"short").decode()}, {}, JOB_LINE)


def test_a_sealed_worker_offers_first_and_masks_what_it_opens(tmp_path: Path) -> None:
    script = tmp_path / "say.yaml"
    script.write_text(json.dumps({"steps": [{"say": f"the key is {SECRET}"}]}))
    job = Job(prompt="go", model=f"scripted:{script}", workspace=str(tmp_path))
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SUBAGENT_HOME": str(tmp_path / "state"),
    }
    driver = DriverKey()
    handover = PulledHandover({"secret": {SENDER_VAR: driver.public, OFFER_NONCE_VAR: "n1"}}, env)
    worker = subprocess.Popen(
        [sys.executable, "-P", "-m", "launcher.backend.worker", "--sealed"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=handover.env,
        pass_fds=(handover.fd,),
    )
    handover.answer(worker.pid)
    assert worker.stdin is not None and worker.stdout is not None
    offer = protocol.decode(worker.stdout.readline())  # nothing was written to it yet
    assert offer is not None and offer["op"] == SEAL_KEY_OP and offer["nonce"] == "n1"
    sealed = driver.seal(offer, {"SUBAGENT_TEST_API_KEY": SECRET}, job.to_line().decode())
    out, _ = worker.communicate(protocol.encode(sealed), timeout=LIMIT_S)
    text = out.decode()
    assert "the key is ****" in text, text
    assert SECRET not in text


@pytest.mark.parametrize("forger", ["another key", "another sender"])
def test_a_sealed_worker_refuses_a_box_it_cannot_open(tmp_path: Path, forger: str) -> None:
    driver = DriverKey()
    handover = PulledHandover(
        {"secret": {SENDER_VAR: driver.public}},
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    worker = subprocess.Popen(
        [sys.executable, "-P", "-m", "launcher.backend.worker", "--sealed"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=handover.env,
        pass_fds=(handover.fd,),
    )
    handover.answer(worker.pid)
    assert worker.stdout is not None
    offer = protocol.decode(worker.stdout.readline())
    assert offer is not None
    if forger == "another key":  # the driver's box, sealed to someone else's key
        forged, why = (
            driver.seal(Opening(driver.public).offer(), {"K": SECRET}, JOB_LINE),
            "does not open",
        )
    else:  # a Job of its own sealed to this worker's key by another process
        forged, why = DriverKey().seal(offer, {"K": SECRET}, JOB_LINE), "not from the driver"
    out, _ = worker.communicate(protocol.encode(forged), timeout=LIMIT_S)
    assert worker.returncode == 2
    (end,) = [e for e in map(protocol.decode, out.splitlines()) if e]
    assert end["type"] == "agent_end" and why in end["error"]


def test_a_sealed_worker_with_no_driver_key_refuses_to_start(tmp_path: Path) -> None:
    handover = PulledHandover({"secret": {}}, {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    worker = subprocess.Popen(
        [sys.executable, "-P", "-m", "launcher.backend.worker", "--sealed"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env=handover.env,
        pass_fds=(handover.fd,),
    )
    handover.answer(worker.pid)
    out, _ = worker.communicate(b"", timeout=LIMIT_S)
    assert worker.returncode == 2
    (end,) = [e for e in map(protocol.decode, out.splitlines()) if e]
    assert end["type"] == "agent_end" and "driver key" in end["error"]
