"""The store's side of the web control plane: users and their roles, browser sessions, one-time
login codes, and the audit trail of every write made through the web, the API or ``assay users``.

:class:`UserRecords` is mixed into :class:`~assay.store.metrics.MetricStore`. Secrets (tokens,
session ids, login codes) are never stored: only their SHA-256, so a copy of the store lets
nobody in. They are 256 random bits each, which makes a fast hash as safe as a slow one.

>>> from datetime import UTC, datetime
>>> from assay.store import MetricStore
>>> with MetricStore.open("sqlite://") as store:
...     token = store.add_user("ana", "author", by="admin")
...     store.user_by_token(token).role
'author'
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from assay.errors import ConfigError
from assay.store import schema
from assay.store.records import require_aware
from assay.store.schema import utcnow

ROLES = ("viewer", "author", "admin")
"""Each role may do what the ones before it may: viewers read, authors also write checks and
decide, admins also manage users."""

USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
TOKEN_PREFIX = "assay_"
SESSION_DAYS = 7
LOGIN_CODE_HOURS = 24


def digest(secret: str) -> str:
    """The SHA-256 of a secret, as the store keeps it.

    >>> len(digest("assay_x"))
    64
    """
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret(prefix: str = "") -> str:
    """256 random bits, URL-safe."""
    return prefix + secrets.token_urlsafe(32)


def check_user_name(name: str) -> str:
    """``name`` if it is a valid user name, else a :class:`ConfigError` saying why.

    >>> check_user_name("ana@example.com")
    'ana@example.com'
    """
    if not USER_NAME.match(name):
        raise ConfigError(
            f"user name {name!r}: use 1 to 100 letters, digits, '.', '_', '@' or '-', starting with a "
            "letter or digit"
        )
    return name


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ConfigError(f"role {role!r}: must be one of {', '.join(ROLES)}")
    return role


def allows(role: str, needed: str) -> bool:
    """Whether ``role`` may do what ``needed`` may.

    >>> allows("admin", "author"), allows("viewer", "author")
    (True, False)
    """
    return ROLES.index(role) >= ROLES.index(needed)


@dataclass(frozen=True)
class User:
    id: int
    name: str
    role: str
    created_at: datetime
    created_by: str | None
    disabled_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "created_at": self.created_at.isoformat(),
            "created_by": self.created_by,
            "disabled": self.disabled_at is not None,
        }


@dataclass(frozen=True)
class Session:
    user: User
    csrf: str
    expires_at: datetime


@dataclass(frozen=True)
class AuditRow:
    id: int
    at: datetime
    by: str
    action: str
    target: str
    dataset: str | None
    detail: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at.isoformat(),
            "by": self.by,
            "action": self.action,
            "target": self.target,
            "dataset": self.dataset,
            "detail": self.detail,
        }


class _Store(Protocol):
    def _transaction(self) -> AbstractContextManager[Connection]: ...


def _user(row: Any) -> User:
    return User(int(row.id), str(row.name), str(row.role), row.created_at, row.created_by, row.disabled_at)


def _audit(connection: Connection, by: str, action: str, target: str, **more: Any) -> None:
    connection.execute(
        sa.insert(schema.audit).values(
            at=more.pop("at", None) or utcnow(),
            by=by,
            action=action,
            target=target,
            dataset=more.pop("dataset", None),
            detail=more.pop("detail", None),
        )
    )


class UserRecords:
    """User-, session- and audit-related methods of the metric store."""

    # --- users -------------------------------------------------------------------------------------

    def add_user(self: _Store, name: str, role: str, *, by: str) -> str:
        """Add a user and return their token (shown once; the store keeps its hash). The write
        is audited as ``user.add`` by ``by``. A name taken already is a :class:`ConfigError`."""
        check_user_name(name)
        check_role(role)
        token = new_secret(TOKEN_PREFIX)
        with self._transaction() as connection:
            taken = connection.execute(
                sa.select(schema.users.c.id).where(schema.users.c.name == name)
            ).first()
            if taken is not None:
                raise ConfigError(
                    f"user {name!r} exists already (assay users token {name} gives a new token)"
                )
            connection.execute(
                sa.insert(schema.users).values(
                    name=name, role=role, token_hash=digest(token), created_at=utcnow(), created_by=by
                )
            )
            _audit(connection, by, "user.add", name, detail={"role": role})
        return token

    def users(self: _Store) -> list[User]:
        with self._transaction() as connection:
            rows = connection.execute(sa.select(schema.users).order_by(schema.users.c.name)).all()
        return [_user(r) for r in rows]

    def user(self: _Store, name: str) -> User:
        with self._transaction() as connection:
            row = connection.execute(sa.select(schema.users).where(schema.users.c.name == name)).first()
        if row is None:
            raise ConfigError(f"no user {name!r}")
        return _user(row)

    def user_count(self: _Store) -> int:
        with self._transaction() as connection:
            return int(connection.execute(sa.select(sa.func.count()).select_from(schema.users)).scalar_one())

    def user_by_token(self: _Store, token: str) -> User | None:
        """The enabled user whose token this is, or None."""
        users = schema.users
        with self._transaction() as connection:
            row = connection.execute(
                sa.select(users).where(users.c.token_hash == digest(token), users.c.disabled_at.is_(None))
            ).first()
        return None if row is None else _user(row)

    def new_token(self: _Store, name: str, *, by: str) -> str:
        """A new token for ``name``; the old one stops working at once, as do their sessions."""
        token = new_secret(TOKEN_PREFIX)
        with self._transaction() as connection:
            user_id = _user_id(connection, name)
            connection.execute(
                sa.update(schema.users).where(schema.users.c.id == user_id).values(token_hash=digest(token))
            )
            connection.execute(sa.delete(schema.web_sessions).where(schema.web_sessions.c.user_id == user_id))
            _audit(connection, by, "user.token", name)
        return token

    def set_user(
        self: _Store, name: str, *, by: str, role: str | None = None, disabled: bool | None = None
    ) -> User:
        """Change a user's role, or disable (or enable) them; disabling ends their sessions."""
        values: dict[str, Any] = {}
        if role is not None:
            values["role"] = check_role(role)
        if disabled is not None:
            values["disabled_at"] = utcnow() if disabled else None
        with self._transaction() as connection:
            user_id = _user_id(connection, name)
            if values:
                connection.execute(
                    sa.update(schema.users).where(schema.users.c.id == user_id).values(**values)
                )
            if disabled:
                connection.execute(
                    sa.delete(schema.web_sessions).where(schema.web_sessions.c.user_id == user_id)
                )
            detail = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in values.items()}
            _audit(connection, by, "user.change", name, detail=detail)
            row = connection.execute(sa.select(schema.users).where(schema.users.c.id == user_id)).one()
        return _user(row)

    # --- one-time login codes ---------------------------------------------------------------------

    def login_code(self: _Store, name: str, *, by: str, hours: int = LOGIN_CODE_HOURS) -> str:
        """A code that logs ``name`` in once, within ``hours``."""
        code = new_secret()
        now = utcnow()
        with self._transaction() as connection:
            user_id = _user_id(connection, name)
            connection.execute(
                sa.insert(schema.login_codes).values(
                    code_hash=digest(code),
                    user_id=user_id,
                    created_at=now,
                    expires_at=now + timedelta(hours=hours),
                )
            )
            _audit(connection, by, "user.login_link", name)
        return code

    def use_login_code(self: _Store, code: str) -> User | None:
        """The user a fresh, unused code was made for, marking it used (one conditional update:
        two browsers racing for one link get it once); None for any other code."""
        codes, users = schema.login_codes, schema.users
        now = utcnow()
        with self._transaction() as connection:
            used = connection.execute(
                sa.update(codes)
                .where(codes.c.code_hash == digest(code), codes.c.used_at.is_(None), codes.c.expires_at > now)
                .values(used_at=now)
                .returning(codes.c.user_id)
            ).first()
            if used is None:
                return None
            row = connection.execute(
                sa.select(users).where(users.c.id == used.user_id, users.c.disabled_at.is_(None))
            ).first()
        return None if row is None else _user(row)

    # --- sessions ----------------------------------------------------------------------------------

    def open_session(self: _Store, user: User, *, days: int = SESSION_DAYS) -> tuple[str, str]:
        """A new session of ``user``: (the cookie's value, the session's CSRF token)."""
        session_id, csrf = new_secret(), new_secret()
        now = utcnow()
        with self._transaction() as connection:
            connection.execute(sa.delete(schema.web_sessions).where(schema.web_sessions.c.expires_at <= now))
            connection.execute(
                sa.insert(schema.web_sessions).values(
                    id_hash=digest(session_id),
                    user_id=user.id,
                    csrf=csrf,
                    created_at=now,
                    expires_at=now + timedelta(days=days),
                )
            )
        return session_id, csrf

    def session(self: _Store, session_id: str) -> Session | None:
        """The live session of a cookie's value, with its enabled user; None otherwise."""
        s, users = schema.web_sessions, schema.users
        with self._transaction() as connection:
            row = connection.execute(
                sa.select(users, s.c.csrf, s.c.expires_at.label("session_expires"))
                .join(s, s.c.user_id == users.c.id)
                .where(
                    s.c.id_hash == digest(session_id),
                    s.c.expires_at > utcnow(),
                    users.c.disabled_at.is_(None),
                )
            ).first()
        if row is None:
            return None
        return Session(_user(row), str(row.csrf), row.session_expires)

    def close_session(self: _Store, session_id: str) -> None:
        with self._transaction() as connection:
            connection.execute(
                sa.delete(schema.web_sessions).where(schema.web_sessions.c.id_hash == digest(session_id))
            )

    # --- the audit trail ---------------------------------------------------------------------------

    def audit(
        self: _Store,
        by: str,
        action: str,
        target: str,
        *,
        dataset: str | None = None,
        detail: Mapping[str, Any] | None = None,
        at: datetime | None = None,
    ) -> None:
        """Record one write: who, what, on what, with its detail."""
        if at is not None:
            require_aware(at, "at")
        with self._transaction() as connection:
            _audit(connection, by, action, target, dataset=dataset, detail=dict(detail or {}) or None, at=at)

    def audit_trail(
        self: _Store, *, dataset: str | None = None, limit: int = 50, offset: int = 0
    ) -> tuple[list[AuditRow], int]:
        """The latest writes first (of one dataset, when given), a page of them and the total."""
        a = schema.audit
        where = [] if dataset is None else [a.c.dataset == dataset]
        with self._transaction() as connection:
            total = connection.execute(sa.select(sa.func.count()).select_from(a).where(*where)).scalar_one()
            rows = connection.execute(
                sa.select(a).where(*where).order_by(a.c.at.desc(), a.c.id.desc()).limit(limit).offset(offset)
            ).all()
        return [AuditRow(int(r.id), r.at, r.by, r.action, r.target, r.dataset, r.detail) for r in rows], int(
            total
        )


def _user_id(connection: Connection, name: str) -> int:
    found = connection.execute(sa.select(schema.users.c.id).where(schema.users.c.name == name)).scalar()
    if found is None:
        raise ConfigError(f"no user {name!r}")
    return int(found)
