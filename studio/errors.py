"""The studio's error vocabulary: what a user may be told went wrong.

Views, consumers and commands show a :class:`StudioError`'s message and nothing else.
Any other exception is a bug: it is logged with its traceback and the user gets a
generic message, so a real bug's ``ValueError`` is never passed off as a user error.
The simulator's own tree (:mod:`simulator.errors`) stays below this one; studio code
that shows a simulator error to a user converts it at the boundary.

The subclasses say *why* the request was refused, so a view can pick its status code
(and the env API its error code) from the class alone.

    StudioError
    ├── RejectedInput     a form field, an uploaded file, an action, a bundle (400)
    │   └── TooLarge      over the size the studio accepts (413)
    ├── NotAllowed        role, membership, ownership (403)
    ├── NotFound          missing, or not visible to this user (404)
    ├── Busy              another operation holds the object (409)
    └── Closed            the object is finished and takes no more work (409)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from simulator.errors import FormatError, InvalidAction, InvalidPerturbation, InvalidWorld


class StudioError(Exception):
    """Something the user can fix or retry; its message is safe to show."""

    #: The HTTP status an API or HTMX view answers with for this kind of error.
    status = 400
    #: The env API's error code for it (``{"error": {"code", "message"}}``).
    code = "invalid_request"


class RejectedInput(StudioError):
    """The input is invalid: a form field, an uploaded file, an action, a bundle."""


class TooLarge(RejectedInput):
    """The input is larger than the studio accepts."""

    status = 413
    code = "request_too_large"


class NotAllowed(StudioError):
    """The user may not do this (role, membership, ownership)."""

    status = 403
    code = "forbidden"


class NotFound(StudioError):
    """What was asked for does not exist, or is not visible to this user."""

    status = 404
    code = "not_found"


class Busy(StudioError):
    """Another operation holds the object; try again when it ends."""

    status = 409
    code = "busy"


class Closed(StudioError):
    """The object is finished (an episode done, a rollout over) and takes no more work."""

    status = 409
    code = "closed"


#: The simulator's errors that describe the user's own input, not a fault of the studio.
SIMULATOR_INPUT_ERRORS = (InvalidAction, InvalidPerturbation, InvalidWorld, FormatError)


@contextmanager
def simulator_input() -> Iterator[None]:
    """Inside the block, the simulator's input errors become :class:`RejectedInput`.

    The boundary where a simulator error is shown to a user (a consumer's action,
    a view's form) wraps its call in this, so that it shows StudioErrors only.
    """
    try:
        yield
    except SIMULATOR_INPUT_ERRORS as exc:
        raise RejectedInput(str(exc)) from exc
