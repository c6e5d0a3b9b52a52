"""Connectors for a job embedded in a service: records in from its code, committed results out.

``IngressSource`` takes records the service sends (with backpressure, and optionally waiting
until a checkpoint covers them); ``CommittedSink`` yields to subscribers the records that
completed checkpoints committed, exactly once, in commit order.
"""

from lockgate.connectors.service.committed import (
    CommittedSink,
    CommittedStatistics,
    CommittedTransaction,
)
from lockgate.connectors.service.ingress import IngressSource, IngressStatistics
from lockgate.connectors.service.subscription import Subscription

__all__ = [
    "CommittedSink",
    "CommittedStatistics",
    "CommittedTransaction",
    "IngressSource",
    "IngressStatistics",
    "Subscription",
]
