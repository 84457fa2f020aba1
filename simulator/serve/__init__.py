"""An OpenAI-compatible server that speaks SGLang's streaming protocol, with injectable faults.

Run it with ``python -m simulator.serve --port P``; import
:func:`start_server_in_thread` to run it inside tests and benchmarks.
"""

from __future__ import annotations

from simulator.serve.app import ChatServer, ServerOptions, ServerState
from simulator.serve.faults import Fault, parse_fault
from simulator.serve.threaded import RunningServer, start_server_in_thread

__all__ = [
    "ChatServer",
    "Fault",
    "RunningServer",
    "ServerOptions",
    "ServerState",
    "parse_fault",
    "start_server_in_thread",
]
