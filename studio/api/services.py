"""Writes for the API app: tokens and chat-completions sessions."""

from __future__ import annotations

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
    token.refresh_from_db()


def token_authenticate(*, clear: str) -> ApiToken | None:
    """The active token whose digest matches ``clear``, with its user loaded; None otherwise."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(clear), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    # Touch last_used_at at most once a minute: a busy trainer should not write on every step.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
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
