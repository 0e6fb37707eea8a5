"""A rosbag2 recording (MCAP) written by rosbags of what a ROS 2 robot_state_publisher leaves
in a recording without /robot_description: its robot_description parameter declared on
/parameter_events, and /joint_states (the robot model peer fixture, tests/corpus/robot.rs).

    python3 rosbags_parameter_urdf.py OUT_DIR URDF_FILE

At 0.5 s the parameter event (node /robot_state_publisher, new parameter robot_description,
a string); at 1 s, 2 s and 3 s a joint state with lbr_iiwa_joint_1..7 at 0.1 k, 0.2 k, ... rad.
"""
import sys

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

ts = get_typestore(Stores.ROS2_HUMBLE)
T = ts.types
ParameterEvent = T["rcl_interfaces/msg/ParameterEvent"]
Parameter = T["rcl_interfaces/msg/Parameter"]
ParameterValue = T["rcl_interfaces/msg/ParameterValue"]
JointState = T["sensor_msgs/msg/JointState"]
Header = T["std_msgs/msg/Header"]
Time = T["builtin_interfaces/msg/Time"]

import numpy as np

out, urdf = sys.argv[1], open(sys.argv[2]).read()
T0 = 1_700_000_000
with Writer(out, version=8, storage_plugin=StoragePlugin.MCAP) as w:
    pe = w.add_connection("/parameter_events", ParameterEvent.__msgtype__, typestore=ts)
    js = w.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
    value = ParameterValue(
        type=4,
        bool_value=False,
        integer_value=0,
        double_value=0.0,
        string_value=urdf,
        byte_array_value=np.array([], dtype=np.uint8),
        bool_array_value=np.array([], dtype=np.bool_),
        integer_array_value=np.array([], dtype=np.int64),
        double_array_value=np.array([], dtype=np.float64),
        string_array_value=[],
    )
    ev = ParameterEvent(
        stamp=Time(sec=T0, nanosec=500_000_000),
        node="/robot_state_publisher",
        new_parameters=[Parameter(name="robot_description", value=value)],
        changed_parameters=[],
        deleted_parameters=[],
    )
    w.write(pe, T0 * 10**9 + 500_000_000, ts.serialize_cdr(ev, ParameterEvent.__msgtype__))
    for k in (1, 2, 3):
        msg = JointState(
            header=Header(stamp=Time(sec=T0 + k, nanosec=0), frame_id=""),
            name=[f"lbr_iiwa_joint_{i}" for i in range(1, 8)],
            position=np.array([0.1 * k * i for i in range(1, 8)], dtype=np.float64),
            velocity=np.array([], dtype=np.float64),
            effort=np.array([], dtype=np.float64),
        )
        w.write(js, (T0 + k) * 10**9, ts.serialize_cdr(msg, JointState.__msgtype__))
