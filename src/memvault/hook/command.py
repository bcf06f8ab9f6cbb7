"""One hook invocation: read the payload, record the event, read memory, answer the host.

A private project (an empty ``.memvaultignore`` above the workspace, or
``MEMVAULT_CAPTURE=off``) records nothing and reads nothing, and a tool call on a private
path is recorded with its content replaced (``hook.privacy``), before anything is sent.

The event goes to the server first, with one short deadline for the whole invocation; when
the server cannot take it (down, slow, a transient error, a missing or wrong secret) it
goes to the spool instead and the server takes it in later. An event the server calls
wrong (a 4xx answer but 401, 403, 404, 405, 408 and 429) is dropped, and so is one larger than the
server's body limit that could not be delivered: the server would refuse it. Memory is
read only after a delivery, within what is left of the deadline. Whatever happens, the
answer is the host's neutral one at worst, problems are reported on stderr, and the exit
status is 0.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time

from memvault.hook import envelope, paths, privacy, spool
from memvault.hook.claude import CLAUDE_CODE, CODEX, GEMINI
from memvault.hook.cursor import Cursor
from memvault.hook.transport import Refused, Server, Unauthorized, Unavailable

TYPE_CHECKING = False  # typing is not imported at run time: the hook pays for every module
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO

    from memvault.hook.claude import ClaudeStyle

    Host = Cursor | ClaudeStyle

HOSTS = {"cursor": Cursor(), "claude-code": CLAUDE_CODE, "codex": CODEX, "gemini": GEMINI}
DEFAULT_URL = "http://127.0.0.1:3111"
DEFAULT_TIMEOUT_MS = 1000
CONTEXT_LIMIT = 10_000  # characters; hosts drop or cut longer injected context
USAGE = f"usage: memvault-hook {{{'|'.join(HOSTS)}}} < payload.json"


class BadInput(Exception):
    """The payload cannot be recorded as it is."""


def main(argv: list[str] | None = None) -> int:
    """Run one hook: the answer (one JSON line, ASCII) on stdout; the status is always 0."""
    args = sys.argv[1:] if argv is None else argv
    try:
        answer = invoke(args, sys.stdin, os.environ)
    except Exception as exc:  # a bug must not fail the agent's turn either
        warn(f"internal error, nothing recorded: {type(exc).__name__}: {exc}")
        answer = None
    if answer is not None:
        with contextlib.suppress(OSError):  # the host stopped listening
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    return 0


def invoke(args: list[str], stdin: TextIO | None, environ: Mapping[str, str]) -> dict | None:
    """The host's answer, or None to print nothing."""
    if len(args) != 1 or args[0] not in HOSTS:
        warn(USAGE)
        return None
    if stdin is None or stdin.isatty():
        warn(f"no payload: the host pipes it to stdin. {USAGE}")
        return None
    raw = stdin.buffer.read()
    if environ.get("AGENTMEMORY_SDK_CHILD") or environ.get("MEMVAULT_INTERNAL"):
        return None  # an agent memvault (or agentmemory) runs for itself: not a user's session
    try:
        return handle(HOSTS[args[0]], read_payload(raw), environ)
    except BadInput as exc:
        warn(f"{exc}; nothing recorded")
        return None


def read_payload(raw: bytes) -> dict:
    if not raw.strip():
        raise BadInput("the payload on stdin is empty")
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise BadInput(f"the payload on stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise BadInput(f"the payload on stdin is a JSON {type(payload).__name__}, not an object")
    return payload


def handle(host: Host, payload: dict, environ: Mapping[str, str]) -> dict | None:
    event = host.event_name(payload)
    if not event:
        raise BadInput("the payload has no hook_event_name")
    if payload.get("entrypoint") == "sdk-ts":
        return None  # an Agent SDK child session, as agentmemory's hooks also skip
    translation = host.translate(event, payload, environ)
    if translation is None:
        return host.answer(event, payload, None)
    session_id = host.session_id(payload)
    if not session_id:
        warn(f"the {event} payload has no session id; nothing recorded")
        return host.answer(event, payload, None)
    cwd = host.workspace(payload, environ)
    private = privacy.read(cwd, environ)
    if private.whole:
        if privacy.say_once(paths.home(environ), host.name, session_id, private):
            warn(f"{private.reason}: this session is not recorded and gets no memory")
        return host.answer(event, payload, None)
    private.scrub(translation.data)
    sent = envelope.build(
        host=host.name,
        event=event,
        session_id=session_id,
        cwd=cwd,
        payload=payload,
        translation=translation,
        environ=environ,
        transcript=host.transcript_grows,
    )
    server = connect(environ)
    if not deliver(server, sent, environ):
        return host.answer(event, payload, None)
    return host.answer(event, payload, read_memory(server, translation, sent, event))


def connect(environ: Mapping[str, str]) -> Server:
    url = environ.get("MEMVAULT_URL") or environ.get("AGENTMEMORY_URL") or DEFAULT_URL
    secret = (environ.get("MEMVAULT_SECRET") or environ.get("AGENTMEMORY_SECRET") or "").strip()
    return Server(url, secret or None, time.monotonic() + timeout_seconds(environ))


def timeout_seconds(environ: Mapping[str, str]) -> float:
    """``MEMVAULT_HOOK_TIMEOUT_MS``: the whole invocation's time with the server."""
    value = environ.get("MEMVAULT_HOOK_TIMEOUT_MS", "").strip()
    if not value:
        return DEFAULT_TIMEOUT_MS / 1000
    try:
        milliseconds = float(value)
    except ValueError:
        warn(f"MEMVAULT_HOOK_TIMEOUT_MS={value!r} is not a number; using {DEFAULT_TIMEOUT_MS}")
        return DEFAULT_TIMEOUT_MS / 1000
    return max(milliseconds, 1.0) / 1000


def deliver(server: Server, sent: dict, environ: Mapping[str, str]) -> bool:
    """Send the event; on a failure worth retrying, spool it. True when the server has it."""
    body = envelope.encode(sent)
    try:
        server.post("/agentmemory/observe", body)
        _say_if_another_memory(server, environ)
        return True
    except Unavailable as exc:
        if isinstance(exc, Unauthorized):
            problem = (
                f"the server did not accept the secret ({exc}): is MEMVAULT_SECRET set "
                "where the editor was started?"
            )
        else:
            problem = f"server unavailable ({exc})"
        limit = body_limit(environ)
        if len(body) > limit:
            warn(
                f"{problem}; the event is {len(body)} bytes, over the server's {limit}-byte "
                "limit (MEMVAULT_MAX_BODY_BYTES): not spooled, lost"
            )
            return False
        folder = paths.spool_folder(paths.home(environ))
        try:
            spool.put(folder, body)
        except OSError as error:
            warn(f"{problem}; the spool at {folder} failed too ({error}); lost")
        else:
            warn(f"{problem}; the event waits in {folder}")
    except Refused as exc:
        warn(f"the server refused the event as wrong ({exc}); dropped, not spooled")
    return False


def _say_if_another_memory(server: Server, environ: Mapping[str, str]) -> None:
    """Delivered all the same (a hook never loses an event), but said, once for each pair
    of memories (a marker in this home), when the server serves another home or vault
    than this environment names."""
    theirs = server.header("Memvault-Home"), server.header("Memvault-Vault")
    if theirs[0] is None or theirs[1] is None:
        return  # a server that does not say (an older one, or agentmemory's)
    ours = paths.home(environ), paths.vault(environ)
    if all(paths.same_place(a, b) for a, b in zip(ours, theirs, strict=True)):
        return
    if not _first_time_said(ours[0], "\0".join([*ours, *theirs])):
        return
    warn(
        f"the event went to the server at {server.url}, which serves home {theirs[0]} with "
        f"vault {theirs[1]}, not this environment's home {os.path.abspath(ours[0])} with "
        f"vault {os.path.abspath(ours[1])}; give the editor the server's MEMVAULT_HOME and "
        "MEMVAULT_VAULT (memvault doctor says more)"
    )


def _first_time_said(home: str, what: str) -> bool:
    """Whether ``what`` is said for the first time from this home: a marker file per
    thing said, so a hook (a new process each event) does not repeat it every event."""
    folder = os.path.join(home, "hook-said")
    name = hashlib.sha256(what.encode("utf-8", "replace")).hexdigest()[:32]
    try:
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(os.path.join(folder, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    except OSError:
        return True  # no place for the marker: saying it again beats never saying it
    return True


def body_limit(environ: Mapping[str, str]) -> int:
    """The server's limit on a body, ``MEMVAULT_MAX_BODY_BYTES`` as the server reads it."""
    value = environ.get("MEMVAULT_MAX_BODY_BYTES", "").strip()
    return int(value) if value.isdigit() and int(value) >= 1024 else spool.MAX_BODY_BYTES


def read_memory(
    server: Server, translation: envelope.Translation, sent: dict, event: str = ""
) -> str | None:
    """The text to hand the agent: the translation's note, then what the server packed
    (for this session, only what it was not given before: often nothing)."""
    context = ""
    request = _memory_request(translation, sent, event)
    if request is not None:
        path, body = request
        try:
            answer = server.post(path, envelope.dumps(body))
        except (Unavailable, Refused) as exc:
            warn(f"no memory for the agent this time ({exc})")
        else:
            found = answer.get("context")
            context = found.strip() if isinstance(found, str) else ""
            if translation.read == envelope.READ_FILES and answer.get("found") == 0:
                context = ""  # only the report line that memory has nothing on these files
    text = "\n\n".join(part for part in (translation.note, context) if part)
    return text[:CONTEXT_LIMIT] or None


def _memory_request(
    translation: envelope.Translation, sent: dict, event: str = ""
) -> tuple[str, dict] | None:
    base = {"sessionId": sent["sessionId"], "project": sent["project"]}
    if translation.read == envelope.READ_SESSION:
        start = {**base, "cwd": sent["cwd"], "agentId": sent["agentId"]}
        return "/agentmemory/session/start", start
    if translation.read == envelope.READ_PROMPT:
        query = envelope.stripped(sent["data"].get("prompt"))[: envelope.QUERY_LIMIT]
        base = {**base, "hookEvent": event} if event else base
        return "/agentmemory/context", {**base, "query": query} if query else base
    if translation.read == envelope.READ_FILES:
        files = envelope.touched_files(sent["data"])
        if not files:
            return None
        return "/agentmemory/enrich", {
            **base,
            **({"hookEvent": event} if event else {}),
            "files": files,
            "toolName": sent["data"].get("tool_name"),
        }
    return None


def warn(message: str) -> None:
    with contextlib.suppress(OSError):  # nobody reads stderr any more
        sys.stderr.write(f"memvault-hook: {message}\n")
