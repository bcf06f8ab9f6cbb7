"""``memvault serve | stop | status | worker``: the server, and the worker beside it."""

from __future__ import annotations

import json
import os
import socket
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memvault import server_process
from memvault.cli import reach
from memvault.config import Settings, is_loopback

console = Console(soft_wrap=True)  # a path in a line stays whole, to copy
errors = Console(stderr=True, soft_wrap=True)


def worker(
    once: Annotated[bool, typer.Option("--once", help="Run the jobs due now, then exit.")] = False,
) -> None:
    """Process captured events (summaries, fragments, the graph). On SQLite only while no
    server runs (with one running, --once has the server run what is due now); on
    PostgreSQL beside any number of servers, each job claimed by one worker."""
    import threading

    from memvault.background import lower_this_threads_priority

    # On PostgreSQL jobs are claimed with SKIP LOCKED by every replica's workers: one more
    # worker process adds throughput rather than a second writer.
    running = None if _on_postgres() else reach.server()
    if running is not None:
        # On SQLite the server is the store's one writer, and it runs the pipeline itself:
        # a worker beside it would queue behind its write lock and slow every hook event.
        if not once:
            reach.fail(
                f"the memvault server at {running.url} runs the pipeline itself; a worker "
                "beside it would compete with it for the database. Use `memvault worker "
                "--once` to have the server run what is due now.",
                code=2,
            )
        from memvault.cli import remote

        try:
            answer = running.post("/jobs/run", seconds=3600)
        except remote.ServerRefused as exc:
            reach.refused(exc)
        except remote.Unavailable as exc:
            reach.away(exc)
        console.print(f"{answer['jobsRun']} job(s) run")
        return
    with reach.open_memory() as memory:
        if _on_postgres(memory.settings):
            # A worker beside servers never writes the vault, nor takes it over: what its
            # jobs write (snapshots, board rows, fragments) is handed to the vault's owner,
            # and waits in the database while none runs.
            memory.owner.refuse("a `memvault worker` process hands its vault writes over")
        if once:
            console.print(f"{memory.serving.run_due_jobs()} job(s) run")
            return
        lower_this_threads_priority()  # requests come first on a shared machine
        memory.serving.start_pipeline()
        console.print("worker running; Ctrl-C to stop")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            console.print("stopping")


def _on_postgres(settings: Settings | None = None) -> bool:
    """Whether the store is PostgreSQL, where replicas and worker processes share jobs. A
    URL naming no engine is left to the command's own error."""
    from memvault.store import engine_of

    try:
        return engine_of((settings or reach.settings()).store_url) == "postgres"
    except ValueError:
        return False


def serve(
    host: Annotated[str | None, typer.Option(help="Address to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port (default 3111).")] = None,
    started_by: Annotated[
        str | None,
        typer.Option(hidden=True, help="What starts this server in the background (a relay)."),
    ] = None,
) -> None:
    """Start the memory server (REST API under /agentmemory/)."""
    import uvicorn

    from memvault.api.app import create_app

    overrides: dict[str, Any] = {}
    if host is not None:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = port
    settings = reach.settings(**overrides)
    if not is_loopback(settings.host) and settings.secret is None:
        errors.print(
            f"[red]refusing to listen on {settings.host}[/]: it is reachable from other "
            "machines, and no secret is set. Set MEMVAULT_SECRET (or AGENTMEMORY_SECRET), "
            "or bind to 127.0.0.1."
        )
        raise typer.Exit(2)
    if settings.vault is not None and not settings.vault.is_dir():
        errors.print(
            f"[red]MEMVAULT_VAULT is {settings.vault}, which is not a folder[/]: point it at an "
            "existing Obsidian vault, or unset it to use $MEMVAULT_HOME/vault"
        )
        raise typer.Exit(2)
    recorded = settings.recorded_vault if settings.vault is None else None
    if recorded is not None and not recorded.is_dir():
        errors.print(
            f"[red]the vault recorded for {settings.home} is {recorded}, which is not a "
            "folder[/]: choose another with `memvault vault PATH`, or `memvault vault "
            "--default` for $MEMVAULT_HOME/vault"
        )
        raise typer.Exit(2)
    if not settings.worker_in_server and not _on_postgres(settings):
        errors.print(
            "[red]MEMVAULT_WORKER_IN_SERVER=false leaves the pipeline to `memvault worker` "
            "processes[/], but on SQLite the server is the database's one writer and no worker "
            "runs beside it: unset MEMVAULT_WORKER_IN_SERVER."
        )
        raise typer.Exit(2)
    settings.home.mkdir(parents=True, exist_ok=True)
    try:
        # Held until this process ends: one server per home, however it was started.
        server_process.claim_home(
            str(settings.home), os.getpid(), settings.server_url, started_by or ""
        )
    except server_process.HomeServed as served:
        errors.print(f"[red]not started[/]: {escape(str(served))}", highlight=False)
        raise typer.Exit(2) from None
    if not _port_free(settings.host, settings.port):
        errors.print(_port_taken(settings), highlight=False)
        raise typer.Exit(2)
    if started_by:
        errors.print(
            f"started in the background by {started_by}; `memvault stop` stops it",
            highlight=False,
            markup=False,
        )
    app = create_app(settings)
    app.state.started_by = started_by
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        access_log=settings.access_log,
        log_level="info",
        timeout_graceful_shutdown=10,
    )
    _serve_recorded(config, settings)


def _serve_recorded(config: Any, settings: Settings) -> None:
    """Run uvicorn, recorded in ``$MEMVAULT_HOME/server.pid`` while it listens, so clients
    (``memvault stop``, a relay about to start a server) find the one server of this home."""
    import uvicorn

    home, pid = str(settings.home), os.getpid()

    class Listening(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                server_process.write_pid_file(home, pid, settings.server_url)

        async def shutdown(self, sockets: Any = None) -> None:
            # Here, not only after run(): uvicorn raises the signal that stopped it again
            # once it has shut down, which ends the process before run() returns.
            try:
                await super().shutdown(sockets)
            finally:
                server_process.remove_pid_file(home, pid)

    try:
        Listening(config).run()
    finally:
        server_process.remove_pid_file(home, pid)


def stop() -> None:
    """Stop the memory server running for this MEMVAULT_HOME (the one its server.pid names)."""
    stopped, report = server_process.stop(str(reach.settings().home))
    typer.echo(report, err=not stopped)  # whole lines: a path is never wrapped
    if not stopped:
        raise typer.Exit(1)


def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw health report.")] = False,
) -> None:
    """Show what the running server's health endpoint says."""
    import urllib.error
    import urllib.request

    settings = reach.settings()
    url = f"{settings.server_url}/agentmemory/health"
    request = urllib.request.Request(url)
    if settings.secret is not None:
        request.add_header("Authorization", f"Bearer {settings.secret_value()}")
    answered = "with no JSON"
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            answered = f"{response.status} {response.headers.get_content_type()}"
            report = json.load(response)
    except urllib.error.HTTPError as exc:
        if exc.headers.get_content_type() != "application/json":
            errors.print(not_memvault(settings, f"{exc.code} {exc.headers.get_content_type()}"))
            raise typer.Exit(1) from None
        detail = exc.read().decode(errors="replace")
        errors.print(f"[red]{url} answered {exc.code}[/]: {detail}")
        raise typer.Exit(1) from None
    except ValueError:  # an answer, but no JSON: another program's page
        errors.print(not_memvault(settings, answered))
        raise typer.Exit(1) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        errors.print(
            f"[red]no memvault server at {settings.server_url}[/] ({reason}). "
            "Start one with `memvault serve`."
        )
        raise typer.Exit(1) from None
    served = server_process.identity(settings.server_url, settings.secret_value())
    if as_json:
        console.print_json(data={**report, "server": served} if served else report)
        return
    console.print(_health_table(report, settings.server_url))
    if served is not None:
        _say_whose(served, settings)


def _say_whose(served: dict[str, Any], settings: Settings) -> None:
    """What started the server and the vault to open in Obsidian; a server of another
    memory than this environment names is said to be one, on stderr."""
    if served.get("startedBy"):
        console.print(
            f"started in the background by {escape(str(served['startedBy']))} "
            f"(pid {served.get('pid')}): `memvault stop` stops it",
            highlight=False,
        )
    console.print(
        f"vault folder {escape(str(served.get('vault')))}: open it in Obsidian (Open folder "
        f"as vault) to read memory there; the viewer's links name it "
        f"{escape(str(served.get('vaultName')))}",
        highlight=False,
    )
    environ = {"MEMVAULT_HOME": str(settings.home), "MEMVAULT_VAULT": str(settings.vault_path)}
    problem = server_process.other_memory({**served, "url": settings.server_url}, environ)
    if problem:  # said, not refused: status only reads
        errors.print(f"[yellow]{escape(problem)}[/]", highlight=False)


def _port_taken(settings: Settings) -> str:
    """Why the port is taken, and what to do: another home's memvault server names its
    home and how to stop it; another program, another port."""
    where = f"port {settings.port} on {settings.host} is in use"
    found = server_process.identity(settings.server_url, settings.secret_value(), 1.0)
    if found is None and server_process.answers(settings.server_url):
        return (
            f"[red]{where}[/] by a memvault server of another home (it did not say which to "
            "this secret): stop it with `memvault stop` under its MEMVAULT_HOME, or choose "
            "another port with --port or MEMVAULT_PORT"
        )
    if found is None:
        return (
            f"[red]{where}[/] by another program: choose another port with --port or "
            "MEMVAULT_PORT (and give the hooks and editors the same MEMVAULT_URL)"
        )
    by = f", started in the background by {found['startedBy']}" if found.get("startedBy") else ""
    return (
        f"[red]{where}[/]: a memvault server (pid {found.get('pid')}) serves another home "
        f"there, {escape(str(found.get('home')))}{escape(by)}. Stop it with "
        f"`MEMVAULT_HOME={escape(str(found.get('home')))} memvault stop`, or choose another "
        "port with --port or MEMVAULT_PORT"
    )


def not_memvault(settings: Settings, answered: str) -> str:
    """What to say when another program answers at memvault's address."""
    return (
        f"[red]{settings.server_url} is not a memvault server[/]: it answered {answered}. "
        f"Another program holds port {urlsplit(settings.server_url).port}: stop it, or serve "
        "memvault on another "
        "port (MEMVAULT_PORT=3112 memvault serve, and MEMVAULT_URL=http://127.0.0.1:3112 "
        "where the clients run)."
    )


def _port_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _health_table(report: dict[str, Any], url: str) -> Table:
    colour = {"ok": "green", "degraded": "yellow"}.get(report["status"], "red")
    store, queue, process = report["store"], report["queue"], report["process"]
    table = Table(title=f"memvault {report['version']} at {url}", show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")  # a path wraps, never loses its middle
    table.add_row("status", f"[{colour}]{report['status']}[/]")
    table.add_row("uptime", _duration(report["uptimeSeconds"]))
    table.add_row("store", f"{store['engine']} {store['location']}")
    table.add_row("store size", _bytes(store["sizeBytes"]))
    if store.get("pool"):
        pool = store["pool"]
        table.add_row(
            "connections",
            f"{pool['inUse']} in use of {pool['size']} open (at most {pool['max']}), "
            f"{pool['waiting']} waiting",
        )
    table.add_row("events", f"{store['events']:,}")
    table.add_row("observations", f"{store['observations']:,}")
    table.add_row("sessions", f"{store['sessions']:,}")
    table.add_row("pending writes", f"{queue['pendingWrites']:,}")
    table.add_row(
        "jobs",
        f"{queue['jobsPending']:,} pending, {queue['jobsRunning']:,} running, "
        f"{queue['jobsFailed']:,} failed",
    )
    rss = process.get("rssBytes")
    table.add_row("server memory", _bytes(rss) if rss is not None else "unknown")
    for reason in report.get("reasons", []):
        table.add_row("why", f"[{colour}]{reason}[/]")
    vault = report.get("vault")
    if vault:
        table.add_row("vault", vault["path"])
        table.add_row("fragments folder", vault["fragmentsFolder"])
        table.add_row("board rows", f"{vault['boardRows']:,}")
        table.add_row(
            "fragments", f"{vault['fragments']:,} ({vault['archivedFragments']:,} archived)"
        )
    replication = report.get("replication")
    if replication:
        owner = replication["vaultOwner"]
        role = "writes the vault" if owner else "standby: another replica writes the vault"
        since = f" since {replication['since']}" if replication.get("since") else ""
        table.add_row("vault role", f"{role}{since}")
        table.add_row("vault writes queued", f"{replication['vaultWritesQueued']:,}")
    if report.get("embedder"):
        table.add_row("embedder", _embedder_words(report["embedder"]))
    if report.get("llm"):
        llm = report["llm"]
        table.add_row(
            "LLM",
            f"{llm['provider']} {llm['model'] or ''}".strip()
            if llm["provider"] != "none"
            else f"none ({llm['reason']})",
        )
    if report.get("index"):
        table.add_row("search index", _index_words(report["index"]))
    table.add_row("spooled events", f"{queue.get('spooledEvents', 0):,}")
    privacy = report.get("privacy") or {}
    for folder in privacy.get("privateProjects", []):
        table.add_row("private project", f"{folder} (its hooks record nothing)")
    last = privacy.get("lastPurge")
    if last:
        table.add_row(
            "purges",
            f"{privacy['purges']:,}; the latest at {last['at']} replaced {last['matches']:,} "
            f"match(es) in {last['rows']:,} place(s)",
        )
    if report.get("injected"):
        _cost_rows(table, report["injected"])
    return table


def _cost_rows(table: Table, injected: dict[str, Any]) -> None:
    """Tokens memory blocks gave agents: today, the window, per project, per session."""
    table.add_row(
        "tokens injected",
        f"{injected['today']:,} today, {injected['tokens']:,} in {injected['blocks']:,} "
        f"blocks over {injected['days']} days (about {injected['perBlock']:,.0f} a block; "
        f"each at most {injected['capPerBlock']:,}, MEMVAULT_CONTEXT_TOKENS)",
    )
    for name, key in (("per project", "perProject"), ("per session", "perSession")):
        listed = ", ".join(
            f"{item['project' if key == 'perProject' else 'sessionId']} {item['tokens']:,}"
            for item in injected[key][:5]
        )
        if listed:
            table.add_row(f"tokens {name}", listed)


def _embedder_words(embedder: dict[str, Any]) -> str:
    if embedder["provider"] == "none":
        return f"none ({embedder['reason']}): search is lexical"
    name = f"{embedder['provider']} {embedder['model'] or ''}".strip()
    if embedder["loaded"]:
        return f"{name}, {embedder['dimension']} dimensions, loaded"
    return f"{name}, not loaded: {embedder['reason']}"


def _index_words(index: dict[str, Any]) -> str:
    if index["caughtUp"]:
        return f"caught up (through event {index['lastEventSeq']:,})"
    behind = [f"{index['eventsNotIndexed']:,} events not indexed yet"]
    if index.get("changesNotIndexed"):
        behind.append(f"{index['changesNotIndexed']:,} rewritten observations not read again")
    if index["documentsNotEmbedded"]:
        behind.append(f"{index['documentsNotEmbedded']:,} documents not embedded yet")
    return ", ".join(behind)


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"
