"""Every error the simulator raises, in one tree.

Callers catch the narrowest class they can act on: the studio shows an
``InvalidAction`` at the composer, retries nothing on ``MalformedOutput`` and
offers "retry" on any ``BackendError``. An answer cut off by ``max_tokens``
before any observation is an ``OutputCutOff``, not a ``MalformedOutput``: the
model answered within its format but ran out of room (a reasoning model can
think for thousands of tokens), so trying again, or with more tokens, may work.

    SimulatorError
    ├── InvalidAction          the agent's action does not fit the domain's schema
    ├── InvalidWorld           a world spec fails validation (``problems`` lists each)
    ├── InvalidPerturbation    a perturbation spec fails validation
    ├── FormatError            a file (JSONL, bundle) is malformed (``line``, ``field``)
    ├── MalformedOutput        the model's output has no usable observation
    ├── PromptFileError        a prompt file given by the user is missing or unusable (``path``)
    └── BackendError           the world model could not answer
        ├── BackendUnavailable     connection refused, DNS, server not ready
        ├── BackendTimeout         no answer (or no next token) in time
        ├── BackendHTTPError       a non-2xx answer (``status``)
        │   └── BackendRateLimited     HTTP 429
        ├── StreamInterrupted      the stream broke after the first token
        └── OutputCutOff           ``max_tokens`` ran out before any observation (``max_tokens``)
"""

from __future__ import annotations

from pathlib import Path


class SimulatorError(Exception):
    """Base class of every error raised by :mod:`simulator`."""


class InvalidAction(SimulatorError):
    """An action that does not fit its domain's action schema."""


class InvalidWorld(SimulatorError):
    """A world spec that fails validation; ``problems`` lists every failure."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class InvalidPerturbation(SimulatorError):
    """A perturbation spec that fails validation."""


class FormatError(SimulatorError):
    """A malformed record in a file; ``line`` is 1-based, ``field`` may be empty."""

    def __init__(self, reason: str, *, line: int | None = None, field: str = "") -> None:
        self.reason = reason
        self.line = line
        self.field = field
        where = f"line {line}: " if line is not None else ""
        what = f"{field}: " if field else ""
        super().__init__(f"{where}{what}{reason}")


class MalformedOutput(SimulatorError):
    """Model output from which no observation can be recovered."""


class PromptFileError(SimulatorError):
    """A prompt file the user pointed at (e.g. a Qwen-AgentWorld checkout's) that is
    missing or unusable; ``path`` names it."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(f"{path}: {reason}")


class BackendError(SimulatorError):
    """The world model could not answer; the step can be retried."""


class BackendUnavailable(BackendError):
    """The backend cannot be reached or is not ready."""


class BackendTimeout(BackendError):
    """The backend did not answer, or stopped streaming, within the time limit."""


class BackendHTTPError(BackendError):
    """The backend answered with a non-2xx status."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(f"HTTP {status}: {message}")


class BackendRateLimited(BackendHTTPError):
    """The backend answered HTTP 429."""


class StreamInterrupted(BackendError):
    """The stream broke after tokens had arrived; never retried automatically."""


class OutputCutOff(BackendError):
    """The model stopped at ``max_tokens`` (``finish_reason="length"``) with no observation yet."""

    def __init__(self, max_tokens: int, completion_tokens: int = 0) -> None:
        self.max_tokens = max_tokens
        used = f" after {completion_tokens} tokens" if completion_tokens else ""
        super().__init__(
            f"cut off (max_tokens {max_tokens}): the model stopped{used} with no observation"
        )
