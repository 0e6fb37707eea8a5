"""bagscope: read ROS 1 bags, rosbag2 recordings and MCAP files fast.

Every recording bagscope's library reads (ROS 1 bags 2.0, 1.2 and older, indexed or not,
damaged ones recovered; rosbag2 directories with SQLite or MCAP storage, split, zstd; standalone
MCAP), every encoding it decodes (ROS 1, CDR, protobuf, JSON)::

    import bagscope
    with bagscope.open("run.bag") as rec:
        for t in rec.topics:
            print(t.name, t.msgtype, t.count)
        for m in rec.messages(topics=["/odom"]):
            print(m.time_ns, m.msg.pose.pose.position.x)
        s = rec.series(["/imu/data.linear_acceleration.x"])   # numpy arrays
        table = rec.to_arrow("/imu/data")                     # pyarrow.Table, nested
        df = rec.to_pandas("/imu/data")                       # dotted columns, time index

``bagscope.rosbags.AnyReader`` stands in for rosbags' ``AnyReader`` in existing scripts.
"""

from ._bagscope import (  # noqa: F401
    ArrowStream,
    Camera,
    DamagedError,
    DecodeError,
    DefinitionError,
    Error,
    FileError,
    Frames,
    Message,
    Messages,
    MissingFileError,
    Msg,
    NotARecordingError,
    NotFoundError,
    Recording,
    Topic,
    __version__,
    expect,
    open,
)

__all__ = [
    "open",
    "expect",
    "project_points",
    "undistort",
    "Recording",
    "Camera",
    "ArrowStream",
    "Topic",
    "Message",
    "Messages",
    "Frames",
    "Msg",
    "Error",
    "NotARecordingError",
    "DamagedError",
    "DefinitionError",
    "DecodeError",
    "NotFoundError",
    "FileError",
    "MissingFileError",
]


def _mat(name, m, shape):
    import numpy as np

    a = np.asarray(m, dtype=np.float64)
    if a.size != shape[0] * shape[1]:
        raise ValueError(f"{name} is {shape[0]}×{shape[1]}, not {a.shape}")
    return [float(v) for v in a.reshape(-1)]


def project_points(points, K, D, model="plumb_bob"):
    """Pixels (N×2 float64) of ``points`` (N×3 in the camera's frame) through the camera
    matrix ``K`` (3×3) and distortion ``D``, as OpenCV computes them: ``model``
    ``plumb_bob`` or ``rational_polynomial`` give ``cv2.projectPoints(points, 0, 0, K, D)``,
    ``equidistant`` gives ``cv2.fisheye.projectPoints``."""
    import numpy as np

    from . import _bagscope

    pts = np.ascontiguousarray(np.asarray(points, dtype=np.float64).reshape(-1, 3))
    d = [float(v) for v in np.asarray(D, dtype=np.float64).reshape(-1)]
    return _bagscope._project_points(pts, _mat("K", K, (3, 3)), d, model)


def undistort(image, K, D, model="plumb_bob", R=None, new_K=None):
    """``image`` (H×W or H×W×C uint8) undistorted as ``cv2.undistort(image, K, D,
    newCameraMatrix=new_K)`` does it (or ``cv2.fisheye`` for ``equidistant``), bilinear with
    OpenCV's fixed-point weights; ``R`` rotates as ``initUndistortRectifyMap``'s ``R``."""
    import numpy as np

    from . import _bagscope

    img = np.ascontiguousarray(np.asarray(image, dtype=np.uint8))
    d = [float(v) for v in np.asarray(D, dtype=np.float64).reshape(-1)]
    r = np.eye(3) if R is None else R
    nk = K if new_K is None else new_K
    return _bagscope._undistort(
        img, _mat("K", K, (3, 3)), d, model, _mat("R", r, (3, 3)), _mat("new_K", nk, (3, 3))
    )
