"""The hook for whoever collects a finished job's episodes (exports).

``rollout_job_finished`` is sent once per job, when its last episode ends (or
when it is cancelled), with ``job=`` the RolloutJob. Its episodes are
``studio.rollouts.selectors.rollout_job_episodes(job)``, to be gathered into the
collection named ``job.collection_name``.
"""

from __future__ import annotations

from django.dispatch import Signal

rollout_job_finished = Signal()
