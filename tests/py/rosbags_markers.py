"""A ROS 1 bag of visualization_msgs/MarkerArray written by rosbags (the 3D scene's marker
peer fixture, tests/corpus/scene.rs).

    python3 rosbags_markers.py OUT.bag
    python3 rosbags_markers.py --ros2 OUT_DIR   (the same as a rosbag2 of MCAP storage, CDR,
                                                 ROS 2 Humble's types)

At 1 s: one marker of every type 0..11 in frame map, ids 0..11, marker i at x = 2 i; at 2 s:
DELETE of id 3 and id 0 again (MODIFY) in blue; at 3 s: DELETEALL.
"""
import sys

import numpy

from rosbags.typesys import Stores, get_typestore

ROS2 = "--ros2" in sys.argv
ts = get_typestore(Stores.ROS2_HUMBLE if ROS2 else Stores.ROS1_NOETIC)
T = ts.types
Marker = T["visualization_msgs/msg/Marker"]
MarkerArray = T["visualization_msgs/msg/MarkerArray"]
Header = T["std_msgs/msg/Header"]
Time = T["builtin_interfaces/msg/Time"]
Duration = T["builtin_interfaces/msg/Duration"]
Pose = T["geometry_msgs/msg/Pose"]
Point = T["geometry_msgs/msg/Point"]
Quaternion = T["geometry_msgs/msg/Quaternion"]
Vector3 = T["geometry_msgs/msg/Vector3"]
Color = T["std_msgs/msg/ColorRGBA"]

T0 = 1_700_000_000


def marker(sec, i, kind, action=0, color=(1.0, 0.0, 0.0, 1.0), points=(), text=""):
    stamp = Time(sec=T0 + sec, nanosec=0)
    extra = {}
    if ROS2:
        header = Header(stamp=stamp, frame_id="map")
        extra = dict(
            texture_resource="",
            texture=T["sensor_msgs/msg/CompressedImage"](header=header, format="", data=numpy.zeros(0, dtype=numpy.uint8)),
            uv_coordinates=[],
            mesh_file=T["visualization_msgs/msg/MeshFile"](filename="", data=numpy.zeros(0, dtype=numpy.uint8)),
        )
    else:
        header = Header(seq=0, stamp=stamp, frame_id="map")
    return Marker(
        header=header,
        ns="all",
        id=i,
        type=kind,
        action=action,
        pose=Pose(position=Point(x=2.0 * i, y=0.0, z=0.0), orientation=Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)),
        scale=Vector3(x=0.5, y=0.5, z=0.5),
        color=Color(r=color[0], g=color[1], b=color[2], a=color[3]),
        lifetime=Duration(sec=0, nanosec=0),
        frame_locked=False,
        points=[Point(x=x, y=y, z=z) for (x, y, z) in points],
        colors=[],
        text=text,
        mesh_resource="package://robot/meshes/base.dae" if kind == 10 else "",
        mesh_use_embedded_materials=False,
        **extra,
    )


def main(out):
    tri = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
    four = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.0, 1.0, 0.0)]
    first = [
        marker(1, i, i, points=(tri if i == 11 else four if i in (4, 5, 6, 7, 8) else ()), text="hi" if i == 9 else "")
        for i in range(12)
    ]
    second = [marker(2, 3, 3, action=2), marker(2, 0, 0, color=(0.0, 0.0, 1.0, 1.0))]
    third = [marker(3, 0, 0, action=3)]
    if ROS2:
        from rosbags.rosbag2 import StoragePlugin, Writer

        with Writer(out, version=8, storage_plugin=StoragePlugin.MCAP) as w:
            conn = w.add_connection("/markers", MarkerArray.__msgtype__, typestore=ts)
            for sec, ms in [(1, first), (2, second), (3, third)]:
                data = ts.serialize_cdr(MarkerArray(markers=ms), MarkerArray.__msgtype__)
                w.write(conn, (T0 + sec) * 10**9, data)
        return
    from rosbags.rosbag1 import Writer

    with Writer(out) as w:
        conn = w.add_connection("/markers", MarkerArray.__msgtype__, typestore=ts)
        for sec, ms in [(1, first), (2, second), (3, third)]:
            data = ts.serialize_ros1(MarkerArray(markers=ms), MarkerArray.__msgtype__)
            w.write(conn, (T0 + sec) * 10**9, data)


if __name__ == "__main__":
    main(sys.argv[-1])
