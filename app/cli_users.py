"""`verity users add|list|token|password|remove`: accounts for multi-user mode, from the server's shell.

The sign-up page covers the usual case; these commands are for a closed sign-up
(`VERITY_SIGNUP=closed`), for scripts, and for moving the workspaces of local single-user use
to an account (`add --claim-local`).
"""

from __future__ import annotations

import argparse
import getpass
import sys

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_users_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("users", help="manage accounts (multi-user mode)")
    sub = parser.add_subparsers(dest="users_command", required=True)
    add = sub.add_parser("add", help="create an account")
    add.add_argument("email")
    add.add_argument("--name", default="")
    add.add_argument("--password-stdin", action="store_true", help="read the password from stdin (scripts)")
    add.add_argument(
        "--claim-local",
        action="store_true",
        help="give this account the workspaces made without signing in (local mode)",
    )
    sub.add_parser("list", help="list accounts")
    token = sub.add_parser("token", help="create an API token and print it (shown once)")
    token.add_argument("email")
    token.add_argument("--name", default="command line")
    password = sub.add_parser("password", help="set a new password (signs the account out everywhere)")
    password.add_argument("email")
    password.add_argument("--password-stdin", action="store_true", help="read the password from stdin (scripts)")
    remove = sub.add_parser("remove", help="delete an account and its sign-ins")
    remove.add_argument("email")
    remove.add_argument(
        "--delete-workspaces",
        action="store_true",
        help="also delete every workspace it owns, files included (else they stay, unreachable)",
    )
    parser.set_defaults(func=users_command)
    return parser


def users_command(args: argparse.Namespace) -> int:
    from app.config import get_settings
    from app.db.session import open_database

    db = open_database(get_settings())
    try:
        with db.session() as session:
            return COMMANDS[args.users_command](session, args)
    finally:
        db.engine.dispose()


def _add(session, args) -> int:
    from app.users import AccountError, claim_local_workspaces, create_user

    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else _ask_password()
    try:
        user = create_user(session, args.email, password, args.name)
    except AccountError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    claimed = claim_local_workspaces(session, user.id) if args.claim_local else 0
    print(f"created {user.email}" + (f"; {claimed} local workspace(s) now belong to it" if claimed else ""))
    return EXIT_OK


def _ask_password() -> str:
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        print("error: the two passwords differ", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)
    return first


def _list(session, _args) -> int:
    from sqlalchemy import select

    from app.db.models import User, Workspace

    for user in session.scalars(select(User).order_by(User.created_at)):
        count = len(list(session.scalars(select(Workspace.id).where(Workspace.owner == user.id))))
        print(f"{user.email}\t{user.name}\t{count} workspace(s)\t{user.created_at:%Y-%m-%d}")
    return EXIT_OK


def _account(session, email: str):
    """The user with this address, or None after saying so on stderr."""
    from app.users import find_user

    user = find_user(session, email)
    if user is None:
        print(f"error: no account {email}", file=sys.stderr)
    return user


def _token(session, args) -> int:
    from app.users import API, issue_token

    user = _account(session, args.email)
    if user is None:
        return EXIT_BAD_INPUT
    _, secret = issue_token(session, user.id, API, name=args.name)
    print(secret)
    return EXIT_OK


def _remove(session, args) -> int:
    from app.config import get_settings
    from app.users import delete_account

    user = _account(session, args.email)
    if user is None:
        return EXIT_BAD_INPUT
    deleted = delete_account(session, get_settings(), user, with_workspaces=args.delete_workspaces)
    print(
        f"removed {args.email}"
        + (
            f" and {deleted} workspace(s)"
            if args.delete_workspaces
            else "; its workspaces stay, owned by nobody who can sign in"
        )
    )
    return EXIT_OK


def _password(session, args) -> int:
    from app.users import AccountError, set_password

    user = _account(session, args.email)
    if user is None:
        return EXIT_BAD_INPUT
    try:
        set_password(session, user, sys.stdin.readline().rstrip("\n") if args.password_stdin else _ask_password())
    except AccountError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"new password set for {user.email}; its browsers are signed out and its API tokens revoked")
    return EXIT_OK


COMMANDS = {"add": _add, "list": _list, "token": _token, "password": _password, "remove": _remove}
