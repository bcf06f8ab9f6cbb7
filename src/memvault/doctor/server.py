"""The doctor's look at the running server: does it answer, in this version, with this
secret, and how healthy does it say it is. Also the one HTTP read the checks share."""

from __future__ import annotations

import json
import shlex
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from memvault import __version__, server_process
from memvault.config import Settings
from memvault.doctor.finding import OK, PROBLEM, WARN, Finding

PROBE_SECONDS = 3.0


def check_server(settings: Settings) -> tuple[dict[str, Any] | None, Finding]:
    """The server's health report (None when it does not answer), and what was found."""
    url = settings.server_url
    try:
        live = get_json(f"{url}/agentmemory/livez")
    except urllib.error.HTTPError as exc:  # an answer, and not memvault's (it has livez)
        return None, _another_program(url, f"{exc.code} {exc.headers.get_content_type()}")
    except ValueError:  # an answer that is no JSON object
        return None, _another_program(url, "with something that is not JSON")
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return None, Finding(
            "server", PROBLEM, f"no memvault server answers at {url} ({reason})", "memvault serve"
        )
    version = live.get("version")
    if version != __version__:
        return None, Finding(
            "server",
            PROBLEM,
            f"the server at {url} runs memvault {version}, this command is {__version__}",
            "restart it with this version: memvault stop, then memvault serve",
        )
    secret = settings.secret_value()
    try:
        health = get_json(f"{url}/agentmemory/health", secret=secret)
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            return None, Finding(
                "server",
                PROBLEM,
                f"the server at {url} refuses this command's secret",
                "set MEMVAULT_SECRET to the secret the server was started with",
            )
        if exc.code == 503:  # critical: the report still says why
            health = json.loads(exc.read() or b"{}")
        else:
            return None, Finding("server", PROBLEM, f"{url} answered health with {exc.code}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return None, Finding("server", PROBLEM, f"{url} did not answer health: {exc}")
    other = _other_memory(settings, url, secret)
    if other is not None:
        return None, other  # its health is another memory's: none of it is this one's
    status = health.get("status")
    if status != "ok":
        reasons = "; ".join(health.get("reasons", [])) or "no reason given"
        return health, Finding(
            "server",
            PROBLEM if status == "critical" else WARN,
            f"the server at {url} is {status}: {reasons}",
            "fix what the reasons name; memvault status shows them clear",
        )
    return health, Finding("server", OK, f"memvault {version} answers at {url}")


def _other_memory(settings: Settings, url: str, secret: str | None) -> Finding | None:
    """A problem naming both when the server at ``url`` serves another home or vault
    than these settings name (what an editor's relay would then refuse)."""
    served = server_process.identity(url, secret, PROBE_SECONDS)
    if served is None:
        return None
    names = {"MEMVAULT_HOME": str(settings.home), "MEMVAULT_VAULT": str(settings.vault_path)}
    problem = server_process.other_memory({**served, "url": url}, names)
    if problem is None:
        return None
    summary = problem.split("; nothing was sent to it")[0]
    theirs = shlex.quote(str(served.get("home")))
    return Finding(
        "server",
        PROBLEM,
        summary,
        f"MEMVAULT_HOME={theirs} memvault stop, then memvault serve here; or give this "
        "environment (and the editors' configs) the server's MEMVAULT_HOME and MEMVAULT_VAULT",
    )


def _another_program(url: str, answered: str) -> Finding:
    """Another program holds memvault's address: `memvault serve` would fail there."""
    port = urllib.parse.urlsplit(url).port
    return Finding(
        "server",
        PROBLEM,
        f"{url} is not a memvault server: it answered {answered}",
        f"another program holds port {port}: stop it, or serve memvault on another port "
        "(MEMVAULT_PORT=3112 memvault serve, and MEMVAULT_URL=http://127.0.0.1:3112 where "
        "the clients run)",
    )


def get_json(url: str, *, secret: str | None = None) -> dict[str, Any]:
    request = urllib.request.Request(url)
    if secret:
        request.add_header("Authorization", f"Bearer {secret}")
    with urllib.request.urlopen(request, timeout=PROBE_SECONDS) as response:
        found = json.load(response)
    if not isinstance(found, dict):
        raise ValueError(f"{url} did not answer with a JSON object")
    return found
