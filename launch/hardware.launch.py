"""Launch the real robot: controller + trajectory + closure_solver, no sim.

Its ros2_control driver publishes joint_states and takes effort_controller/commands.

    ros2 launch pardyn hardware.launch.py
    ros2 launch pardyn hardware.launch.py namespace:=robot1 config:=/path/to/my_bringup.yaml
    ros2 launch pardyn hardware.launch.py robot:=rrr3 config:=config/bringup/hardware.yaml

The node set and every parameter come from ONE file, config/bringup/hardware.yaml
(format: pardyn.nodes.bringup), read by pardyn.nodes.launch;
`pardyn bringup config/bringup/hardware.yaml` runs the same nodes in one process,
so what runs without launch_ros is what this file launches. Arguments (``--show-args``): ``robot``,
``config`` (absolute, or relative to the pardyn share), ``use_sim_time``, ``namespace``; any other is refused
(pardyn.nodes.launch).
"""

from pardyn.nodes.launch import bringup_launch_description


def generate_launch_description():
    return bringup_launch_description("hardware", __file__)
