"""memory_save's ``properties``: plain property names only, none that shadows a
fragment's own fields, values written as YAML; a refused save writes nothing."""

from __future__ import annotations

import anyio
import pytest

from memvault.vault import frontmatter
from tests.mcp.clients import call, http, text

BAD_KEYS = [
    "note: x\nimportance",
    "---",
    "",
    "k #c",
    "- item",
    "[x]",
    "two\nlines",
    " padded",
    "true",
    "2026-11-30",
    "Importance",
    "SUMMARY",
]


def _fragment_files(vault):
    return (
        sorted((vault / "agent-memory").rglob("*.md")) if (vault / "agent-memory").exists() else []
    )


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_property_name_that_is_not_plain_or_shadows_a_field_is_refused_naming_it(
    server, vault, key
):
    before = _fragment_files(vault)

    async def main() -> None:
        async with http(server.url) as client:
            result = await client.call_tool(
                "memory_save",
                {
                    "project": "props-app",
                    "summary": "A fragment saved at a low importance.",
                    "facts": [f"key under test: {key!r}"],
                    "importance": 0.1,
                    "properties": {key: 42},
                },
            )
            assert result.is_error, text(result)
            assert "not saved" in text(result) and repr(key)[1:-1][:20] in text(result)

    anyio.run(main)
    assert _fragment_files(vault) == before


def test_nested_property_values_are_written_as_yaml_and_read_back_as_they_were(server, vault):
    nested = {"links": {"issue": [11, "five"], "deep": {"x": [True, None, 0.5]}}, "plain": "a: b"}

    async def main() -> dict:
        async with http(server.url) as client:
            saved = await call(
                client,
                "memory_save",
                {
                    "project": "props-app",
                    "summary": "Nested properties stay structured.",
                    "facts": ["nested: written as YAML"],
                    "importance": 0.1,
                    "properties": nested,
                },
            )
            got = await call(client, "memory_get", {"id": saved.structured_content["id"]})
            return saved.structured_content | {"got": got.structured_content}

    done = anyio.run(main)
    written = (vault / done["path"]).read_text(encoding="utf-8")
    assert "{'" not in written  # no Python repr
    properties = frontmatter.read(written)
    assert properties["links"] == nested["links"] and properties["plain"] == "a: b"
    assert properties["importance"] == 0.1
    assert done["got"]["properties"]["links"] == nested["links"]


def test_more_properties_than_the_limit_are_refused_naming_it_and_the_limit_passes(server, vault):
    from memvault.vault.remember import MAX_PROPERTIES

    before = _fragment_files(vault)

    async def save(count: int):
        async with http(server.url) as client:
            return await client.call_tool(
                "memory_save",
                {
                    "project": "props-app",
                    "summary": f"A fragment with {count} properties.",
                    "facts": [f"properties: {count}"],
                    "importance": 0.1,
                    "properties": {f"p{n}": n for n in range(count)},
                },
            )

    refused = anyio.run(save, 20_000)
    assert refused.is_error
    assert f"20000 given, at most {MAX_PROPERTIES} a fragment" in text(refused)
    assert _fragment_files(vault) == before
    assert not anyio.run(save, MAX_PROPERTIES).is_error
