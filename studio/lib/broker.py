"""The Redis broker transport, fixed for workers that outlive a broker connection.

Why: when the broker connection drops, a Celery worker on the threads pool
collects the broken connection and then closes it. Closing restores the messages
the worker had not yet acknowledged, and a task that finishes after the reconnect
acknowledges its message, both through a channel whose connection the collect
already took away; kombu then reads ``conninfo.hostname`` from ``None`` and the
``AttributeError`` ends the worker. Through a dead channel there is nothing to
restore or acknowledge anyway: Redis gives unacknowledged messages back after the
visibility timeout, and every task claims its row, so running one again is safe.
So those calls are skipped (and logged) and the worker goes on with its new
connection.

Also, kombu builds a new Redis client object for each publish and each acknowledgement
(``conn_or_acquire``), and building one costs more than the command it sends (about 4 %
of a worker's CPU per step): a channel keeps one for its connection pool instead. A Redis
client is safe to share between threads; each command takes a connection from the pool.
"""

from __future__ import annotations

import logging
from typing import Any

from kombu.transport import redis

logger = logging.getLogger(__name__)


class _QoS(redis.QoS):
    def _connected(self) -> bool:
        transport = self.channel.connection
        return transport is not None and transport.client is not None

    def restore_unacked(self, client: Any = None) -> None:
        if client is None and not self._connected():
            logger.warning("broker connection gone: unacknowledged messages come back later")
            return
        super().restore_unacked(client)

    def ack(self, delivery_tag: str) -> None:
        if not self._connected():
            logger.warning("broker connection gone: %s is not acknowledged", delivery_tag)
            return
        super().ack(delivery_tag)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        if not self._connected():
            logger.warning("broker connection gone: %s is not rejected", delivery_tag)
            return
        super().reject(delivery_tag, requeue=requeue)


class _Channel(redis.Channel):
    QoS = _QoS
    _shared: tuple[Any, Any] | None = None  # (pool, client)

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:  # the consumer's own, on the worker's event loop: as kombu does
            return super()._create_client(asynchronous=True)  # type: ignore[misc]
        pool = self.pool
        shared = self._shared
        if shared is None or shared[0] is not pool:  # a reconnect makes a new pool
            shared = self._shared = (pool, super()._create_client())  # type: ignore[misc]
        return shared[1]


class Transport(redis.Transport):
    """``CELERY_BROKER_TRANSPORT`` in production (settings.py)."""

    Channel = _Channel
