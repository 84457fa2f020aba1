"""World Studio's domain layer: pure Python, no Django.

Worlds, domains, perturbations, prompts, parsing, verifiers, renderers, file
formats, world-model backends and the episode engine.
"""

from __future__ import annotations
