"""Writes for the API app: tokens and chat-completions sessions."""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from studio.api.models import ApiToken
from studio.api.tokens import new_token, token_digest, token_prefix
from studio.episodes.models import Episode, EpisodeSource, Step, StepStatus
from studio.episodes.rewards import Outcome, scenario_rules, step_outcome
from studio.episodes.services import episode_close, episode_create
from studio.worlds.models import Scenario


def token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user``; the clear token is returned once and never stored."""
    clear = new_token()
    token = ApiToken.objects.create(
        user=user,
        name=name.strip() or "token",
        prefix=token_prefix(clear),
        digest=token_digest(clear),
    )
    return token, clear


def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    _recent_tokens.pop(token.digest, None)
    token.refresh_from_db()


#: digest -> (token, when this process must look it up again). Why: an RL trainer
#: sends hundreds of steps a second with one token, and each looked it up again; a
#: revoked token (or its deactivated user) is refused by every process within
#: ``API_TOKEN_CACHE_S``, by this one at once.
_recent_tokens: dict[str, tuple[ApiToken, float]] = {}
#: Entries kept at most (then they are all dropped): far more than live tokens.
RECENT_TOKENS_MAX = 10_000


def token_authenticate(*, clear: str) -> ApiToken | None:
    """The active token whose digest matches ``clear``, with its user loaded; None otherwise."""
    digest = token_digest(clear)
    now = time.monotonic()
    recent = _recent_tokens.get(digest)
    if recent is not None and recent[1] > now:
        token = recent[0]
    else:
        found = (
            ApiToken.objects.select_related("user")
            .filter(digest=digest, revoked_at__isnull=True, user__is_active=True)
            .first()
        )
        if found is None:
            _recent_tokens.pop(digest, None)
            return None
        token = found
        if len(_recent_tokens) >= RECENT_TOKENS_MAX:
            _recent_tokens.clear()
        _recent_tokens[digest] = (token, now + settings.API_TOKEN_CACHE_S)
    stamp = timezone.now()
    # Touch last_used_at at most once a minute: a busy trainer should not write on every step.
    if token.last_used_at is None or (stamp - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=stamp)
        token.last_used_at = stamp
    return token


def env_create(*, user: User, scenario: Scenario, seed: int | None) -> Episode:
    """A new API episode of ``scenario`` (seeded by ``seed``, else the scenario's seed)."""
    if seed is None:
        seed = int(scenario.spec.get("seed", 0) or 0)
    return episode_create(
        project=scenario.project,
        user=user,
        scenario=scenario,
        seed=seed,
        source=EpisodeSource.API,
        title=f"API: {scenario.title}"[:200],
    )


def env_step_finish(*, episode: Episode, step: Step) -> Outcome:
    """The step's outcome; an episode that terminated or hit its step limit is closed."""
    outcome = step_outcome(step, scenario_rules(episode.scenario))
    if step.status == StepStatus.DONE and (outcome.terminated or outcome.truncated):
        episode_close(episode=episode)
    return outcome
