"""The checks of a ``StreamEnvironment``'s options, made when it is built."""

from __future__ import annotations

__all__ = ["check_options", "check_watermark_interval"]


def check_options(
    parallelism: int, max_parallelism: int, batch_size: int, channel_capacity: int
) -> None:
    """Raise ``ValueError`` for a parallelism or batch size out of range."""
    if not 1 <= parallelism <= max_parallelism:
        raise ValueError(
            f"parallelism must be between 1 and max_parallelism ({max_parallelism}); "
            f"got {parallelism}"
        )
    if not 1 <= batch_size <= channel_capacity:
        raise ValueError(
            f"batch_size ({batch_size}) must be at least 1 and at most channel_capacity "
            f"({channel_capacity}), so that a full batch always fits in a channel"
        )


def check_watermark_interval(interval: float) -> None:
    """Raise ``ValueError`` for an ``auto_watermark_interval`` below 0 (or NaN)."""
    if not interval >= 0:
        raise ValueError(f"auto_watermark_interval must be 0 or more seconds; got {interval}")
