"""Settings: the only module that reads the environment.

Every knob has a ``MEMVAULT_*`` name. Where agentmemory already has a variable for the same
thing, that name is accepted too, so an existing agentmemory setup keeps working.
"""

from __future__ import annotations

import ipaddress
import os
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    AliasGenerator,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from memvault.hook.paths import default_home, recorded_vault
from memvault.hook.spool import MAX_BODY_BYTES
from memvault.language import from_locale

DEFAULT_PORT = 3111
_CREDENTIALS = re.compile(r"://([^:/@]*):[^@/]*@")


# Where agentmemory (or OpenAI's SDK) already reads a variable for the same thing: read
# after the MEMVAULT_ name, so an existing setup keeps working.
_OTHER_NAMES: dict[str, tuple[str, ...]] = {
    "port": ("III_REST_PORT",),
    "secret": ("AGENTMEMORY_SECRET",),
    "url": ("AGENTMEMORY_URL",),
    "embedding_api_key": ("OPENAI_API_KEY",),
    "llm_url": ("OPENAI_BASE_URL",),
    "llm_model": ("OPENAI_MODEL",),
    "llm_api_key": ("OPENAI_API_KEY",),
    "llm_concurrency": ("AGENTMEMORY_BACKGROUND_LLM_CONCURRENCY",),
    "auto_compress": ("AGENTMEMORY_AUTO_COMPRESS",),
    "compress_grace_ms": ("AGENTMEMORY_COMPRESS_UPGRADE_GRACE_MS",),
    "idle_threshold_ms": ("AGENTMEMORY_IDLE_THRESHOLD_MS",),
    "summary_threshold_observations": ("AGENTMEMORY_IDLE_SWEEP_OBS_CATCHUP",),
    "sweep_interval_ms": ("AGENTMEMORY_IDLE_SWEEP_INTERVAL_MS",),
    "sweep_max_sessions": ("AGENTMEMORY_IDLE_SWEEP_MAX_SESSIONS",),
    "sweep_cooldown_ms": ("AGENTMEMORY_IDLE_SWEEP_SESSION_COOLDOWN_MS",),
    "summary_rebuild_every": ("AGENTMEMORY_SUMMARY_REBUILD_INTERVAL",),
}
# The one setting whose MEMVAULT_ name is not its field's name in capitals.
_MEMVAULT_NAMES = {"store_location": "MEMVAULT_STORE_URL"}


def _api_url() -> Any:
    """The setting of an OpenAI-compatible API's base URL (embeddings and the LLM have one)."""
    return Field(
        default=None,
        description="Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1.",
    )


def _env_names(field: str) -> AliasChoices:
    """The names a setting is read from: its MEMVAULT_ name first (the one a problem with
    it is reported under), then other tools' names for it, then the field's own name."""
    own = _MEMVAULT_NAMES.get(field, f"MEMVAULT_{field.upper()}")
    return AliasChoices(own, *_OTHER_NAMES.get(field, ()), field)


class Settings(BaseSettings):
    """memvault's configuration, from environment variables (and keyword overrides)."""

    # Names match exactly: matched regardless of case, a field's own name would read the
    # unrelated HOME, HOST, PORT or URL of the environment.
    model_config = SettingsConfigDict(
        extra="ignore",
        populate_by_name=True,
        case_sensitive=True,
        alias_generator=AliasGenerator(validation_alias=_env_names),
    )

    home: Path = Field(
        default_factory=lambda: Path(default_home()),
        description="Folder holding all state: store file, spool, default vault.",
    )
    vault: Path | None = Field(
        default=None,
        description="An existing Obsidian vault to use instead of $MEMVAULT_HOME/vault.",
    )
    host: str = Field("127.0.0.1")
    port: int = Field(DEFAULT_PORT, ge=1, le=65535)
    secret: SecretStr | None = Field(
        default=None, description="Bearer secret required on every route but livez when set."
    )
    url: str | None = Field(
        default=None, description="Where clients (CLI, hooks) reach the server."
    )
    max_body_bytes: int = Field(MAX_BODY_BYTES, ge=1024)
    sqlite_synchronous: Literal["FULL", "NORMAL"] = Field(
        "FULL", description="FULL survives power loss; NORMAL survives process crashes only."
    )
    postgres_pool_size: int = Field(
        10,
        ge=1,
        le=200,
        description="Connections a process keeps open to PostgreSQL at most (its pool).",
    )
    store_location: str | None = Field(
        default=None,
        description=(
            "Where the store lives: a SQLite file, sqlite:///path or a path (a relative one"
            " inside MEMVAULT_HOME), or a PostgreSQL database, postgresql://user@host/db"
            " (the postgres extra); $MEMVAULT_HOME/memvault.db when unset."
        ),
    )
    lock_wait_seconds: float = Field(
        5.0,
        gt=0,
        le=300,
        description=(
            "How long a write waits while another process holds the database's lock before"
            " the request fails with 503 (a hook spools the event and it is delivered later)."
        ),
    )
    access_log: bool = Field(False)
    agent_name: str = Field(
        "main-agent",
        pattern=r"^[a-z0-9][a-z0-9-]*$",
        description="Board agent name when the host does not say which it is.",
    )
    fragments_dir: str = Field(
        "agent-memory",
        min_length=1,
        description="Folder of memory fragments, relative to the vault.",
    )
    dedup_threshold: float = Field(
        0.8,
        gt=0,
        le=1,
        description="A new fragment this similar to one of its project is merged into it.",
    )
    board_poll_seconds: float = Field(
        1.0, gt=0, description="How often the server looks for hand edits of memory/index.md."
    )
    stale_days: int = Field(
        14,
        ge=1,
        description="Organize marks active rows stale after this many days without update.",
    )

    embeddings: Literal["auto", "none", "local", "openai"] = Field(
        "auto",
        description=(
            "Embedding provider for semantic search: local (the packaged multilingual-e5-small,"
            " or the sentence-transformers model MEMVAULT_EMBEDDING_MODEL names), an"
            " OpenAI-compatible /v1/embeddings endpoint, none, or auto (local when what it"
            " needs is installed, otherwise none)."
        ),
    )
    embedding_model: str | None = Field(
        default=None,
        description=(
            "Model name. Local: unset (or multilingual-e5-small) for the packaged model; any"
            " other name or folder is a sentence-transformers model, which needs the"
            " `local-torch` extra (all-MiniLM-L6-v2 comes packaged with it). OpenAI-compatible:"
            " defaults to text-embedding-3-small."
        ),
    )
    embedding_url: str | None = _api_url()
    embedding_api_key: SecretStr | None = Field(default=None)
    weight_relevance: float = Field(0.5, ge=0)
    weight_importance: float = Field(0.3, ge=0)
    weight_recency: float = Field(0.2, ge=0)
    recency_decay: float = Field(
        0.01, ge=0, description="Recency is e^(-decay * days since the memory was last updated)."
    )
    context_tokens: int = Field(
        1500,
        ge=100,
        description=(
            "The tokens one injected memory block may take (session start, prompt submit,"
            " memory_recall); a request may ask for another budget. 1,500 gives every answer"
            " the retrieval benchmark finds at 2,000 and 3,000 (docs/benchmarks.md)."
        ),
    )
    language: Literal["zh-Hant", "zh-Hans", "en"] = Field(
        default_factory=lambda: from_locale(os.environ),
        description=(
            "Language of what memvault writes for agents and people to read: the memory"
            " block's report line, the board's placeholder rows, the agent rules. zh-Hant,"
            " zh-Hans or en; unset, the locale decides (LC_ALL, LC_MESSAGES, LANG: zh_TW and"
            " zh_HK Traditional, zh_CN and zh_SG Simplified, anything else English). Trigger"
            " phrases are recognised in every language whatever this says."
        ),
    )
    archive_importance: float = Field(0.3, ge=0, le=1)
    archive_days: int = Field(90, ge=1)
    summary_threshold: int = Field(
        20, ge=1, description="A project with more fragments than this gets an L2 summary."
    )

    llm: Literal["auto", "none", "openai", "anthropic"] = Field(
        "auto",
        description=(
            "LLM for summaries, fragment extraction and compression: an OpenAI-compatible API"
            " (OpenAI, Ollama, LM Studio, vLLM, OpenRouter), Anthropic, or none (the offline"
            " extractive pipeline). auto: openai when an API key or URL is set, else none."
        ),
    )
    llm_url: str | None = _api_url()
    llm_model: str | None = Field(default=None)
    llm_api_key: SecretStr | None = Field(
        default=None,
        description="The API key (for Anthropic, set this one: OPENAI_API_KEY is read too).",
    )
    llm_concurrency: int = Field(
        2, ge=1, description="Background LLM calls at once, across all of memvault's work."
    )
    llm_timeout_seconds: float = Field(60.0, gt=0)
    llm_max_input_tokens: int = Field(
        6000,
        ge=500,
        description="Inputs longer than this are cut (estimated tokens) before a call.",
    )
    translate_requests: bool = Field(
        True,
        description=(
            "With an LLM, a search request of up to 600 characters is also translated into"
            " the other language (Chinese or English), in the background and once, and its"
            " words searched at a lower weight than the request's own."
        ),
    )
    translate_wait_seconds: float = Field(
        2.0,
        ge=0,
        description=(
            "How long a search waits for its request's translation (0: it uses one made"
            " earlier). The context block a hook asks for never waits."
        ),
    )

    auto_compress: bool = Field(
        False,
        description=(
            "With an LLM, rewrite tool observations in batches in the background (title,"
            " narrative, facts, concepts); the synthetic ones stay when off or offline."
        ),
    )
    compress_grace_ms: int = Field(
        5 * 60 * 1000,
        ge=0,
        description=(
            "While auto-compress is on, summaries, extraction and the graph wait this long for"
            " a new observation's upgrade before taking it as it is."
        ),
    )

    idle_threshold_ms: int = Field(
        30 * 60 * 1000,
        ge=1,
        description="A session this long without events gets its summary brought up to date.",
    )
    summary_threshold_observations: int = Field(
        25, ge=1, description="This many unsummarized observations trigger a summary, busy or not."
    )
    sweep_interval_ms: int = Field(
        15 * 60 * 1000,
        ge=1,
        description="How often the recovery sweep looks for sessions left behind.",
    )
    sweep_max_sessions: int = Field(5, ge=1)
    sweep_cooldown_ms: int = Field(
        60 * 60 * 1000,
        ge=0,
        description="After an attempt, the sweep leaves a session alone this long.",
    )
    summary_rebuild_every: int = Field(
        10,
        ge=1,
        description="Every this many revisions a session summary is rebuilt from all events.",
    )

    job_lease_seconds: float = Field(
        300.0,
        gt=0,
        description=(
            "A worker holds a job this long; a job whose worker died is taken up again after"
            " it. Longer than the slowest job (LLM calls included)."
        ),
    )

    worker_in_server: bool = Field(
        True,
        description=(
            "Run the pipeline worker inside the server. On SQLite it must stay on: the server"
            " is the database's one writer, and `memvault serve` refuses to start without it."
            " On PostgreSQL a server may leave its jobs to `memvault worker` processes."
        ),
    )

    @field_validator("fragments_dir")
    @classmethod
    def _fragments_dir_inside_the_vault(cls, value: str) -> str:
        path = Path(value)
        if path.is_absolute() or ".." in path.parts or value.strip() in ("", "."):
            raise ValueError(
                "MEMVAULT_FRAGMENTS_DIR must be a folder inside the vault, relative to it "
                f"(like agent-memory), not {value!r}"
            )
        return value.strip().strip("/")

    @field_validator("store_location")
    @classmethod
    def _store_url_names_an_engine_memvault_has(cls, value: str | None) -> str | None:
        from memvault.store_url import engine_of

        if value is None or not value.strip():
            return None
        engine_of(value.strip())  # refuses a scheme that names no engine
        return value.strip()

    @field_validator("secret")
    @classmethod
    def _empty_secret_is_none(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            return None
        return value

    @property
    def store_url(self) -> str:
        """The store's URL as ``open_store`` takes it, its path absolute."""
        from memvault.store_url import engine_of, sqlite_file

        if self.store_location is None:
            return f"sqlite:///{self.home / 'memvault.db'}"
        if engine_of(self.store_location) == "postgres":
            return self.store_location
        path = Path(sqlite_file(self.store_location)).expanduser()
        return f"sqlite:///{path if path.is_absolute() else self.home / path}"

    @property
    def store_path(self) -> Path:
        """The SQLite file the store is kept in (refused, in one line, for PostgreSQL)."""
        from memvault.store_url import sqlite_file

        return Path(sqlite_file(self.store_url))

    @cached_property
    def recorded_vault(self) -> Path | None:
        """The vault ``memvault vault PATH`` recorded for this home (read once), if any."""
        found = recorded_vault(str(self.home))
        return Path(found) if found else None

    @property
    def vault_path(self) -> Path:
        """``MEMVAULT_VAULT``, else the vault recorded for this home, else ``home/vault``."""
        if self.vault is not None:
            return self.vault
        return self.recorded_vault or self.home / "vault"

    @property
    def fragments_path(self) -> Path:
        return self.vault_path / self.fragments_dir

    @property
    def server_url(self) -> str:
        if self.url:
            return self.url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def secret_value(self) -> str | None:
        return self.secret.get_secret_value() if self.secret else None


def is_loopback(host: str) -> bool:
    """True when binding to ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings_problems(exc: ValidationError) -> list[str]:
    """One line per setting that cannot be used: its environment name, what was given, and
    what it accepts (for a person at a terminal, instead of a validation traceback)."""
    lines = []
    for error in exc.errors(include_url=False):
        where = str(error["loc"][0]) if error["loc"] else "settings"
        field = Settings.model_fields.get(where)
        if field is not None and isinstance(field.validation_alias, AliasChoices):
            where = str(field.validation_alias.choices[0])  # the field's MEMVAULT_ name
        given = error.get("input")
        if where == "MEMVAULT_STORE_URL" and isinstance(given, str):
            given = _CREDENTIALS.sub(r"://\1:***@", given)  # a database password stays unsaid
        shown = f" (got {given!r})" if isinstance(given, str | int | float) else ""
        ctx = error.get("ctx") or {}
        if error["type"] == "literal_error":
            problem = f"must be one of {ctx['expected']}"
        elif error["msg"].startswith("Input should be "):
            problem = "must be " + error["msg"].removeprefix("Input should be ")
        else:
            problem = error["msg"]
        lines.append(f"{where}{shown}: {problem}")
    return lines
