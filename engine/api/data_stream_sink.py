"""DataStreamSink: the end of a stream, the sink operator it was written to."""

from __future__ import annotations

from lockgate.engine.graph.job_graph import ChainingStrategy, OperatorNode

__all__ = ["DataStreamSink"]


class DataStreamSink:
    """The end of a stream: the sink operator it was written to.

    A job runs only the streams that reach a sink; the graph is validated when it is built.
    """

    def __init__(self, node: OperatorNode) -> None:
        self.node = node

    @property
    def uid(self) -> str:
        """The sink operator's uid."""
        return self.node.uid

    def disable_chaining(self) -> DataStreamSink:
        """Run the sink in a chain of its own, behind a channel (Flink's ``disableChaining``)."""
        self.node.chaining = ChainingStrategy.NEVER
        return self
