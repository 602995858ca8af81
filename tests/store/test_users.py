"""Users, sessions, one-time login codes and the audit trail, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assay.errors import ConfigError
from assay.store import MetricStore
from assay.store.users import allows, digest


def test_a_token_is_shown_once_and_kept_as_its_hash(store: MetricStore) -> None:
    token = store.add_user("ana", "author", by="root")
    assert token.startswith("assay_") and len(token) > 40
    assert store.user_by_token(token).name == "ana"  # type: ignore[union-attr]
    assert store.user_by_token(token + "x") is None
    with store._transaction() as connection:  # what a copy of the store would show
        stored = connection.exec_driver_sql("select token_hash from users").scalars().all()
    assert stored == [digest(token)] and token not in stored


def test_names_roles_and_duplicates_are_refused_with_a_message(store: MetricStore) -> None:
    store.add_user("ana", "viewer", by="root")
    with pytest.raises(ConfigError, match="exists already"):
        store.add_user("ana", "admin", by="root")
    with pytest.raises(ConfigError, match="user name"):
        store.add_user("a b", "viewer", by="root")
    with pytest.raises(ConfigError, match="role 'king'"):
        store.add_user("bo", "king", by="root")
    assert [u.name for u in store.users()] == ["ana"]


def test_a_new_token_and_disabling_end_what_the_old_one_opened(store: MetricStore) -> None:
    old = store.add_user("ana", "author", by="root")
    user = store.user_by_token(old)
    assert user is not None
    session, csrf = store.open_session(user)
    assert store.session(session).csrf == csrf  # type: ignore[union-attr]
    new = store.new_token("ana", by="root")
    assert store.user_by_token(old) is None and store.user_by_token(new) is not None
    assert store.session(session) is None  # a new token ends the sessions
    session, _ = store.open_session(user)
    store.set_user("ana", by="root", disabled=True)
    assert store.user_by_token(new) is None and store.session(session) is None
    store.set_user("ana", by="root", disabled=False, role="admin")
    assert store.user_by_token(new).role == "admin"  # type: ignore[union-attr]


def test_a_login_code_works_once(store: MetricStore) -> None:
    store.add_user("ana", "admin", by="root")
    code = store.login_code("ana", by="assay serve")
    assert store.use_login_code(code).name == "ana"  # type: ignore[union-attr]
    assert store.use_login_code(code) is None
    expired = store.login_code("ana", by="root", hours=0)
    assert store.use_login_code(expired) is None


def test_every_user_write_is_in_the_audit_trail(store: MetricStore) -> None:
    store.add_user("ana", "viewer", by="root")
    store.set_user("ana", by="bo", role="author")
    store.audit("ana", "check.add", "orders/rows", dataset="orders", detail={"diff": "+x"})
    rows, total = store.audit_trail()
    assert total == 3
    assert [(r.action, r.by, r.target) for r in rows] == [
        ("check.add", "ana", "orders/rows"),
        ("user.change", "bo", "ana"),
        ("user.add", "root", "ana"),
    ]
    assert rows[0].at <= datetime.now(UTC) and rows[0].detail == {"diff": "+x"}
    only, count = store.audit_trail(dataset="orders")
    assert count == 1 and only[0].dataset == "orders"


def test_roles_include_the_ones_below() -> None:
    assert allows("admin", "viewer") and allows("author", "author") and not allows("viewer", "author")
