"""Peers: a worker's data-plane connections to the other workers it has channels with.

One connection per pair of workers carries every channel between them, both ways
(``lockgate.engine.runtime.network.transport``). Of a pair, the worker with the lower
number listens and the other connects: every worker listens first (``Listening``), and
connects only once the driver says every worker does (``Connect``), so that no connect
finds nobody listening. A worker connects to its lower peers in order, then accepts its
higher ones; the lowest worker only accepts, so the connects never wait on each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from lockgate.actors import Channel
from lockgate.engine.checkpointing.channel_state import ChannelId
from lockgate.engine.errors import TransportProtocolError
from lockgate.engine.events import ChannelItem, CheckpointBarrier
from lockgate.engine.graph.planning import ExecutionPlan
from lockgate.engine.runtime.job.remote_ends import RemoteEnds
from lockgate.engine.runtime.network.transport import Connection, connect, listen

__all__ = ["PeerEnds", "connect_peers", "worker_name"]


def worker_name(worker: int) -> str:
    """How a worker introduces itself on the data plane: ``worker 3``."""
    return f"worker {worker}"


async def connect_peers(
    worker: int,
    peers: frozenset[int],
    addresses: tuple[str, ...],
    token: bytes,
    *,
    listening: Callable[[], None],
    connect_now: Callable[[], Awaitable[Any]],
) -> dict[int, Connection]:
    """Open this worker's connections to ``peers`` (not entered yet), by peer number.

    ``listening()`` is called once this worker listens (or needs not); ``connect_now()``
    returns once every worker does.
    """
    name, higher = worker_name(worker), sorted(p for p in peers if p > worker)
    listener = await listen(addresses[worker], token=token, name=name) if higher else None
    listening()
    await connect_now()
    connections = {
        peer: await connect(addresses[peer], token=token, name=name)
        for peer in sorted(p for p in peers if p < worker)
    }
    if listener is not None:
        async with listener:
            for _ in higher:
                accepted = await listener.accept()
                connections[_peer_number(accepted, higher)] = accepted
    return connections


def _peer_number(connection: Connection, expected: list[int]) -> int:
    for peer in expected:
        if connection.peer == worker_name(peer):
            return peer
    raise TransportProtocolError(
        f"{connection.name}: the peer calls itself '{connection.peer}', not one of the "
        f"workers expected to connect ({', '.join(map(worker_name, expected))})"
    )


class PeerEnds(RemoteEnds):
    """The data plane's ends of this worker's channels to other workers, on their connections."""

    def __init__(
        self,
        plan: ExecutionPlan,
        worker_of: Callable[[int, int], int],
        connections: Mapping[int, Connection],
    ) -> None:
        self._edges = {edge.edge_id: edge for edge in plan.edges}
        self._worker_of = worker_of
        self._connections = connections

    def sending(self, channel: ChannelId, *, capacity: int) -> Channel[ChannelItem]:
        """The producer's end, on the connection to the consumer's worker."""
        edge = self._edges[channel.edge_id]
        peer = self._worker_of(edge.downstream.chain_id, channel.downstream_index)
        return self._connections[peer].open_sending(channel, capacity=capacity)

    def receiving(
        self,
        channel: ChannelId,
        local: Channel[ChannelItem],
        on_overtaken: Callable[[CheckpointBarrier, list[Any]], None],
    ) -> None:
        """Feed ``local`` from the connection to the producer's worker."""
        edge = self._edges[channel.edge_id]
        peer = self._worker_of(edge.upstream.chain_id, channel.upstream_index)
        self._connections[peer].open_receiving(channel, local, on_overtaken=on_overtaken)
