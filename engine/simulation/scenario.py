"""Scenario: a simulation described in a TOML file.

The job by ``module:attr``, its models, the run's options and its faults:

::

    [simulation]
    job = "simulated_enrichment:build"   # a StreamEnvironment, or a function returning one
    seed = 7
    until = 600.0
    report_every = 1.0

    [parameters]                           # keywords for the job's function, as they are
    capacity = 16

    [models.events]                        # models, built and passed to it by name
    kind = "arrival_source"
    arrivals = { kind = "poisson", rate = 300.0 }
    keys = { kind = "zipf", count = 100 }

    [models.store]
    kind = "service_sink"
    service = { kind = "exponential", rate = 350.0 }
    outages = [{ at = 120.0, duration = 30.0, kind = "stall" }]

    [[faults]]
    kind = "kill_attempt"
    at = 300.0

A model is a table with a ``kind`` (the snake-case name of its class: ``poisson``,
``rate_schedule``, ``on_off``, ``replay``, ``zipf``, ``uniform``, ``constant``,
``exponential``, ``lognormal``, ``empirical``, ``arrival_source``, ``service``,
``service_sink``, ``cpu_cost``) and the class's own options; options that are models are
tables with a ``kind`` too. ``outages`` are tables of ``Outage``'s options, ``retry`` of
``AsyncRetry``'s; a ``replay``'s or ``empirical``'s ``path`` is read relative to the TOML
file. Faults are ``kill_attempt``, ``fail_checkpoint`` and ``slow_storage``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lockgate.engine.api.environment import StreamEnvironment
from lockgate.engine.functions.async_io import AsyncRetry
from lockgate.engine.simulation.faults.fault import (
    FailCheckpoint,
    Fault,
    KillAttempt,
    SlowStorage,
)
from lockgate.engine.simulation.models.arrival_source import ArrivalSource
from lockgate.engine.simulation.models.arrivals import ConstantRate, Poisson
from lockgate.engine.simulation.models.availability import Outage
from lockgate.engine.simulation.models.cpu_cost import CpuCost
from lockgate.engine.simulation.models.distributions import (
    Constant,
    Empirical,
    Exponential,
    LogNormal,
)
from lockgate.engine.simulation.models.keys import UniformKeys, ZipfKeys
from lockgate.engine.simulation.models.replay import Replay
from lockgate.engine.simulation.models.schedules import OnOff, RateSchedule
from lockgate.engine.simulation.models.service import Service
from lockgate.engine.simulation.models.service_sink import ServiceSink
from lockgate.engine.simulation.simulation import Simulation

__all__ = ["MODEL_KINDS", "Scenario", "ScenarioError"]

MODEL_KINDS: dict[str, Callable[..., Any]] = {
    "constant_rate": ConstantRate,
    "poisson": Poisson,
    "rate_schedule": RateSchedule,
    "on_off": OnOff,
    "uniform": UniformKeys,
    "zipf": ZipfKeys,
    "constant": Constant,
    "exponential": Exponential,
    "lognormal": LogNormal,
    "arrival_source": ArrivalSource,
    "service": Service,
    "service_sink": ServiceSink,
    "cpu_cost": CpuCost,
}
"""The models a scenario names by ``kind`` (``replay`` and ``empirical`` read files too)."""

FAULT_KINDS: dict[str, Callable[..., Fault]] = {
    "kill_attempt": KillAttempt,
    "fail_checkpoint": FailCheckpoint,
    "slow_storage": SlowStorage,
}


class ScenarioError(ValueError):
    """A scenario file cannot be read as a simulation; the message names the file and key."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A simulation read from TOML: build its environment with ``environment()``.

    ``job`` is ``module:attr``; the module is imported from the TOML file's folder (then
    the current one, then ``sys.path``). Its attribute is a ``StreamEnvironment`` with its
    job built, or a function returning one, called with the ``models`` and the
    ``parameters`` as keywords.
    """

    path: Path
    job: str
    seed: int = 0
    until: float = 60.0
    report_every: float = 1.0
    backend: str = "asyncio"
    parameters: Mapping[str, Any] = field(default_factory=dict)
    models: Mapping[str, Any] = field(default_factory=dict)
    faults: tuple[Fault, ...] = ()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read and check the scenario at ``path``.

        Raises:
            ScenarioError: the file is not TOML, or says something that cannot be.
        """
        file = Path(path)
        try:
            data = tomllib.loads(file.read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ScenarioError(f"scenario {file}: cannot be read: {error}") from error
        return _scenario(file, data)

    def environment(self) -> StreamEnvironment:
        """The job's environment, built by its module with the scenario's models."""
        value = _attribute(self.job, self.path.parent)
        if isinstance(value, StreamEnvironment):
            return value
        if not callable(value):
            raise ScenarioError(
                f"scenario {self.path}: job {self.job} is a {type(value).__name__}, neither a "
                "StreamEnvironment nor a function returning one"
            )
        env = value(**self.models, **self.parameters)
        if not isinstance(env, StreamEnvironment):
            raise ScenarioError(
                f"scenario {self.path}: job {self.job} returned a {type(env).__name__}, not "
                "a StreamEnvironment"
            )
        return env

    def simulation(self) -> Simulation:
        """The ``Simulation`` the scenario describes."""
        return Simulation(
            self.environment(),
            seed=self.seed,
            until=self.until,
            report_every=self.report_every,
            backend=self.backend,  # type: ignore[arg-type]  # checked by Simulation
            faults=self.faults,
        )


def _scenario(file: Path, data: dict[str, Any]) -> Scenario:
    unknown = set(data) - {"simulation", "parameters", "models", "faults"}
    if unknown:
        raise ScenarioError(f"scenario {file}: unknown tables {sorted(unknown)}")
    options = dict(data.get("simulation", {}))
    job = options.pop("job", None)
    if not isinstance(job, str) or ":" not in job:
        raise ScenarioError(
            f"scenario {file}: [simulation] job must be 'module:attr', the environment or "
            f"the function that builds it; got {job!r}"
        )
    allowed = {"seed", "until", "report_every", "backend"}
    if extra := set(options) - allowed:
        raise ScenarioError(f"scenario {file}: [simulation] has unknown keys {sorted(extra)}")
    models = {
        name: _built(file, f"models.{name}", spec) for name, spec in data.get("models", {}).items()
    }
    faults = tuple(_fault(file, index, spec) for index, spec in enumerate(data.get("faults", [])))
    return Scenario(
        file,
        job,
        parameters=dict(data.get("parameters", {})),
        models=models,
        faults=faults,
        **options,
    )


def _built(file: Path, where: str, spec: Any) -> Any:
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ScenarioError(f"scenario {file}: {where} must be a table with a 'kind'")
    options = dict(spec)
    kind = options.pop("kind")
    if kind == "replay":
        return _replay(file, where, options)
    if kind == "empirical":
        return _empirical(file, where, options)
    make = MODEL_KINDS.get(kind)
    if make is None:
        known = ", ".join(sorted([*MODEL_KINDS, "replay", "empirical"]))
        raise ScenarioError(f"scenario {file}: {where} has unknown kind {kind!r}; known: {known}")
    arguments = {key: _option(file, f"{where}.{key}", key, value) for key, value in options.items()}
    return _called(file, where, make, arguments)


def _option(file: Path, where: str, key: str, value: Any) -> Any:
    if key == "outages":
        return [_called(file, where, Outage, dict(outage)) for outage in value]
    if key == "retry":
        return _called(file, where, AsyncRetry, dict(value))
    if isinstance(value, dict) and "kind" in value:
        return _built(file, where, value)
    return value


def _replay(file: Path, where: str, options: dict[str, Any]) -> Any:
    path = options.pop("path", None)
    if path is None:
        return _called(file, where, Replay, options)
    trace = file.parent / path
    read = Replay.from_json if trace.suffix == ".json" else Replay.from_csv
    return _called(file, where, read, {"path": trace, **options})


def _empirical(file: Path, where: str, options: dict[str, Any]) -> Any:
    path = options.pop("path", None)
    if path is None:
        return _called(file, where, Empirical, options)
    return _called(file, where, Empirical.from_file, {"path": file.parent / path, **options})


def _fault(file: Path, index: int, spec: Any) -> Fault:
    where = f"faults[{index}]"
    if not isinstance(spec, dict) or spec.get("kind") not in FAULT_KINDS:
        raise ScenarioError(
            f"scenario {file}: {where} must be a table whose kind is one of "
            f"{', '.join(FAULT_KINDS)}"
        )
    options = {key: value for key, value in spec.items() if key != "kind"}
    arguments = {key: _option(file, f"{where}.{key}", key, value) for key, value in options.items()}
    fault: Fault = _called(file, where, FAULT_KINDS[spec["kind"]], arguments)
    return fault


def _called(file: Path, where: str, make: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    try:
        return make(**arguments)
    except (TypeError, ValueError) as error:
        name = getattr(make, "__qualname__", repr(make))
        accepted = _parameters(make)
        raise ScenarioError(
            f"scenario {file}: {where}: {name} refused {sorted(arguments)}: {error}"
            + (f" (it takes {accepted})" if accepted else "")
        ) from error


def _parameters(make: Callable[..., Any]) -> str:
    try:
        names = [name for name in inspect.signature(make).parameters if name != "self"]
    except (TypeError, ValueError):
        return ""
    return ", ".join(names)


def _attribute(spec: str, folder: Path) -> Any:
    module_name, _, attribute = spec.partition(":")
    with _on_path(folder, Path.cwd()):
        try:
            value: Any = importlib.import_module(module_name)
        except ImportError as error:
            raise ScenarioError(
                f"job {spec}: cannot import '{module_name}' ({error}); put it beside the "
                "scenario file or in the current folder, or add its folder to PYTHONPATH"
            ) from error
    for name in attribute.split("."):
        if not hasattr(value, name):
            raise ScenarioError(f"job {spec}: '{module_name}' has no '{attribute}'")
        value = getattr(value, name)
    return value


@contextmanager
def _on_path(*folders: Path) -> Iterator[None]:
    added = [str(f) for f in folders if str(f) not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for folder in added:
            sys.path.remove(folder)
