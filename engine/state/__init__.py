"""Keyed state: descriptors, the per-subtask store, and the state types functions use."""

from lockgate.engine.state.descriptors import StateDescriptor, ValueStateDescriptor
from lockgate.engine.state.keyed import KeyedStateStore, ValueState

__all__ = ["KeyedStateStore", "StateDescriptor", "ValueState", "ValueStateDescriptor"]
