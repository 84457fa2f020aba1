"""The studio's error vocabulary: what a user may be told went wrong.

Views, consumers and commands show a :class:`StudioError`'s message and nothing else.
Any other exception is a bug: it is logged with its traceback and the user gets a
generic message, so a real bug's ``ValueError`` is never passed off as a user error.
The simulator's own tree (:mod:`simulator.errors`) stays below this one; studio code
that shows a simulator error to a user converts it at the boundary.

The subclasses say *why* the request was refused, so a view can pick its status code
(and the env API its error code) from the class alone.
"""

from __future__ import annotations


class StudioError(Exception):
    """Something the user can fix or retry; its message is safe to show."""

    #: The HTTP status an API or HTMX view answers with for this kind of error.
    status = 400


class RejectedInput(StudioError):
    """The input is invalid: a form field, an uploaded file, an action, a bundle."""


class TooLarge(RejectedInput):
    """The input is larger than the studio accepts."""

    status = 413


class NotAllowed(StudioError):
    """The user may not do this (role, membership, ownership)."""

    status = 403


class NotFound(StudioError):
    """What was asked for does not exist, or is not visible to this user."""

    status = 404


class Busy(StudioError):
    """Another operation holds the object; try again when it ends."""

    status = 409


class Closed(StudioError):
    """The object is finished (an episode done, a rollout over) and takes no more work."""

    status = 409
