"""Launch an identification run (sim + controller + exciting trajectory + recorder).

    ros2 launch pardyn identification.launch.py
    ros2 launch pardyn identification.launch.py namespace:=robot1 config:=/path/to/my_bringup.yaml
    ros2 launch pardyn identification.launch.py robot:=rrr3 use_sim_time:=true config:=config/bringup/identification.yaml

The node set and every parameter come from ONE file, config/bringup/identification.yaml
(format: pardyn.nodes.bringup), read by pardyn.nodes.launch;
`pardyn bringup config/bringup/identification.yaml` runs the same nodes in one process,
so what runs without launch_ros is what this file launches. Arguments (``--show-args``): ``robot``,
``config`` (absolute, or relative to the pardyn share), ``use_sim_time``, ``namespace``; any other is refused
(pardyn.nodes.launch).
"""

from pardyn.nodes.launch import bringup_launch_description


def generate_launch_description():
    return bringup_launch_description("identification", __file__)
