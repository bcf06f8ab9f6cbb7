"""The door's limits: a few tries a minute from one address, cookies that signing out
everywhere voids, and ``Secure`` on the cookie when the request came over https. Each test
has a server of its own, as it locks the door or voids every cookie."""

from __future__ import annotations

import httpx
import pytest

from memvault.viewer.login import ATTEMPTS_PER_MINUTE, COOKIE
from tests.helpers import Server

SECRET = "door-test-secret-31c9"


@pytest.fixture(scope="module")
def door(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("door") / "home", {"MEMVAULT_SECRET": SECRET})
    yield running.start(timeout=120)  # a busy machine starts it slowly
    running.stop()


def enter(client: httpx.Client, secret: str = SECRET, **headers: str) -> httpx.Response:
    return client.post("/login", data={"secret": secret, "next": "/health"}, headers=headers)


def browser(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=10, follow_redirects=False)


def test_the_door_takes_a_few_tries_a_minute_from_one_address(door):
    # uvicorn takes the client's address from a proxy on loopback, as behind nginx
    guesser = {"X-Forwarded-For": "203.0.113.7"}
    with browser(door) as client:
        for n in range(ATTEMPTS_PER_MINUTE):
            assert enter(client, f"guess-{n}", **guesser).status_code == 401
        refused = enter(client, **guesser)  # the right secret too: no oracle for guesses
        assert refused.status_code == 429
        assert COOKIE not in refused.cookies
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert f"at most {ATTEMPTS_PER_MINUTE} tries a minute from one address" in refused.text
        elsewhere = enter(client, **{"X-Forwarded-For": "198.51.100.4"})
        assert elsewhere.status_code == 303 and COOKIE in elsewhere.cookies


def test_locking_everywhere_voids_every_cookie_given_before(door):
    address = {"X-Forwarded-For": "198.51.100.20"}
    with browser(door) as first, browser(door) as second, browser(door) as stranger:
        assert enter(first, **address).status_code == 303
        assert enter(second, **address).status_code == 303
        assert first.get("/health").status_code == 200
        assert second.get("/health").status_code == 200
        # Without a cookie of the door, nobody can lock the others out.
        assert stranger.post("/logout", data={"everywhere": "1"}).status_code == 303
        assert second.get("/health").status_code == 200
        kept = dict(second.cookies)

        assert first.post("/logout", data={"everywhere": "1"}).status_code == 303
        for client in (first, second):
            gone = client.get("/health")
            assert (gone.status_code, gone.headers["location"]) == (303, "/login?next=/health")
        with httpx.Client(base_url=door.url, cookies=kept, timeout=10) as replay:
            assert replay.get("/health", follow_redirects=False).status_code == 303
        assert enter(second, **address).status_code == 303  # the door opens again
        assert second.get("/health").status_code == 200
    assert (door.home / "viewer-logins-since").exists()


def test_the_cookie_is_secure_when_the_request_came_over_https(door):
    with browser(door) as plain:
        answer = enter(plain, **{"X-Forwarded-For": "198.51.100.30"})
        assert answer.status_code == 303
        assert "secure" not in answer.headers["set-cookie"].lower()
    with browser(door) as behind_tls:
        answer = enter(
            behind_tls, **{"X-Forwarded-For": "198.51.100.31", "X-Forwarded-Proto": "https"}
        )
        assert answer.status_code == 303
        flags = [f.strip().lower() for f in answer.headers["set-cookie"].split(";")]
        assert {"secure", "httponly", "samesite=strict"} <= set(flags)
