"""A throwaway PostgreSQL cluster for tests: initdb into a temporary folder, pg_ctl start on
a free loopback port, torn down after. Each test that needs a store gets a database of its own.

PostgreSQL refuses to run as root; as root the cluster runs as the ``postgres`` account (or
``nobody``), whose folder it is.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.helpers import IN_CI, free_port

USER = "memvault"


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: the PATH's, else Debian's newest."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    folders = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    folders.sort(key=lambda f: int(f.parent.name) if f.parent.name.isdigit() else 0)
    return folders[-1] if folders else None


def _run_as() -> list[str]:
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"]
    raise RuntimeError("running as root, and there is no account to run PostgreSQL as")


class Cluster:
    """One running cluster; ``database()`` makes a fresh, empty database and returns its URL."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="memvault-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self._prefix = _run_as()
        self._names = itertools.count(1)
        if self._prefix:
            account = pwd.getpwnam(self._prefix[2])
            os.chown(self.folder, account.pw_uid, account.pw_gid)
            self.folder.chmod(0o755)

    def _pg(self, program: str, *args: str) -> subprocess.CompletedProcess:
        command = [*self._prefix, str(self.bindir / program), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.folder / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{program} failed: {done.stderr or done.stdout}\n{tail}")
        return done

    def start(self) -> Cluster:
        self._pg(
            "initdb", "-D", str(self.data), "-U", USER, "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync",
        )  # fmt: skip
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-o", options,
                 "-w", "-t", "60", "start")  # fmt: skip
        return self

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        try:
            self._pg("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def start_or_skip() -> Cluster:
    """A started cluster; without PostgreSQL installed, a skip locally and a failure in CI."""
    bindir = binaries()
    if bindir is None or not (bindir / "pg_ctl").exists():
        message = "PostgreSQL (initdb, pg_ctl) is not installed"
        if IN_CI:
            pytest.fail(f"{message}, and CI must run every test")
        pytest.skip(message)
    return Cluster(bindir).start()
