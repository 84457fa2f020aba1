"""Run the protocol test server in a background thread, for tests and benchmarks."""

from __future__ import annotations

import threading
import time
from types import TracebackType

import uvicorn

from simulator.serve.app import ChatServer, ServerOptions, ServerState


class RunningServer:
    """A server on a free port of 127.0.0.1; ``with`` it, or call :meth:`stop`."""

    def __init__(self, app: ChatServer, server: uvicorn.Server, thread: threading.Thread) -> None:
        self.app = app
        self._server = server
        self._thread = thread
        sockets = server.servers[0].sockets
        host, port = sockets[0].getsockname()[:2]
        self.base_url = f"http://{host}:{port}"
        self.port: int = port

    @property
    def state(self) -> ServerState:
        return self.app.state

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_server_in_thread(
    options: ServerOptions | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> RunningServer:
    """Start the server (port 0: any free port) and return once it accepts connections."""
    app = ChatServer(options)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="off",
        log_level="critical",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="simulator-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the test server did not start on {host}:{port}")
        time.sleep(0.01)
    return RunningServer(app, server, thread)
