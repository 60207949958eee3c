"""Throttles for sign-in and sign-up, counted in the database so that every server process behind
a load balancer sees the same attempts (issue 26 F7), and shaped so that a guesser slows itself
down without locking the owner out (issue 25).

Sign-in. Failures are counted within `login_window_s`, three ways:
- one account from one address (`login_max_failures`, 5): that address waits for that account;
- one address for any accounts (`login_max_failures_client`, 20): that address waits;
- one account from all addresses (`login_max_failures_account`, 20): the account is under attack.
  It is not locked: from then on only addresses that have not failed on it within the window may
  try it, so the owner signing in from their own address still gets in, while each guessing address
  is stopped after its first wrong try. A guesser with many addresses gets one try per address per
  window, never a way to keep the owner out.
An attempt is written (and committed) before its password is checked, so parallel guesses count
each other; the right password removes its own row, a refused attempt is not counted.

Sign-up. Accounts made from one address within `signup_window_s` are limited to
`signup_max_per_client`; a sign-up refused because the address is already registered counts too
(it tells whether an address has an account).

"An address" is the client's IP address as uvicorn reports it (X-Forwarded-For only from a trusted
proxy); an IPv6 address counts as its /64 network, which one machine usually holds whole.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Select, delete, select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import AuthAttempt, utcnow

SIGNIN, SIGNUP = "signin", "signup"
IPV6_NETWORK_BITS = 64


class Throttled(Exception):
    """An attempt refused by a throttle; `wait_s` until the next one is allowed."""

    def __init__(self, wait_s: float):
        super().__init__(f"try again in {wait_s:.0f} s")
        self.wait_s = max(1.0, wait_s)


@dataclass(frozen=True)
class Attempt:
    id: str


def client_key(host: str) -> str:
    """The address a throttle counts: the IP address, an IPv6 one as its /64 network."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a test client's name, a Unix socket: counted as given
        return host[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # ::ffff:192.0.2.1 is 192.0.2.1
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{address}/{IPV6_NETWORK_BITS}", strict=False))[:64]
    return str(address)


def normalize_account(email: str) -> str:
    return email.strip().lower()[:320]


class AuthThrottle:
    def __init__(self, settings: Settings):
        self.window = timedelta(seconds=settings.login_window_s)
        self.per_pair = settings.login_max_failures
        self.per_account = settings.login_max_failures_account
        self.per_client = settings.login_max_failures_client
        self.signup_window = timedelta(seconds=settings.signup_window_s)
        self.signups_per_client = settings.signup_max_per_client

    # --- sign-in ---------------------------------------------------------------------------
    def begin_signin(self, session: Session, email: str, host: str) -> Attempt:
        """Count a sign-in attempt before its password is checked; Throttled when it may not be
        tried now. The attempt stays counted as a failure unless `succeeded` removes it."""
        account, client = normalize_account(email), client_key(host)
        attempt = self._record(session, SIGNIN, account, client, max(self.window, self.signup_window))
        wait = self._signin_wait(session, account, client, attempt.id)
        if wait > 0:
            self.forget(session, attempt)
            raise Throttled(wait)
        return attempt

    def _signin_wait(self, session: Session, account: str, client: str, own_id: str) -> float:
        now = utcnow()
        since = now - self.window
        base = select(AuthAttempt.at).where(
            AuthAttempt.kind == SIGNIN, AuthAttempt.at > since, AuthAttempt.id != own_id
        )
        pair = base.where(AuthAttempt.account == account, AuthAttempt.client == client)
        waits = [
            self._wait_for(session, pair, self.per_pair, now),
            self._wait_for(session, base.where(AuthAttempt.client == client), self.per_client, now),
        ]
        account_wait = self._wait_for(session, base.where(AuthAttempt.account == account), self.per_account, now)
        if account_wait > 0:
            # Under attack: only an address that has failed on this account waits (until its own
            # failures age out, or the account's count falls below the limit, whichever is first).
            newest_here = session.scalar(pair.order_by(AuthAttempt.at.desc()).limit(1))
            if newest_here is not None:
                waits.append(min(account_wait, self._remaining(newest_here, now, self.window)))
        return max(waits)

    def succeeded(self, session: Session, attempt: Attempt) -> None:
        """The right password: this attempt was no failure."""
        self.forget(session, attempt)

    # --- sign-up ---------------------------------------------------------------------------
    def begin_signup(self, session: Session, host: str) -> Attempt:
        """Count an account being made from this address; Throttled past the limit."""
        client = client_key(host)
        attempt = self._record(session, SIGNUP, "", client, max(self.window, self.signup_window))
        now = utcnow()
        made_here = select(AuthAttempt.at).where(
            AuthAttempt.kind == SIGNUP,
            AuthAttempt.client == client,
            AuthAttempt.at > now - self.signup_window,
            AuthAttempt.id != attempt.id,
        )
        wait = self._wait_for(session, made_here, self.signups_per_client, now, self.signup_window)
        if wait > 0:
            self.forget(session, attempt)
            raise Throttled(wait)
        return attempt

    # --- both ------------------------------------------------------------------------------
    def forget(self, session: Session, attempt: Attempt) -> None:
        """An attempt that does not count (refused by the throttle, the right password, a typo in a
        sign-up form). Committed at once: an error response rolls the request's session back."""
        session.execute(delete(AuthAttempt).where(AuthAttempt.id == attempt.id))
        session.commit()

    def _record(self, session: Session, kind: str, account: str, client: str, keep: timedelta) -> Attempt:
        now = utcnow()
        # Rows older than every window are no longer counted: dropping them keeps the table as
        # small as the recent attempts.
        session.execute(delete(AuthAttempt).where(AuthAttempt.at < now - keep))
        row = AuthAttempt(kind=kind, account=account, client=client, at=now)
        session.add(row)
        # Committed before the password is checked, so that guesses sent in parallel (from this
        # process or another server) see each other.
        session.commit()
        return Attempt(row.id)

    def _wait_for(
        self,
        session: Session,
        recent: Select[datetime],
        limit: int,
        now: datetime,
        window: timedelta | None = None,
    ) -> float:
        """Seconds until fewer than `limit` of the `recent` attempts are left in the window."""
        if limit <= 0:
            return 0.0
        query = recent.order_by(AuthAttempt.at.desc()).offset(limit - 1).limit(1)
        oldest_counted = session.scalar(query)
        if oldest_counted is None:
            return 0.0
        return self._remaining(oldest_counted, now, window or self.window)

    @staticmethod
    def _remaining(moment: datetime, now: datetime, window: timedelta) -> float:
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite: naive UTC
        return max(0.0, (moment + window - now).total_seconds())
