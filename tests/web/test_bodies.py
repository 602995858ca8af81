"""Request bodies: the caller is known before a body is read, and a body over the limit is
refused before it is read whole, whether it says its length or comes in chunks
(docs/web.md, "Safety")."""

from __future__ import annotations

from typing import Any

import pytest

from web.asgi import call

SAVE = "/api/v1/datasets/orders/checks"
MIB = 1024 * 1024
MAX_BODY = MIB  # docs/web.md, "Safety"


@pytest.fixture(scope="module")
def app(client: Any) -> Any:
    return client.app


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}", "content-type": "application/json"}


def test_the_limit_is_the_documented_one() -> None:
    from assay.web.bodies import MAX_BODY as limit

    assert limit == MAX_BODY


def test_an_anonymous_post_of_150_mb_is_refused_before_a_byte_is_read(app: Any) -> None:
    chunks = [b"x" * MIB] * 150
    answer = call(app, "POST", SAVE, chunks=chunks, length=150 * MIB)
    assert answer.status == 401 and answer.read == 0
    assert "log in first" in answer.json()["error"]


def test_an_anonymous_chunked_post_is_refused_unread(app: Any) -> None:
    answer = call(app, "POST", SAVE, chunks=[b"{" * 4096] * 600, headers={"content-type": "application/json"})
    assert answer.status == 401 and answer.read == 0


def test_an_anonymous_malformed_body_is_401_not_422(app: Any) -> None:
    answer = call(
        app, "POST", SAVE, chunks=[b"{not json"], length=9, headers={"content-type": "application/json"}
    )
    assert answer.status == 401 and answer.read == 0


def test_a_wrong_token_with_a_big_body_is_401_unread(app: Any) -> None:
    answer = call(app, "POST", SAVE, chunks=[b"x" * MIB] * 3, length=3 * MIB, headers=_bearer("assay_nope"))
    assert answer.status == 401 and answer.read == 0


def test_an_anonymous_form_post_is_sent_to_log_in_unread(app: Any) -> None:
    answer = call(
        app,
        "POST",
        "/datasets/orders/checks/save",
        chunks=[b"a=" + b"x" * MIB] * 2,
        length=2 * MIB + 4,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert answer.status == 303 and answer.headers["location"].startswith("/login?") and answer.read == 0


def test_a_body_over_the_limit_that_says_its_length_is_413_unread(app: Any, tokens: dict[str, str]) -> None:
    answer = call(
        app, "POST", SAVE, chunks=[b"x" * MIB, b"x"], length=MIB + 1, headers=_bearer(tokens["author"])
    )
    assert answer.status == 413 and answer.read == 0
    assert answer.json() == {"error": "the request body is over the limit of 1048576 bytes", "status": 413}


def test_a_chunked_body_over_the_limit_is_413_once_the_limit_is_passed(
    app: Any, tokens: dict[str, str]
) -> None:
    chunks = [b" " * 65536] * 40  # 2.5 MiB of JSON whitespace, no length said
    answer = call(app, "POST", SAVE, chunks=chunks, headers=_bearer(tokens["author"]))
    assert answer.status == 413
    assert MAX_BODY < answer.read <= MAX_BODY + 65536  # it stopped at the chunk that passed the limit


def test_a_body_that_lies_about_its_length_is_413(app: Any, tokens: dict[str, str]) -> None:
    chunks = [b" " * 65536] * 20  # 1.25 MiB sent under a length of 10 bytes
    answer = call(app, "POST", SAVE, chunks=chunks, length=10, headers=_bearer(tokens["author"]))
    assert answer.status == 413 and answer.read <= MAX_BODY + 65536


def test_a_form_over_the_limit_is_413_for_a_logged_in_author(app: Any, tokens: dict[str, str]) -> None:
    answer = call(
        app,
        "POST",
        "/datasets/orders/checks/save",
        chunks=[b"expect=" + b"x" * MIB],
        length=MIB + 7,
        headers={
            "authorization": f"Bearer {tokens['author']}",
            "content-type": "application/x-www-form-urlencoded",
        },
    )
    assert answer.status == 413 and answer.read == 0 and "over the limit" in answer.text


def test_a_body_within_the_limit_is_read_and_judged(app: Any, tokens: dict[str, str]) -> None:
    body = b'{"expect": "' + b"x" * 30_000 + b'", "base": "' + b"0" * 64 + b'"}'
    answer = call(app, "POST", SAVE, chunks=[body], length=len(body), headers=_bearer(tokens["author"]))
    assert answer.status == 422 and answer.read == len(body)  # read whole, then refused: too long a draft
    malformed = call(app, "POST", SAVE, chunks=[b"{x"], length=2, headers=_bearer(tokens["author"]))
    assert malformed.status == 422 and "JSON" in malformed.json()["error"]
