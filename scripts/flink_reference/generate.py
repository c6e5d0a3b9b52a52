"""Compute the differential suite's reference outputs with Apache Flink; run by hand, never in CI.

For every scenario in tests/engine/end_to_end/flink/scenarios/ (or those named), runs its job,
each variant, on Flink's DataStream API (FlinkReference.java, compiled with javac against the
jars of the apache-flink package in its own venv; parallelism 1, streaming mode, a watermark
after every record) and writes ``<name>.flink.json`` beside the description, then records the
Flink and Java versions and this command in ``reference.json``.

    python3 -m venv /work/flink-venv && /work/flink-venv/bin/pip install apache-flink==2.3.0
    python3 scripts/flink_reference/generate.py [--flink-venv /work/flink-venv] [NAME ...]

Needs Java 17 (``java`` and ``javac`` on the PATH). The project's venv is not used.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from tests.engine.end_to_end.flink import scenarios  # noqa: E402 - after the path is set

REFERENCE = scenarios.FOLDER.parent / "reference.json"
COMMAND = "python3 scripts/flink_reference/generate.py --flink-venv /work/flink-venv"


def main() -> None:
    """Generate the fixtures of the scenarios named on the command line, or of all."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flink-venv", default=os.environ.get("FLINK_VENV", "/work/flink-venv"))
    parser.add_argument("names", nargs="*", help="scenarios to regenerate (default: all)")
    options = parser.parse_args()
    descriptions = scenarios.descriptions()
    names = options.names or list(descriptions)
    unknown = sorted(set(names) - set(descriptions))
    if unknown:
        parser.error(f"no scenario named {', '.join(unknown)}; see {scenarios.FOLDER}")
    pyflink, version = pyflink_install(Path(options.flink_venv))
    with tempfile.TemporaryDirectory(prefix="flink-reference-") as work:
        classes = compile_harness(pyflink / "lib", Path(work))
        flink, outputs = run_jobs(pyflink / "lib", classes, Path(work), descriptions, names)
    if flink != version:
        sys.exit(f"the jars say Flink {flink}, the package apache-flink {version}")
    for name in names:
        write_fixture(name, descriptions[name], outputs[name])
    write_reference(flink)


def pyflink_install(venv: Path) -> tuple[Path, str]:
    """The folder of the pyflink package in ``venv``, and its version."""
    python = venv / "bin" / "python"
    script = (
        "import pathlib, pyflink, pyflink.version as v; "
        "print(pathlib.Path(pyflink.__file__).parent); print(v.__version__)"
    )
    found = subprocess.run([python, "-c", script], check=True, capture_output=True, text=True)
    folder, version = found.stdout.split()
    return Path(folder), version


def compile_harness(lib: Path, work: Path) -> Path:
    """Compile the Java harness against Flink's jars; return the classes folder."""
    classes = work / "classes"
    sources = sorted(str(p) for p in HERE.glob("*.java"))
    subprocess.run(
        ["javac", "-nowarn", "-d", str(classes), "-cp", f"{lib}/*", *sources], check=True
    )
    return classes


def run_jobs(
    lib: Path, classes: Path, work: Path, descriptions: dict[str, Any], names: list[str]
) -> tuple[str, dict[str, dict[str | None, Any]]]:
    """Run every job of the named scenarios in one JVM.

    Returns the Flink version the jobs ran on, and each job's streams by scenario and variant.
    """
    arguments, places = [], []
    for name in names:
        for variant, job in scenarios.jobs(descriptions[name]):
            stem = name if variant is None else f"{name}.{re.sub(r'[^a-z]', '_', variant)}"
            job_file, out_file = work / f"{stem}.json", work / f"{stem}.out.json"
            job_file.write_text(json.dumps(job))
            arguments += [str(job_file), str(out_file)]
            places.append((name, variant, out_file))
    run = subprocess.run(
        ["java", "-cp", f"{lib}/*:{classes}", "FlinkReference", *arguments],
        check=True,
        capture_output=True,
        text=True,
    )
    version = re.search(r"^flink (\S+)$", run.stdout, re.MULTILINE)
    if version is None:
        sys.exit(f"FlinkReference did not say which Flink ran:\n{run.stdout}\n{run.stderr}")
    outputs: dict[str, dict[str | None, Any]] = {}
    for name, variant, out_file in places:
        outputs.setdefault(name, {})[variant] = json.loads(out_file.read_text())["streams"]
    return version[1], outputs


def write_fixture(name: str, description: dict[str, Any], runs: dict[str | None, Any]) -> None:
    """Write Flink's outputs for scenario ``name``, one output entry per line."""
    if description["compare"] == "as_multiset":
        runs = {variant: _without_watermarks(streams) for variant, streams in runs.items()}
    fixture: dict[str, Any] = {"scenario_sha256": scenarios.sha256(name)}
    if "variants" in description:
        fixture["variants"] = runs
    else:
        fixture["streams"] = runs[None]
    scenarios.fixture_path(name).write_text(_render(fixture) + "\n")
    print(f"wrote {scenarios.fixture_path(name).relative_to(ROOT)}")


def _without_watermarks(streams: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The entries with ``null`` for their watermark.

    Where outputs compare as a multiset, the watermark an output came under depends on how
    two input channels interleaved, a race in Flink as in lockgate: stored, it would change
    from one generation to the next.
    """
    return {
        stream: [[None, ts, out] for _, ts, out in entries] for stream, entries in streams.items()
    }


def _render(value: Any, indent: str = "") -> str:
    """JSON with objects spread over lines and each list item on a line of its own."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {_render(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(inner + json.dumps(item) for item in value) + f"\n{indent}]"
    return json.dumps(value)


def write_reference(flink: str) -> None:
    """Record which Flink and Java computed the fixtures, and how to compute them again."""
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    reference = {
        "flink": flink,
        "package": f"apache-flink=={flink} (its own venv; never the project's)",
        "java": java.splitlines()[0],
        "command": COMMAND,
        "settings": {
            "parallelism": 1,
            "runtime_mode": "STREAMING",
            "auto_watermark_interval": "0 ms (no periodic watermarks)",
            "watermarks": "per split, after every record: max timestamp - out_of_orderness - 1",
            "api": "DataStream API in Java (scripts/flink_reference/*.java)",
        },
    }
    REFERENCE.write_text(json.dumps(reference, indent=2) + "\n")
    print(f"wrote {REFERENCE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
