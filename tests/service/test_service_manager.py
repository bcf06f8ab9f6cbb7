"""What install and uninstall ask of the service manager, in order. ``systemctl`` and
``launchctl`` here are stand-ins on PATH that record each call (the real ones would start
a server on the machine running the tests); memvault's code runs as it is."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from memvault import service

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell stand-ins")


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Install stand-ins for systemctl and launchctl; return a reader of their calls.
    ``launchctl print`` answers 0 once an agent was bootstrapped, as the real one does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "calls"
    loaded = tmp_path / "loaded"
    for name in ("systemctl", "launchctl"):
        script = bin_dir / name
        script.write_text(
            textwrap.dedent(
                f"""\
                #!/bin/sh
                echo "{name} $*" >> "{record}"
                case "$1" in
                  bootstrap) touch "{loaded}" ;;
                  bootout) [ -e "{loaded}" ] || exit 3; rm "{loaded}" ;;
                  print) [ -e "{loaded}" ] || exit 113 ;;
                esac
                exit 0
                """
            )
        )
        script.chmod(0o755)
    # First on PATH, so they stand in for the real ones; the rest for sh's touch and rm.
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.defpath]))

    def read() -> list[str]:
        lines = record.read_text().splitlines() if record.exists() else []
        record.unlink(missing_ok=True)
        return lines

    return read


def test_with_a_user_session_install_reloads_and_enables_and_uninstall_disables(tmp_path, calls):
    def unit():
        return service.service_for(
            "/opt/memvault/bin/memvault",
            tmp_path / "state",
            (),
            platform="linux",
            user_home=tmp_path,
        )

    first = service.install(unit())
    assert first.ok and first.to_run == []
    assert calls() == [
        "systemctl --user show-environment",
        "systemctl --user daemon-reload",
        "systemctl --user enable --now memvault.service",
    ]
    assert service.install(unit()).lines[0].startswith("unchanged")
    assert calls()[1:] == ["systemctl --user enable --now memvault.service"]  # no reload
    assert service.uninstall(unit()).ok
    assert calls()[1:] == [
        "systemctl --user disable --now memvault.service",
        "systemctl --user daemon-reload",
    ]
    assert not service.unit_path(tmp_path).exists()


def test_a_launchd_agent_is_bootstrapped_once_and_booted_out_on_uninstall(tmp_path, calls):
    def agent():
        return service.service_for(
            "/opt/memvault/bin/memvault",
            tmp_path / "state",
            (),
            platform="macos",
            user_home=tmp_path,
            uid=501,
        )

    path = str(agent().path)
    first = service.install(agent())
    assert first.ok, first.lines
    # Nothing was loaded: the bootout before the bootstrap fails, and that is fine.
    assert calls() == [
        "launchctl bootout gui/501/dev.memvault.server",
        f"launchctl bootstrap gui/501 {path}",
    ]
    again = service.install(agent())
    assert again.ok and "it is loaded already" in again.lines
    assert calls() == ["launchctl print gui/501/dev.memvault.server"]
    assert service.uninstall(agent()).ok
    assert calls() == ["launchctl bootout gui/501/dev.memvault.server"]
    assert not Path(path).exists()


def test_a_failing_service_manager_is_reported_with_what_it_said(tmp_path, calls):
    (tmp_path / "bin" / "systemctl").write_text(
        '#!/bin/sh\n[ "$2" = show-environment ] && exit 0\necho "Access denied" >&2\nexit 1\n'
    )
    unit = service.service_for(
        "/opt/memvault/bin/memvault",
        tmp_path / "state",
        (),
        platform="linux",
        user_home=tmp_path,
    )
    outcome = service.install(unit)
    assert not outcome.ok
    assert "`systemctl --user daemon-reload` failed (1): Access denied" in outcome.lines
    assert unit.path.read_bytes() == unit.content  # the file is written; a re-run retries
