"""A camera recording made with rosbags' writer (ROS 1), with where its overlays must land as
OpenCV computes them (tests/corpus/camera.rs, tests/gui/camera_overlay.rs).

    python3 camera_fixture.py OUT.bag OUT_annotations.mcap EXPECTED.json [OUT_ROS2_DIR]

OUT.bag holds a 640×480 mid-grey camera (`/camera/image_raw`, rgb8) whose header stamps lag
its receive times by a known, varying delay; its calibration (`/camera/camera_info`,
plumb_bob); the TF tree (`/tf_static`: base_link → camera_optical, `/tf`: odom → base_link);
a cloud (`/cloud`, PointCloud2 in base_link); a marker (`/marker`, POINTS in odom); and image
markers (`/annotations`, ImageMarker: a circle and a polygon at each image's stamp).
OUT_annotations.mcap holds the same camera as Foxglove's schemas in protobuf, written by
Foxglove's SDK: `/cam` (`foxglove.RawImage`), `/cam/calibration` (`foxglove.CameraCalibration`)
and `/detections` (`foxglove.ImageAnnotations`, stamped as the images, logged later).

OUT_ROS2_DIR (when given): a rosbag2 recording (MCAP storage, CDR) by rosbags' writer with the
camera (`/camera/image_raw`, `/camera/camera_info`) and `foxglove_msgs/msg/ImageAnnotations`
on `/detections` (the definitions of Foxglove's ROS 2 package), as the protobuf ones.

EXPECTED.json: per image its receive time and stamp; the cloud's and the marker's points'
pixels (cv2.projectPoints of the points carried into the optical frame), the annotations.
"""
import json
import sys

import cv2
import numpy as np
from rosbags.rosbag1 import Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

TS = get_typestore(Stores.ROS1_NOETIC)
# Noetic's store in rosbags lacks tf2_msgs: its one-line definition, as ROS 1 has it.
TS.register(get_types_from_msg("geometry_msgs/TransformStamped[] transforms", "tf2_msgs/msg/TFMessage"))
T0 = 1_700_000_000 * 10**9
W, H = 640, 480
K = np.array([[520.0, 0.0, 318.5], [0.0, 515.0, 241.25], [0.0, 0.0, 1.0]])
D = np.array([-0.12, 0.05, 0.001, -0.0015, -0.01])
# base_link → camera_optical: 0.2 m up, the optical frame (z forward, x right, y down) looking
# along base_link's x.
CAM_T = np.array([0.1, 0.0, 0.2])
CAM_Q = np.array([-0.5, 0.5, -0.5, 0.5])  # x y z w
# odom → base_link at each image (the robot drives forward).
SPEED = 0.5


def rot(q):
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def m(name):
    return TS.types[name]


def header(stamp, frame, seq=0):
    return m("std_msgs/msg/Header")(
        seq=seq,
        stamp=m("builtin_interfaces/msg/Time")(sec=stamp // 10**9, nanosec=stamp % 10**9),
        frame_id=frame,
    )


def tf(parent, child, stamp, t, q):
    V, Q = m("geometry_msgs/msg/Vector3"), m("geometry_msgs/msg/Quaternion")
    return m("geometry_msgs/msg/TransformStamped")(
        header=header(stamp, parent),
        child_frame_id=child,
        transform=m("geometry_msgs/msg/Transform")(
            translation=V(x=float(t[0]), y=float(t[1]), z=float(t[2])),
            rotation=Q(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3])),
        ),
    )


def cloud_points():
    """A wall 3 m ahead of base_link: a 9 × 7 grid, 0.3 m apart."""
    pts = []
    for i in range(-4, 5):
        for j in range(-3, 4):
            pts.append([3.0, 0.3 * i, 0.2 + 0.3 * j])
    return np.array(pts, dtype=np.float32)


def pointcloud2(stamp, pts):
    F = m("sensor_msgs/msg/PointField")
    fields = [F(name=n, offset=4 * k, datatype=7, count=1) for k, n in enumerate("xyz")]
    return m("sensor_msgs/msg/PointCloud2")(
        header=header(stamp, "base_link"),
        height=1,
        width=len(pts),
        fields=fields,
        is_bigendian=False,
        point_step=12,
        row_step=12 * len(pts),
        data=np.frombuffer(pts.astype("<f4").tobytes(), dtype=np.uint8),
        is_dense=True,
    )


def to_optical(pts_base):
    """base_link points in the camera's optical frame."""
    r = rot(CAM_Q)
    return (np.asarray(pts_base, dtype=np.float64) - CAM_T) @ r


def project(pts_optical):
    px, _ = cv2.projectPoints(pts_optical, np.zeros(3), np.zeros(3), K, D)
    return px.reshape(-1, 2)


def main(bag_path, fox_path, expected_path):
    import pathlib

    pathlib.Path(bag_path).unlink(missing_ok=True)
    color = m("std_msgs/msg/ColorRGBA")
    P = m("geometry_msgs/msg/Point")
    images, stamps = [], []
    cloud = cloud_points()
    # The marker: four points in odom, 4 m ahead of the robot's start.
    marker_odom = np.array([[4.0, -0.5, 0.2], [4.0, 0.5, 0.2], [4.0, 0.5, 0.8], [4.0, -0.5, 0.8]])
    with Writer(bag_path) as w:
        c_img = w.add_connection("/camera/image_raw", "sensor_msgs/msg/Image", typestore=TS)
        c_info = w.add_connection("/camera/camera_info", "sensor_msgs/msg/CameraInfo", typestore=TS)
        c_static = w.add_connection(
            "/tf_static", "tf2_msgs/msg/TFMessage", typestore=TS, latching=1
        )
        c_tf = w.add_connection("/tf", "tf2_msgs/msg/TFMessage", typestore=TS)
        c_cloud = w.add_connection("/cloud", "sensor_msgs/msg/PointCloud2", typestore=TS)
        c_marker = w.add_connection("/marker", "visualization_msgs/msg/Marker", typestore=TS)
        c_ann = w.add_connection("/annotations", "visualization_msgs/msg/ImageMarker", typestore=TS)

        def put(conn, t, msg):
            w.write(conn, t, TS.serialize_ros1(msg, conn.msgtype))

        put(
            c_static,
            T0,
            m("tf2_msgs/msg/TFMessage")(transforms=[tf("base_link", "camera_optical", T0, CAM_T, CAM_Q)]),
        )
        for k in range(5):
            received = T0 + 100_000_000 + k * 200_000_000
            delay = 20_000_000 + 15_000_000 * k  # 20 ms to 80 ms
            stamp = received - delay
            x = SPEED * (stamp - T0) / 1e9
            # The robot's pose at the stamp: TF at the stamp and either side of it.
            for dt in (-50_000_000, 0, 50_000_000):
                ts = stamp + dt
                put(
                    c_tf,
                    ts + 1_000_000,
                    m("tf2_msgs/msg/TFMessage")(
                        transforms=[tf("odom", "base_link", ts, [SPEED * (ts - T0) / 1e9, 0, 0], [0, 0, 0, 1])]
                    ),
                )
            put(
                c_info,
                received,
                m("sensor_msgs/msg/CameraInfo")(
                    header=header(stamp, "camera_optical"),
                    height=H,
                    width=W,
                    distortion_model="plumb_bob",
                    D=np.array(D),
                    K=K.reshape(-1).copy(),
                    R=np.eye(3).reshape(-1),
                    P=np.array([K[0, 0], 0, K[0, 2], 0, 0, K[1, 1], K[1, 2], 0, 0, 0, 1, 0], dtype=np.float64),
                    binning_x=0,
                    binning_y=0,
                    roi=m("sensor_msgs/msg/RegionOfInterest")(
                        x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
                    ),
                ),
            )
            put(
                c_img,
                received,
                m("sensor_msgs/msg/Image")(
                    header=header(stamp, "camera_optical", k),
                    height=H,
                    width=W,
                    encoding="rgb8",
                    is_bigendian=0,
                    step=W * 3,
                    data=np.full(W * H * 3, 128, dtype=np.uint8),
                ),
            )
            put(c_cloud, received - 5_000_000, pointcloud2(stamp, cloud))
            if k == 0:
                mk = m("visualization_msgs/msg/Marker")(
                    header=header(stamp, "odom"),
                    ns="wall",
                    id=7,
                    type=8,
                    action=0,
                    pose=m("geometry_msgs/msg/Pose")(
                        position=P(x=0.0, y=0.0, z=0.0),
                        orientation=m("geometry_msgs/msg/Quaternion")(x=0.0, y=0.0, z=0.0, w=1.0),
                    ),
                    scale=m("geometry_msgs/msg/Vector3")(x=0.05, y=0.05, z=0.05),
                    color=color(r=1.0, g=0.0, b=1.0, a=1.0),
                    lifetime=m("builtin_interfaces/msg/Duration")(sec=0, nanosec=0),
                    frame_locked=False,
                    points=[P(x=float(a), y=float(b), z=float(c)) for a, b, c in marker_odom],
                    colors=[],
                    text="",
                    mesh_resource="",
                    mesh_use_embedded_materials=False,
                )
                put(c_marker, received - 50_000_000, mk)
            # The annotations arrive late (a detector's latency) but carry the image's stamp.
            circle = (100.0 + 10 * k, 120.0)
            poly = [(400.0, 300.0), (520.0, 300.0), (520.0, 400.0), (400.0, 400.0)]
            for mid, (ty, pts, pos, scale) in enumerate(
                [(0, [], circle, 25.0), (3, poly, (0.0, 0.0), 3.0)]
            ):
                put(
                    c_ann,
                    received + 150_000_000,
                    m("visualization_msgs/msg/ImageMarker")(
                        header=header(stamp, "camera_optical"),
                        ns="det",
                        id=mid,
                        type=ty,
                        action=0,
                        position=P(x=pos[0], y=pos[1], z=0.0),
                        scale=scale,
                        outline_color=color(r=1.0, g=0.0, b=0.0, a=1.0) if ty == 0 else color(r=0.0, g=1.0, b=0.0, a=1.0),
                        filled=0,
                        fill_color=color(r=0.0, g=0.0, b=0.0, a=0.0),
                        lifetime=m("builtin_interfaces/msg/Duration")(sec=0, nanosec=0),
                        points=[P(x=a, y=b, z=0.0) for a, b in pts],
                        outline_colors=[],
                    ),
                )
            # Where things land, by OpenCV: the cloud (in base_link, the camera rigidly on it)
            # and the marker (in odom: the robot has moved x by the stamp).
            marker_base = marker_odom - np.array([x, 0.0, 0.0])
            images.append(
                {
                    "received": received,
                    "stamp": stamp,
                    "cloud_px": project(to_optical(cloud)).tolist(),
                    "marker_px": project(to_optical(marker_base)).tolist(),
                    "circle": [circle[0], circle[1], 25.0],
                    "polygon": poly,
                }
            )
            stamps.append(stamp)
    fox = []
    import foxglove
    from foxglove.messages import (
        CameraCalibration,
        RawImage,
        CircleAnnotation,
        Color,
        ImageAnnotations,
        Point2,
        PointsAnnotation,
        PointsAnnotationType,
        TextAnnotation,
        Timestamp,
    )

    with foxglove.open_mcap(fox_path, allow_overwrite=True):
        for k, stamp in enumerate(stamps):
            ts = Timestamp(sec=stamp // 10**9, nsec=stamp % 10**9)
            c = (200.0 + 5 * k, 200.0)
            pts = [(50.0, 400.0), (150.0, 380.0), (250.0, 420.0)]
            received = images[k]["received"]
            foxglove.log(
                "/cam",
                RawImage(
                    timestamp=ts,
                    frame_id="camera_optical",
                    width=W,
                    height=H,
                    encoding="rgb8",
                    step=W * 3,
                    data=bytes([128]) * (W * H * 3),
                ),
                log_time=received,
            )
            foxglove.log(
                "/cam/calibration",
                CameraCalibration(
                    timestamp=ts,
                    frame_id="camera_optical",
                    width=W,
                    height=H,
                    distortion_model="plumb_bob",
                    D=D.tolist(),
                    K=K.reshape(-1).tolist(),
                    R=np.eye(3).reshape(-1).tolist(),
                    P=[K[0, 0], 0, K[0, 2], 0, 0, K[1, 1], K[1, 2], 0, 0, 0, 1, 0],
                ),
                log_time=received,
            )
            foxglove.log(
                "/detections",
                ImageAnnotations(
                    circles=[
                        CircleAnnotation(
                            timestamp=ts,
                            position=Point2(x=c[0], y=c[1]),
                            diameter=40.0,
                            thickness=2.0,
                            fill_color=Color(r=0, g=0, b=0, a=0),
                            outline_color=Color(r=0, g=0, b=1, a=1),
                        )
                    ],
                    points=[
                        PointsAnnotation(
                            timestamp=ts,
                            type=PointsAnnotationType.LineStrip,
                            points=[Point2(x=a, y=b) for a, b in pts],
                            outline_color=Color(r=1, g=1, b=0, a=1),
                            thickness=3.0,
                        )
                    ],
                    texts=[
                        TextAnnotation(
                            timestamp=ts,
                            position=Point2(x=300.0, y=40.0),
                            text=f"car {k}",
                            font_size=20.0,
                            text_color=Color(r=1, g=1, b=1, a=1),
                            background_color=Color(r=0, g=0, b=0, a=1),
                        )
                    ],
                ),
                log_time=stamp + 300_000_000,
            )
            fox.append({"stamp": stamp, "circle": [c[0], c[1], 20.0], "strip": pts})
    with open(expected_path, "w") as f:
        json.dump({"images": images, "foxglove": fox, "K": K.tolist(), "D": D.tolist()}, f)


FOXGLOVE_MSGS = {
    "foxglove_msgs/msg/Color": "float64 r\nfloat64 g\nfloat64 b\nfloat64 a\n",
    "foxglove_msgs/msg/Point2": "float64 x\nfloat64 y\n",
    "foxglove_msgs/msg/CircleAnnotation": "builtin_interfaces/Time timestamp\n"
    "foxglove_msgs/Point2 position\nfloat64 diameter\nfloat64 thickness\n"
    "foxglove_msgs/Color fill_color\nfoxglove_msgs/Color outline_color\n",
    "foxglove_msgs/msg/PointsAnnotation": "uint8 UNKNOWN=0\nuint8 POINTS=1\nuint8 LINE_LOOP=2\n"
    "uint8 LINE_STRIP=3\nuint8 LINE_LIST=4\nbuiltin_interfaces/Time timestamp\nuint8 type\n"
    "foxglove_msgs/Point2[] points\nfoxglove_msgs/Color outline_color\n"
    "foxglove_msgs/Color[] outline_colors\nfoxglove_msgs/Color fill_color\nfloat64 thickness\n",
    "foxglove_msgs/msg/TextAnnotation": "builtin_interfaces/Time timestamp\n"
    "foxglove_msgs/Point2 position\nstring text\nfloat64 font_size\n"
    "foxglove_msgs/Color text_color\nfoxglove_msgs/Color background_color\n",
    "foxglove_msgs/msg/ImageAnnotations": "foxglove_msgs/CircleAnnotation[] circles\n"
    "foxglove_msgs/PointsAnnotation[] points\nfoxglove_msgs/TextAnnotation[] texts\n",
}


def ros2(out_dir, expected):
    """The camera and Foxglove's ImageAnnotations in CDR, as a rosbag2 MCAP recording."""
    import shutil

    from rosbags.rosbag2 import StoragePlugin, Writer as Writer2

    shutil.rmtree(out_dir, ignore_errors=True)
    ts = get_typestore(Stores.ROS2_HUMBLE)
    for name, text in FOXGLOVE_MSGS.items():
        ts.register(get_types_from_msg(text, name))
    t = ts.types
    Time = t["builtin_interfaces/msg/Time"]
    Color, P2 = t["foxglove_msgs/msg/Color"], t["foxglove_msgs/msg/Point2"]
    with Writer2(out_dir, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        c_img = w.add_connection("/camera/image_raw", "sensor_msgs/msg/Image", typestore=ts)
        c_info = w.add_connection("/camera/camera_info", "sensor_msgs/msg/CameraInfo", typestore=ts)
        c_ann = w.add_connection("/detections", "foxglove_msgs/msg/ImageAnnotations", typestore=ts)
        for k, img in enumerate(expected["images"]):
            stamp, received = img["stamp"], img["received"]
            st = Time(sec=stamp // 10**9, nanosec=stamp % 10**9)
            hdr = t["std_msgs/msg/Header"](stamp=st, frame_id="camera_optical")
            w.write(c_img, received, ts.serialize_cdr(t["sensor_msgs/msg/Image"](
                header=hdr, height=H, width=W, encoding="rgb8", is_bigendian=0, step=W * 3,
                data=np.full(W * H * 3, 128, dtype=np.uint8)), c_img.msgtype))
            w.write(c_info, received, ts.serialize_cdr(t["sensor_msgs/msg/CameraInfo"](
                header=hdr, height=H, width=W, distortion_model="plumb_bob", d=np.array(D),
                k=K.reshape(-1).copy(), r=np.eye(3).reshape(-1),
                p=np.array([K[0, 0], 0, K[0, 2], 0, 0, K[1, 1], K[1, 2], 0, 0, 0, 1, 0], dtype=np.float64),
                binning_x=0, binning_y=0,
                roi=t["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0, do_rectify=False),
            ), c_info.msgtype))
            f = expected["foxglove"][k]
            col = lambda r, g, b: Color(r=r, g=g, b=b, a=1.0)  # noqa: E731
            ann = t["foxglove_msgs/msg/ImageAnnotations"](
                circles=[t["foxglove_msgs/msg/CircleAnnotation"](
                    timestamp=st, position=P2(x=f["circle"][0], y=f["circle"][1]), diameter=2 * f["circle"][2],
                    thickness=2.0, fill_color=Color(r=0.0, g=0.0, b=0.0, a=0.0), outline_color=col(0.0, 0.0, 1.0))],
                points=[t["foxglove_msgs/msg/PointsAnnotation"](
                    timestamp=st, type=3, points=[P2(x=a, y=b) for a, b in f["strip"]],
                    outline_color=col(1.0, 1.0, 0.0), outline_colors=[], fill_color=Color(r=0.0, g=0.0, b=0.0, a=0.0),
                    thickness=3.0)],
                texts=[],
            )
            w.write(c_ann, received + 300_000_000, ts.serialize_cdr(ann, c_ann.msgtype))


if __name__ == "__main__":
    main(*sys.argv[1:4])
    if len(sys.argv) > 4:
        with open(sys.argv[3]) as f:
            ros2(sys.argv[4], json.load(f))
