"""Accounts for multi-user mode (SPEC §7): passwords, browser sessions and API tokens.

Passwords are hashed with scrypt (hashlib, memory-hard; no extra dependency). Session cookies and
API tokens are random secrets; the database keeps only their SHA-256, so a leaked database does not
leak a way in. Sessions and API tokens share one table and differ by `kind` and expiry.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import AuthToken, User, Workspace, utcnow

SESSION, API = "session", "api"
API_TOKEN_PREFIX = "vt_"
MIN_PASSWORD = 8
# scrypt cost: n=2**14, r=8 takes 16 MB and ~50 ms; OWASP's minimum for scrypt.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


@dataclass(frozen=True)
class Account:
    """Who is signed in, detached from any database session (pages render it after the request's
    session has closed, error pages included)."""

    id: str
    email: str
    name: str

    @classmethod
    def of(cls, user: User) -> "Account":
        return cls(user.id, user.email, user.name)


class AccountError(ValueError):
    """A sign-up or sign-in the user can fix; `key` names the i18n message."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


def auth_required(settings: Settings) -> bool:
    """Sign-in is needed unless the server is bound to loopback (or auth is off)."""
    if settings.auth != "auto":
        return settings.auth == "on"
    return not is_loopback(settings.host)


def is_loopback(host: str) -> bool:
    """Whether a host name or address stays on this machine (localhost and *.localhost, RFC 6761)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # another host name: not known to stay on this machine
        return False


# --- passwords -------------------------------------------------------------------------------
def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        computed = hashlib.scrypt(
            password.encode(), salt=bytes.fromhex(salt), dklen=len(digest) // 2, n=int(n), r=int(r), p=int(p)
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(computed.hex(), digest)


# --- users -----------------------------------------------------------------------------------
def normalize_email(email: str) -> str:
    return email.strip().lower()


def find_user(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(User.email == normalize_email(email)))


def create_user(session: Session, email: str, password: str, name: str = "") -> User:
    email = normalize_email(email)
    if not _EMAIL.match(email) or len(email) > 320:
        raise AccountError("auth_bad_email", "Enter an e-mail address such as name@example.com.")
    if len(password) < MIN_PASSWORD:
        raise AccountError("auth_short_password", f"Use a password of at least {MIN_PASSWORD} characters.")
    if find_user(session, email) is not None:
        raise AccountError("auth_email_taken", "An account with this e-mail address already exists.")
    user = User(email=email, name=name.strip()[:200] or email.split("@")[0], password_hash=hash_password(password))
    session.add(user)
    session.flush()
    return user


def check_password(session: Session, email: str, password: str) -> User:
    user = find_user(session, email)
    # Hash even for an unknown address, so response time does not tell which addresses exist.
    stored = user.password_hash if user else hash_password("not-a-user")
    if not verify_password(password, stored) or user is None:
        raise AccountError("auth_failed", "The e-mail address or the password is wrong.")
    return user


def set_password(session: Session, user: User, password: str, keep_token_id: str | None = None) -> None:
    """A new password signs out every other browser and revokes every API token: a password is
    changed because it may have leaked, and whoever had it could have made a token with it (issue
    25). `keep_token_id`: the browser session that changed it stays signed in."""
    if len(password) < MIN_PASSWORD:
        raise AccountError("auth_short_password", f"Use a password of at least {MIN_PASSWORD} characters.")
    user.password_hash = hash_password(password)
    for token in session.scalars(select(AuthToken).where(AuthToken.user_id == user.id)):
        if not (token.id == keep_token_id and token.kind == SESSION):
            session.delete(token)


def delete_account(session: Session, settings: Settings, user: User, with_workspaces: bool = True) -> int:
    """Delete a user, their sign-ins and (by default) every workspace they own, files included.
    Returns how many workspaces went. Callers check that none is busy and ask first."""
    from app.workspaces import delete_workspace

    owned = list(session.scalars(select(Workspace).where(Workspace.owner == user.id))) if with_workspaces else []
    for workspace in owned:
        delete_workspace(session, settings, workspace)
    for token in session.scalars(select(AuthToken).where(AuthToken.user_id == user.id)):
        session.delete(token)
    session.delete(user)
    session.flush()
    return len(owned)


def claim_local_workspaces(session: Session, user_id: str) -> int:
    """Give the workspaces of the local single-user mode (no owner) to a user."""
    workspaces = list(session.scalars(select(Workspace).where(Workspace.owner.is_(None))))
    for workspace in workspaces:
        workspace.owner = user_id
    return len(workspaces)


# --- tokens ----------------------------------------------------------------------------------
def secret_digest(secret: str) -> str:
    """What is stored of a secret (session, API token, share link): its SHA-256, never the secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


def issue_token(
    session: Session, user_id: str, kind: str, name: str = "", lifetime: timedelta | None = None
) -> tuple[AuthToken, str]:
    """A new session or API token; the secret is returned once and never stored."""
    secret = (API_TOKEN_PREFIX if kind == API else "") + secrets.token_urlsafe(32)
    token = AuthToken(
        user_id=user_id,
        kind=kind,
        name=name.strip()[:200],
        token_hash=secret_digest(secret),
        expires_at=utcnow() + lifetime if lifetime else None,
    )
    session.add(token)
    session.flush()
    return token, secret


def user_for_secret(session: Session, secret: str | None, kind: str | None = None) -> User | None:
    """The user a cookie or bearer secret belongs to, if it is valid and not expired."""
    if not secret or len(secret) > 200:
        return None
    token = session.scalar(select(AuthToken).where(AuthToken.token_hash == secret_digest(secret)))
    if token is None or (kind is not None and token.kind != kind):
        return None
    now = utcnow()
    if token.expires_at is not None and _aware(token.expires_at) <= now:
        session.delete(token)
        return None
    # Touch at most once a minute: reading a page should not write the database every time.
    if token.last_used_at is None or now - _aware(token.last_used_at) > timedelta(minutes=1):
        token.last_used_at = now
    return session.get(User, token.user_id)


def token_for_secret(session: Session, secret: str | None) -> AuthToken | None:
    return session.scalar(select(AuthToken).where(AuthToken.token_hash == secret_digest(secret))) if secret else None


def revoke_secret(session: Session, secret: str | None) -> None:
    token = token_for_secret(session, secret)
    if token is not None:
        session.delete(token)


def api_tokens(session: Session, user_id: str) -> list[AuthToken]:
    query = (
        select(AuthToken)
        .where(AuthToken.user_id == user_id, AuthToken.kind == API)
        .order_by(AuthToken.created_at.desc())
    )
    return list(session.scalars(query))


def revoke_api_token(session: Session, user_id: str, token_id: str) -> bool:
    token = session.get(AuthToken, token_id)
    if token is None or token.user_id != user_id or token.kind != API:
        return False
    session.delete(token)
    return True


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; they were written in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
