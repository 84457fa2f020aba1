"""File formats, each with a reader and a writer that round-trip byte for byte.

- :mod:`~simulator.formats.awb`: AgentWorldBench JSONL (Qwen-AgentWorld's eval set).
- :mod:`~simulator.formats.trajectory`: episode JSONL with steps and telemetry.
- :mod:`~simulator.formats.sft`: chat SFT JSONL (``messages``).
- :mod:`~simulator.formats.bundle`: scenario bundles (world + scenario).
"""

from __future__ import annotations
