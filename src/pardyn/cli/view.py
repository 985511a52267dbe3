"""``pardyn view``: the robot in 3D in the browser (viser), its loops closing.

* ``pardyn view --robot dualv``: at home, a slider per actuated joint, the forward problem solved on every move,
  the bodies coloured by how close the configuration is to a singularity;
* ``pardyn view out/demo`` (a ``pardyn demo`` output; ``--run`` picks the bag, default ``validation``) or
  ``pardyn view BAG --robot NAME``: the recorded motion on a timeline, its torques and (demo) the identification
  residuals against time beside it;
* ``pardyn view --live --robot NAME``: the ``joint_states`` of a running bringup (``--namespace``), solved live.

It serves until Ctrl-C at the address it prints (``--host``, ``--port``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pardyn.cli.options import number
from pardyn.errors import InputError
from pardyn.nodes.stopping import StopSignals

HELP = "the robot in 3D in the browser: sliders on its actuated joints, a demo or bag replayed, or live topics"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", nargs="?", type=Path,
                        help="a `pardyn demo` output directory or a bag to replay (none: sliders, or --live)")
    parser.add_argument("--robot", help="robot name or YAML path (default: the demo's robot, else dualv)")
    parser.add_argument("--run", default="validation", help="the demo run to replay (default validation)")
    parser.add_argument("--live", action="store_true", help="show the joint_states of a running bringup")
    parser.add_argument("--namespace", default="/", help="--live: the bringup's namespace (default /)")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1; 0.0.0.0: "
                                                            "every interface)")
    parser.add_argument("--port", type=number(0, 65535, integer=True), default=8080,
                        help="port to serve on (default 8080; 0: a free one)")


def _robot_name(args: argparse.Namespace) -> str:
    from pardyn.scene.recording import demo_robot  # noqa: PLC0415

    if args.robot:
        return args.robot
    if args.source is not None and (args.source / "bags").is_dir():
        return demo_robot(args.source)
    return "dualv"


def run(args: argparse.Namespace) -> int:
    try:
        import viser  # noqa: F401, PLC0415
    except ImportError:
        raise InputError("pardyn view needs viser: pip install 'pardyn[view]' (or pip install viser)") from None
    from pardyn.robot import load_robot  # noqa: PLC0415
    from pardyn.scene.recording import recording_from_bag, recording_from_demo  # noqa: PLC0415
    from pardyn.scene.viewer import SceneView, add_replay, add_sliders, start_server, stop_server  # noqa: PLC0415

    if args.live and args.source is not None:
        raise InputError("give either a source to replay or --live, not both")
    if args.source is not None and not args.source.exists():
        raise InputError(f"{args.source}: no such demo output or bag")
    robot = load_robot(_robot_name(args))
    recording = None
    if args.source is not None:
        demo = (args.source / "bags").is_dir()
        recording = (recording_from_demo(robot, args.source, args.run) if demo
                     else recording_from_bag(robot, args.source))
    server = start_server(args.host, args.port)
    replay = None
    # SIGINT/SIGTERM recorded until restore(): a process started with SIGINT ignored (a background job of a script)
    # inherits that and would never see Python's KeyboardInterrupt; a second signal is one more request
    stop = StopSignals().install()
    try:
        view = SceneView(server, robot)
        if recording is not None:
            replay = add_replay(view, recording)
            what = f"replaying {args.source}" + (f" (run {args.run})" if (args.source / "bags").is_dir() else "")
        elif args.live:
            what = f"live joint_states of {args.namespace}"
        else:
            add_sliders(view)
            what = "sliders on the actuated joints"
        shown = "127.0.0.1" if args.host in ("0.0.0.0", "") else args.host
        if args.live:
            stop.restore()  # the node's run takes the signals (pardyn.nodes.stopping)
            print(f"{robot.name}: {what} at http://{shown}:{server.get_port()} (Ctrl-C to stop)", flush=True)
            from pardyn.nodes.visualizer import run_live_view  # noqa: PLC0415 - runs a node

            return run_live_view(view, args.namespace)
        print(f"{robot.name}: {what} at http://{shown}:{server.get_port()} (Ctrl-C to stop)", flush=True)
        while not stop.received:
            time.sleep(0.1)
        return 0
    finally:
        if replay is not None:
            replay.close()  # its thread stops moving the scene before the server goes
        stop_server(server)
        stop.restore()
