from __future__ import annotations

from celery import shared_task

from studio.exports.services import export_run


@shared_task(name="exports.run_export")
def run_export(job_id: int) -> None:
    """Write a large export to a file; a job already claimed is left alone."""
    export_run(job_id=job_id)
