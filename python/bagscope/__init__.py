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
    open,
)

__all__ = [
    "open",
    "Recording",
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
