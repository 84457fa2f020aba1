"""Reviewing simulated against real: anchors, diffs, the judge, and eval.py's pipeline.

Kept apart from the engine (simulator/'s top level), which steps episodes; this package
only reads what the engine and the benchmark files produce, and never runs a step itself
except through :func:`simulator.review.awb_eval.simulate_trace`.
"""
