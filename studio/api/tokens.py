"""Making, hashing and checking API tokens (``Authorization: Bearer wst_...``)."""

from __future__ import annotations

import base64
import hashlib
import secrets

TOKEN_PREFIX = "wst_"
#: Characters of the token kept in clear (the "wst_" marker plus eight random ones).
VISIBLE_CHARS = len(TOKEN_PREFIX) + 8


def new_token() -> str:
    """A fresh token: the marker and 32 random bytes, base64url without padding."""
    raw = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    return TOKEN_PREFIX + raw


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_prefix(token: str) -> str:
    return token[:VISIBLE_CHARS]


def bearer_token(header: str) -> str | None:
    """The token in an ``Authorization`` header value, or None when it has none."""
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    value = value.strip()
    return value or None
