"""Launch the simulated robot (sim + controller (CTC) + exciting trajectory + identifier).

    ros2 launch pardyn online_identification.launch.py
    ros2 launch pardyn online_identification.launch.py namespace:=robot1 config:=/path/to/my_bringup.yaml
    ros2 launch pardyn online_identification.launch.py robot:=rrr3 use_sim_time:=true config:=config/bringup/online_identification.yaml

The node set and every parameter come from ONE file, config/bringup/online_identification.yaml
(format: pardyn.cli.bringup), read by pardyn.nodes.launch;
`pardyn bringup config/bringup/online_identification.yaml` runs the same nodes in one process,
so what runs without launch_ros is what this file launches. Arguments (``--show-args``): ``robot``,
``config`` (absolute, or relative to the pardyn share), ``use_sim_time``, ``namespace``; any other is refused
(pardyn.nodes.launch).
"""

from pardyn.nodes.launch import bringup_launch_description


def generate_launch_description():
    return bringup_launch_description("online_identification", __file__)
