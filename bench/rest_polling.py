"""REST polling: the keyed running sum with its REST API polled every 100 ms, against without.

The job is bench/keyed_sum.py's (event ``i`` is ``(i % 10_000, i % 100)``, doubled, keyed,
summed, into a counting sink). With the API on, ``lockgate.engine.web.serve`` runs on the
job's event loop and a poller in another process (as a dashboard or ``lockgate status``
would be) asks ``/jobs/sums/vertices`` and ``/jobs/sums/checkpoints`` every 100 ms. Both
contenders run in turn in the same process and loop, best of ``--repeat``; the ratio
(throughput with the API polled / without) is the figure, its goal at least 0.95. With
``LOCKGATE_BENCH_CLOCK=cpu`` runs are timed in the process's CPU time, which counts the
server's answers (on the job's loop) but not what other processes do to a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import math
import socket
import subprocess
import sys

from harness import CLOCK, CountingSink
from keyed_sum import KEYS, build

from lockgate.engine import StreamEnvironment, run
from lockgate.engine.web import JobRegistry, serve

GOAL = 0.95
INTERVAL = 0.1
NAME = "sums"

POLLER = """
import signal, sys, time, httpx
url, interval, answered = sys.argv[1], float(sys.argv[2]), 0
def report(*_):
    print(answered, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, report)
with httpx.Client(base_url=url, timeout=5) as http:
    while True:
        started = time.monotonic()
        try:
            for path in ("/jobs/sums/vertices", "/jobs/sums/checkpoints"):
                answered += http.get(path).status_code == 200
        except httpx.HTTPError:
            pass  # no server between two runs
        time.sleep(max(0.0, interval - (time.monotonic() - started)))
"""


def job(events: list[tuple[int, int]], parallelism: int) -> tuple[StreamEnvironment, CountingSink]:
    env = StreamEnvironment(parallelism=parallelism)
    sink = CountingSink()
    build(env, sink, events)
    return env, sink


async def without_api(events: list[tuple[int, int]], parallelism: int, port: int) -> float:
    env, sink = job(events, parallelism)
    gc.collect()
    started = CLOCK()
    await env.execute(NAME)
    return checked(CLOCK() - started, sink, events)


async def with_api(events: list[tuple[int, int]], parallelism: int, port: int) -> float:
    # Timed from the job's start to its end, as without: the server's own start and stop
    # (uvicorn's shutdown waits 0.1 s) are not the job's cost.
    env, sink = job(events, parallelism)
    registry = JobRegistry()
    async with serve(registry, port=port):
        gc.collect()
        started = CLOCK()
        async with env.start(NAME) as job_client:
            registry.add(job_client)
            await job_client.wait()
        elapsed = CLOCK() - started
    return checked(elapsed, sink, events)


def checked(elapsed: float, sink: CountingSink, events: list[tuple[int, int]]) -> float:
    assert sink.count == len(events), f"the sink counted {sink.count} of {len(events)}"
    return elapsed


async def bench(
    events: list[tuple[int, int]], parallelism: int, repeat: int, port: int
) -> dict[str, float]:
    best = {"without": math.inf, "with": math.inf}
    for _ in range(repeat):
        best["without"] = min(best["without"], await without_api(events, parallelism, port))
        best["with"] = min(best["with"], await with_api(events, parallelism, port))
    return best


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3_000_000)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    events = [(i % KEYS, i % 100) for i in range(args.events)]
    gc.collect()
    gc.freeze()
    port = free_port()
    poller = subprocess.Popen(
        [sys.executable, "-c", POLLER, f"http://127.0.0.1:{port}", str(INTERVAL)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        best = run(bench, events, args.parallelism, args.repeat, port)
    finally:
        poller.terminate()
        answered = int(poller.communicate()[0].strip() or 0)
    rates = {name: args.events / elapsed for name, elapsed in best.items()}
    ratio = rates["with"] / rates["without"]
    print(
        f"keyed running sum, {args.events:,} events, parallelism {args.parallelism}, "
        f"best of {args.repeat}"
    )
    print(f"  without the REST API           {rates['without']:>12,.0f} ev/s")
    print(f"  REST API polled every {INTERVAL * 1000:.0f} ms   {rates['with']:>12,.0f} ev/s")
    print(f"  ratio with/without             {ratio:>12.3f}  (goal >= {GOAL})")
    print(f"  requests the API answered      {answered:>12,}")
    return 0 if ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
