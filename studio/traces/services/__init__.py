"""Writes for traces, one module per subject; the names callers use, in one place.

- :mod:`.importing`: files into traces (AgentWorldBench rows kept as read).
- :mod:`.simulations`: re-simulating a trace with the world model.
- :mod:`.judging`: judge scores and Turing guesses; ``awb infer``/``judge`` results.
- :mod:`.annotations`: a reviewer's annotation of a simulated turn.
"""

from __future__ import annotations

from studio.traces.services.annotations import annotation_save
from studio.traces.services.importing import (
    ImportTooLarge,
    import_file,
    import_job_create,
    import_run,
    publish_import,
    record_trace_get_or_create,
)
from studio.traces.services.judging import (
    awb_row_for,
    awb_store_judged,
    awb_store_predictions,
    judge_score_save,
)
from studio.traces.services.simulations import (
    endpoint_spec,
    simulation_claim,
    simulation_create,
    simulation_run,
)

__all__ = [
    "ImportTooLarge",
    "annotation_save",
    "awb_row_for",
    "awb_store_judged",
    "awb_store_predictions",
    "import_file",
    "import_job_create",
    "import_run",
    "endpoint_spec",
    "judge_score_save",
    "publish_import",
    "record_trace_get_or_create",
    "simulation_claim",
    "simulation_create",
    "simulation_run",
]
