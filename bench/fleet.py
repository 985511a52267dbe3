#!/usr/bin/env python3
"""A simulated fleet of 16 robots identified serially in process, then on Dask with 1 and 2 workers.

Data: ``pardyn fleet simulate`` of 16 five-bars, 2 nights each, 8 s runs at 500 Hz (32 bags,
recorded once into ``out/bench/fleet`` on a two-worker cluster and reused). Then the 32
identifications (no reports) four ways, each into a fresh results folder:

* **in process**: a plain loop over :func:`pardyn.fleet.identify.identify_run` (no engine);
* **engine, serial**: ``Engine(1)`` (the engine's in-process path);
* **Dask, 1 worker** and **Dask, 2 workers**: a ``LocalCluster``, its start timed apart.

The engine's overhead per task: (Dask 1 worker - in process) / tasks, and a map of 200 empty
tasks on the two-worker cluster (scheduling and transfer alone). The results of every way are
checked equal to the in-process ones (bitwise). Usage: ``python bench/fleet.py``.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path

from distributed import Client, LocalCluster

from pardyn.fleet.identify import identify_fleet, identify_run
from pardyn.fleet.layout import scan
from pardyn.fleet.simulate import FleetSpec, FrictionStep, simulate_fleet
from pardyn.identification.pipeline import IdentificationSettings
from pardyn.distributed import Engine

ROOT = Path(__file__).resolve().parents[1] / "out" / "bench"
DATA = ROOT / "fleet"
SPEC = FleetSpec(model="five_bar", robots=16, nights=2, duration_s=8.0, growth=0.0,
                 step=FrictionStep(robot=5, night=1, drive=0, added=0.02))


def _nothing(shared: None, item: int) -> int:
    return item


def _bases(out: Path) -> dict[str, list]:
    return {str(p.parent.relative_to(out)): json.loads(p.read_text())["base_parameters"]
            for p in sorted(out.glob("*/*/RESULT.json"))}


def main() -> None:
    if not (DATA / "five_bar_16").is_dir():
        clock = time.perf_counter()
        with Engine(2) as engine:
            simulate_fleet(DATA, SPEC, engine=engine)
        print(f"recorded {SPEC.robots * SPEC.nights} runs in {time.perf_counter() - clock:.1f} s (2 workers)")
    runs = scan(DATA).runs
    settings = IdentificationSettings()
    timings: dict[str, float] = {}

    out = ROOT / "fleet_in_process"
    shutil.rmtree(out, ignore_errors=True)
    clock = time.perf_counter()
    for run in runs:
        identify_run((settings, out, False, None), run)
    timings["in process (plain loop)"] = time.perf_counter() - clock
    reference = _bases(out)

    cluster_start = {}
    for label, size in (("engine, serial (Engine(1))", 0), ("Dask, 1 worker", 1), ("Dask, 2 workers", 2)):
        out = ROOT / f"fleet_{size}"
        shutil.rmtree(out, ignore_errors=True)
        clock = time.perf_counter()
        cluster = None
        engine = Engine(1)
        if size:  # a LocalCluster even for one worker: the engine's cost beside the work
            cluster = LocalCluster(n_workers=size, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                                   silence_logs=logging.CRITICAL)
            engine = Engine(client=Client(cluster))
            engine.map(_nothing, None, list(range(2 * size)))  # every worker up
            cluster_start[label] = time.perf_counter() - clock
            clock = time.perf_counter()
        done = identify_fleet(DATA, out, engine=engine, report=False, show_progress=False)
        timings[label] = time.perf_counter() - clock
        assert not done.failed and _bases(out) == reference, f"{label}: results differ from the serial ones"
        if size == 2:
            clock = time.perf_counter()
            engine.map(_nothing, None, list(range(200)))
            timings["200 empty tasks, 2 workers"] = time.perf_counter() - clock
        if cluster is not None:
            engine.client().close()
            cluster.close()

    tasks = len(runs)
    print(f"fleet of {SPEC.robots} five-bars x {SPEC.nights} nights = {tasks} identifications "
          f"({SPEC.duration_s:g} s runs at {SPEC.rate_hz:g} Hz), results equal bitwise in every way")
    print(f"{'way':32s} {'wall s':>8s} {'per task ms':>12s} {'cluster start s':>16s}")
    for label, seconds in timings.items():
        count = 200 if label.startswith("200") else tasks
        start = cluster_start.get(label)
        print(f"{label:32s} {seconds:8.2f} {1000 * seconds / count:12.1f} "
              f"{'' if start is None else f'{start:16.2f}'}")
    serial = timings["in process (plain loop)"]
    print(f"engine overhead per task: {1000 * (timings['Dask, 1 worker'] - serial) / tasks:.1f} ms on one Dask worker, "
          f"{1000 * timings['200 empty tasks, 2 workers'] / 200:.1f} ms for an empty task on two; "
          f"speed-up of 2 workers over in process: {serial / timings['Dask, 2 workers']:.2f}")


if __name__ == "__main__":
    main()
