"""Launch the closure_solver node with config/closure_solver.yaml.

    ros2 launch pardyn closure_solver.launch.py
    ros2 launch pardyn closure_solver.launch.py robot:=rrr3 namespace:=robot1 config:=/path/to/my_params.yaml

Arguments (``ros2 launch pardyn closure_solver.launch.py --show-args``): ``config`` (the node's ROS parameters
file, absolute or relative to the pardyn share; ``params_file``, its older name), ``robot``, ``use_sim_time``,
``namespace`` (pardyn.nodes.launch). The node subscribes ``joint_states`` and publishes
``closed_loop/joint_states`` and ``platform/pose`` (see pardyn.nodes.closure_solver).
"""

from pardyn.nodes.launch import node_launch_description


def generate_launch_description():
    return node_launch_description("closure_solver", __file__)
