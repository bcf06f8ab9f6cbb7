"""The bearer secret: every route but livez (and the docs) needs it once it is set."""

from __future__ import annotations

import httpx
import pytest

from tests.helpers import envelope


@pytest.fixture
def secured(start_server):
    return start_server({"AGENTMEMORY_SECRET": "s3cret-value"})


def test_livez_stays_public(secured):
    assert httpx.get(f"{secured.url}/agentmemory/livez").status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": "s3cret-value"},
        {"Authorization": "Bearer s3cret-value-and-more"},
    ],
)
def test_requests_without_the_right_secret_get_401(secured, headers):
    for method, path in (("GET", "health"), ("GET", "sessions"), ("POST", "observe")):
        response = httpx.request(
            method, f"{secured.url}/agentmemory/{path}", headers=headers, json=envelope()
        )
        assert response.status_code == 401
        assert response.json() == {"error": "unauthorized"}
    assert (
        httpx.get(
            f"{secured.url}/agentmemory/health", headers={"Authorization": "Bearer s3cret-value"}
        ).json()["store"]["events"]
        == 0
    )


def test_the_right_secret_is_accepted(secured):
    headers = {"Authorization": "Bearer s3cret-value"}
    response = httpx.post(f"{secured.url}/agentmemory/observe", json=envelope(), headers=headers)
    assert response.status_code == 201


def test_memvault_secret_is_an_alternative_name(start_server):
    server = start_server({"MEMVAULT_SECRET": "other"})
    assert httpx.get(f"{server.url}/agentmemory/health").status_code == 401
    ok = httpx.get(f"{server.url}/agentmemory/health", headers={"Authorization": "Bearer other"})
    assert ok.status_code == 200
