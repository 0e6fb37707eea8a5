"""A drop-in for the common use of rosbags' ``AnyReader``: scripts switch by changing one import.

::

    from bagscope.rosbags import AnyReader          # was: from rosbags.highlevel import AnyReader

    with AnyReader([Path("run.bag")]) as reader:
        connections = [c for c in reader.connections if c.topic == "/imu"]
        for connection, timestamp, rawdata in reader.messages(connections=connections):
            msg = reader.deserialize(rawdata, connection.msgtype)
            print(timestamp, msg.header.frame_id)

Connections, topics and times have rosbags' names (``msgtype`` as ``pkg/msg/Type`` for ROS 1
too, ``msgcount``, ``digest``, ``start_time``, ``end_time`` one past the last message); decoded
messages have the field names of their definitions, times with ``sec`` and ``nanosec``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

from . import Error, Message, open as _open

AnyReaderError = Error


def _ros2_name(datatype: str) -> str:
    """``pkg/Type`` as rosbags names every type: ``pkg/msg/Type``."""
    parts = datatype.split("/")
    return f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 else datatype


@dataclass(frozen=True)
class MessageDefinition:
    """The definition as stored: its format (``MSG``, ``IDL``, ...) and its text."""

    format: str
    data: str


@dataclass(frozen=True)
class ConnectionExtRosbag1:
    callerid: Optional[str]
    latching: Optional[int]


@dataclass(eq=False)
class Connection:
    """One connection (publisher and type of a topic) of the recording."""

    id: int
    topic: str
    msgtype: str
    msgdef: MessageDefinition
    digest: str
    msgcount: int
    ext: Any = None
    owner: Any = None
    index: int = field(default=0, repr=False)


@dataclass
class TopicInfo:
    msgtype: Optional[str]
    msgdef: Optional[MessageDefinition]
    msgcount: int
    connections: list[Connection]


class _Raw(bytes):
    """A message's bytes, remembering the message so ``deserialize`` decodes it once."""

    _message: Message


class AnyReader:
    """Reads the recordings at ``paths`` (ROS 1 bags, rosbag2 directories, MCAP files) as one."""

    def __init__(self, paths: Sequence[Union[str, Path]], default_typestore: Any = None):
        self.paths = [Path(p) for p in paths]
        self.connections: list[Connection] = []
        self.topics: dict[str, TopicInfo] = {}
        self._rec = None
        self._by_index: dict[int, Connection] = {}
        self.isopen = False

    def open(self) -> None:
        if self.isopen:
            return
        p = self.paths
        self._rec = _open(p[0] if len(p) == 1 else p)
        self.connections = []
        for c in self._rec.connections:
            fmt = {"": "MSG", "ros1msg": "MSG", "ros2msg": "MSG", "ros2idl": "IDL"}.get(
                c["schema_encoding"], c["schema_encoding"].upper()
            )
            ext = None
            if c["encoding"] == "ros1":
                ext = ConnectionExtRosbag1(c["callerid"] or None, int(c["latching"]))
            conn = Connection(
                id=c["id"],
                topic=c["topic"],
                msgtype=_ros2_name(c["type"]),
                msgdef=MessageDefinition(fmt, c["definition"]),
                digest=c["md5sum"],
                msgcount=c["count"],
                ext=ext,
                owner=self,
                index=c["index"],
            )
            self.connections.append(conn)
            self._by_index[conn.index] = conn
        self.topics = {}
        for conn in self.connections:
            t = self.topics.get(conn.topic)
            if t is None:
                self.topics[conn.topic] = TopicInfo(conn.msgtype, conn.msgdef, conn.msgcount, [conn])
            else:
                t.msgcount += conn.msgcount
                t.connections.append(conn)
        self.isopen = True

    def close(self) -> None:
        if self._rec is not None:
            self._rec.close()
        self._rec = None
        self.isopen = False

    def __enter__(self) -> "AnyReader":
        self.open()
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    @property
    def start_time(self) -> int:
        """The first message's time (ns)."""
        return self._rec.start_ns if self._rec.start_ns is not None else 2**63 - 1

    @property
    def end_time(self) -> int:
        """One past the last message's time (ns)."""
        return self._rec.end_ns + 1 if self._rec.end_ns is not None else 0

    @property
    def duration(self) -> int:
        return self.end_time - self.start_time

    @property
    def message_count(self) -> int:
        return sum(c.msgcount for c in self.connections)

    def messages(
        self,
        connections: Iterable[Connection] = (),
        start: Optional[int] = None,
        stop: Optional[int] = None,
    ) -> Iterator[tuple[Connection, int, bytes]]:
        """``(connection, timestamp, rawdata)`` in time order, of ``connections`` (all when
        empty), with ``start <= timestamp < stop``."""
        wanted = list(connections) or self.connections
        indexes = {c.index for c in wanted}
        topics = sorted({c.topic for c in wanted})
        for m in self._rec.messages(topics=topics, start_ns=start, end_ns=stop):
            if m.conn not in indexes:
                continue
            raw = _Raw(m.data)
            raw._message = m
            yield self._by_index[m.conn], m.time_ns, raw

    def deserialize(self, rawdata: bytes, typename: str) -> Any:
        """The message ``rawdata`` holds, decoded with the definition of ``typename`` in the
        recording."""
        m = getattr(rawdata, "_message", None)
        if m is not None:
            return m.msg
        for c in self.connections:
            if c.msgtype == typename or c.msgtype == _ros2_name(typename):
                return self._rec.decode(c.index, bytes(rawdata))
        raise AnyReaderError(f"the recording has no connection of type {typename}")
