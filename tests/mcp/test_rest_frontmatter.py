"""``POST /agentmemory/remember`` with tags, concepts, a type, a project and a source that
hold newlines and YAML 1.1's other line breaks: the fragment's file reads back as sent in
PyYAML, js-yaml and npm ``yaml`` (tags as Obsidian takes them), and so does what the API
hands back."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from memvault.vault import frontmatter
from memvault.vault.fragments import TAG
from tests.vault.yaml_readers import read_with_node


def test_tags_concepts_type_project_and_source_with_line_breaks_read_back_as_meant(server, vault):
    sent = {
        "project": "p\x85q",
        "summary": "Line breaks stay inside their values.",
        "facts": ["breaks: kept as written"],
        "tags": ["two\nlines"],
        "concepts": ["line\u2028separator", "tab\tand: colon #hash"],
        "type": "- dash [bracket]",
        "source": "s\u2029t",
    }
    answer = httpx.post(f"{server.url}/agentmemory/remember", json=sent, timeout=30)
    assert answer.status_code == 201, answer.text
    written = (vault / answer.json()["path"]).read_text(encoding="utf-8")
    # Tags are written as Obsidian takes them: what separates words becomes `-`.
    meant_tags = [TAG, "two-lines", "line-separator", "tab-and-colon-hash", "dash-bracket"]

    properties = frontmatter.read(written)
    assert properties["tags"] == meant_tags
    assert (properties["project"], properties["source"]) == ("p\x85q", "s\u2029t")
    lines, _ = frontmatter.split(written)
    (read,) = read_with_node(["\n".join(lines)])
    for reader in ("js-yaml", "yaml"):
        value = read[reader]["value"]
        assert value["tags"] == meant_tags, reader
        assert (value["project"], value["source"]) == ("p\x85q", "s\u2029t"), reader
    memory_id = answer.json()["memory"]["id"]
    got = httpx.get(f"{server.url}/agentmemory/memories/{quote(memory_id, safe='')}", timeout=30)
    assert got.status_code == 200, got.text
    shown = got.json()["memory"]
    assert shown["project"] == "p\x85q" and shown["properties"]["source"] == "s\u2029t"
