"""Worlds, their immutable revisions, and scenarios built on a revision.

A world's editable fields live in revisions: saving makes a new revision, and
episodes and scenarios pin the revision they use, so nothing that already ran
changes underneath a researcher.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from simulator.world import World as WorldSpec
from studio.core.models import ModelEndpoint, Project


class World(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="worlds")
    title = models.CharField(max_length=200)
    domain = models.CharField(max_length=40)
    archived = models.BooleanField(default=False)
    head = models.ForeignKey(
        "WorldRevision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title


class WorldRevision(models.Model):
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    #: ``simulator.world.World.to_dict()``
    spec = models.JSONField()
    content_hash = models.CharField(max_length=64, db_index=True)
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["world", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["world", "number"], name="unique_revision_number")
        ]

    def __str__(self) -> str:
        return f"{self.world} r{self.number}"

    @property
    def project(self) -> Project:
        return self.world.project

    def to_world(self) -> WorldSpec:
        return WorldSpec.from_dict(self.spec)


class Scenario(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="scenarios")
    title = models.CharField(max_length=200)
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="scenarios")
    world_revision = models.ForeignKey(
        WorldRevision, on_delete=models.PROTECT, related_name="scenarios"
    )
    #: ``simulator.scenario.Scenario.to_dict()``: task, perturbations, success, agent, sampling.
    spec = models.JSONField(default=dict)
    endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    archived = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title

    @property
    def domain(self) -> str:
        return self.world.domain

    def spec_value(self, key: str, default: Any = None) -> Any:
        return self.spec.get(key, default)
