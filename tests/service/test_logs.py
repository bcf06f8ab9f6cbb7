"""``memvault logs``: the end of the server's log, across its rotated copies, and followed
as it grows and rotates."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from memvault import service
from tests.helpers import wait_for


def write_lines(path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        file.writelines(f"{line}\n" for line in lines)


def test_logs_prints_the_last_lines_of_the_server_log(place, memvault):
    write_lines(place.log, [f"line {n}" for n in range(1, 101)])
    shown = memvault("logs", "-n", "3")
    assert shown.stdout.splitlines() == ["line 98", "line 99", "line 100"]
    assert memvault("logs").stdout.splitlines() == [f"line {n}" for n in range(51, 101)]


def test_just_after_a_rotation_the_last_lines_come_from_the_rotated_copy_too(place, memvault):
    write_lines(place.log.with_name("server.log.2"), ["oldest"])
    write_lines(place.log.with_name("server.log.1"), [f"before {n}" for n in range(1, 11)])
    write_lines(place.log, ["after 1", "after 2"])
    shown = memvault("logs", "-n", "4")
    assert shown.stdout.splitlines() == ["before 9", "before 10", "after 1", "after 2"]
    everything = memvault("logs", "-n", "100").stdout.splitlines()
    assert everything[0] == "oldest" and len(everything) == 13


def test_without_a_log_logs_says_where_it_would_be(place, memvault):
    missing = memvault("logs", code=1)
    assert f"no server log yet at {place.log}" in missing.stderr


def test_a_long_log_with_a_byte_that_is_not_utf8_is_tailed_from_its_end(tmp_path):
    log = tmp_path / "server.log"
    with log.open("wb") as file:
        for n in range(200_000):  # several read blocks
            file.write(b"request %d\n" % n)
        file.write(b"bad byte \xff here\n")
    assert service.last_lines(log, 2) == ["request 199999", "bad byte \ufffd here"]
    assert len(service.last_lines(log, 5000)) == 5000
    assert service.last_lines(log, 0) == []


def test_follow_prints_what_is_appended_and_carries_on_across_a_rotation(place):
    write_lines(place.log, ["already there"])
    follower = subprocess.Popen(
        [sys.executable, "-m", "memvault.cli", "logs", "-f", "-n", "1"],
        env=place.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(follower.stdout), daemon=True)
    reader.start()
    try:
        wait_for(lambda: "already there\n" in seen, timeout=30)
        write_lines(place.log, ["appended"])
        wait_for(lambda: "appended\n" in seen)
        # Rotation as the server's starter does it: rename, then a new file at the path.
        write_lines(place.log, ["last words of the old file"])
        os.replace(place.log, place.log.with_name("server.log.1"))
        write_lines(place.log, ["first words of the new file"])
        wait_for(lambda: "first words of the new file\n" in seen)
        assert seen == [
            "already there\n",
            "appended\n",
            "last words of the old file\n",
            "first words of the new file\n",
        ]
    finally:
        follower.terminate()
        follower.wait(timeout=30)
