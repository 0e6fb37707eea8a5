"""A drop-in for rosbags' ``AnyReader``: scripts switch by changing one import.

::

    from bagscope.rosbags import AnyReader          # was: from rosbags.highlevel import AnyReader

    with AnyReader([Path("run.bag")]) as reader:
        connections = [c for c in reader.connections if c.topic == "/imu"]
        for connection, timestamp, rawdata in reader.messages(connections=connections):
            msg = reader.deserialize(rawdata, connection.msgtype)
            print(timestamp, msg.header.frame_id)

What it keeps of rosbags (held to rosbags' own ``test_anyreader.py`` in CI):

- the life cycle: the constructor checks its paths (none, a missing one: ``FileNotFoundError``,
  one that is no recording: ``AnyReaderError``), ``open()`` reads them (a second ``open()``
  raises), ``close()`` forgets the connections, and use before ``open()`` or after ``close()``
  raises "AnyReader is not open";
- several recordings are read as one, each topic under its own name with the connections of
  every recording (``bagscope.open(list)`` and the app put each recording's topics under a
  namespace of its own instead);
- ``Connection``, ``MessageDefinition``, ``TopicInfo``, ``ConnectionExtRosbag1/2`` and ``Qos`` with
  rosbags' fields: ``msgtype`` as ``pkg/msg/Type``, ``digest`` the md5sum (ROS 1) or the REP 2011
  type hash (ROS 2: as recorded, else computed from the definition as rosbag2 computes it), a
  stated hash that disagrees with the definition refused;
- messages as dataclass instances with ``__msgtype__`` (``dataclasses.asdict``, ``replace``,
  ``fields`` work), numeric arrays (``uint8[]`` too) as numpy arrays, times as
  ``builtin_interfaces/msg/Time`` with ``sec`` and ``nanosec``;
- errors with rosbags' phrase for the same failure, then bagscope's account of what and where.

Where it differs: definitions the recording does not store come from bagscope's search path and
shipped interfaces, so no ``default_typestore`` is needed (one given is accepted and unused);
ROS 1 bags and rosbag2 recordings may be mixed; it reads what bagscope reads (damaged and
unindexed bags, ROS 1 bag versions before 2.0, zstd storage files).
"""

from __future__ import annotations

import dataclasses
import keyword
import weakref
from contextlib import ExitStack
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Sequence, Union

from . import DecodeError, Error, MissingFileError, open as _open
from . import _bagscope


class AnyReaderError(Error):
    """What the reader could not do: rosbags' phrase, then bagscope's account."""


class MessageDefinitionFormat(Enum):
    """The language of a stored definition."""

    NONE = 0
    MSG = 1
    IDL = 2


class MessageDefinition(NamedTuple):
    """The definition as stored: its format and its text."""

    format: MessageDefinitionFormat
    data: str


class ConnectionExtRosbag1(NamedTuple):
    callerid: Optional[str]
    latching: Optional[int]


class QosHistory(Enum):
    SYSTEM_DEFAULT = 0
    KEEP_LAST = 1
    KEEP_ALL = 2
    UNKNOWN = 3


class QosReliability(Enum):
    SYSTEM_DEFAULT = 0
    RELIABLE = 1
    BEST_EFFORT = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


class QosDurability(Enum):
    SYSTEM_DEFAULT = 0
    TRANSIENT_LOCAL = 1
    VOLATILE = 2
    UNKNOWN = 3
    BEST_AVAILABLE = 4


class QosLiveliness(Enum):
    SYSTEM_DEFAULT = 0
    AUTOMATIC = 1
    MANUAL_BY_NODE = 2
    MANUAL_BY_TOPIC = 3
    UNKNOWN = 4
    BEST_AVAILABLE = 5


class QosTime(NamedTuple):
    sec: int
    nsec: int


class Qos(NamedTuple):
    """One QoS profile a publisher offered."""

    history: QosHistory
    depth: int
    reliability: QosReliability
    durability: QosDurability
    deadline: QosTime
    lifespan: QosTime
    liveliness: QosLiveliness
    liveliness_lease_duration: QosTime
    avoid_ros_namespace_conventions: bool


class ConnectionExtRosbag2(NamedTuple):
    serialization_format: str
    offered_qos_profiles: list


class Connection(NamedTuple):
    """One connection (a publisher's topic and type) of one recording (its ``owner``)."""

    id: int
    topic: str
    msgtype: str
    msgdef: MessageDefinition
    digest: str
    msgcount: int
    ext: Any
    owner: object


class TopicInfo(NamedTuple):
    msgtype: Optional[str]
    msgdef: MessageDefinition
    msgcount: int
    connections: list


class Recording:
    """The ``owner`` of a connection: one of the paths the reader was given."""

    def __init__(self, path: Path):
        self.path = path

    def __repr__(self) -> str:
        return f"Recording({str(self.path)!r})"


def _ros2_name(datatype: str) -> str:
    """``pkg/Type`` as rosbags names every type: ``pkg/msg/Type``."""
    parts = datatype.split("/")
    return f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 else datatype


_CLASSES: dict = {}


def _message_class(name: str, keys: list, constants: Optional[dict]) -> type:
    """The dataclass of a message type (one per name and fields, shared by every reader)."""
    msgtype = _ros2_name(name)
    key = (msgtype, tuple(keys))
    cls = _CLASSES.get(key)
    if cls is None:
        # rosbags appends `_` to a field named like a Python keyword; a name that is no
        # identifier at all (a JSON schema's `max-speed`) has its other characters made `_`.
        fields = []
        for k in keys:
            f = k if k.isidentifier() else "_" + "".join(c if c.isalnum() else "_" for c in k)
            f = f + "_" if keyword.iskeyword(f) else f
            while f in fields:
                f += "_"
            fields.append(f)
        # As rosbags' generated classes have them: an empty message has the member ROS 2's IDL
        # gives it; the constants, then `__msgtype__`, annotated with strings ('ClassVar[int]',
        # 'ClassVar[str]') that dataclasses does not take for ClassVars, are fields with their
        # values as defaults. `fields()`, `asdict()`, `replace()` and `==` see what they see
        # with rosbags, and the constants are attributes of the class and of every message.
        specs: list = list(fields) or [("structure_needs_at_least_one_member", "int", dataclasses.field(default=0))]
        for k, v in (constants or {}).items():
            if k not in fields:
                specs.append((k, f"ClassVar[{type(v).__name__}]", dataclasses.field(default=v)))
        specs.append(("__msgtype__", "ClassVar[str]", dataclasses.field(default=msgtype)))
        # Pickled as how to make the class again (its name, fields and constants) and the
        # instance's attributes, so that a process that never read the recording unpickles it.
        spec = (name, list(keys), constants)
        namespace = {"__reduce__": lambda self: (_rebuild, spec, self.__dict__.copy())}
        cls = dataclasses.make_dataclass(msgtype.replace("/", "__"), specs, namespace=namespace)
        cls.__module__ = __name__
        # How bagscope makes instances without a Python frame (`object.__new__`, then the
        # attributes `__init__` would set): the message's fields in order, then the defaults.
        cls._bagscope_fields = tuple(fields)
        cls._bagscope_defaults = tuple(
            (f.name, f.default) for f in dataclasses.fields(cls) if f.name not in fields
        )
        _CLASSES[key] = cls
    return cls


def _rebuild(name: str, keys: list, constants: Optional[dict]) -> Any:
    """An instance of the class `_message_class` makes, for pickle to fill (its `__reduce__`)."""
    cls = _message_class(name, keys, constants)
    return cls.__new__(cls)


def _qos(p: dict) -> Qos:
    def enum(cls, name):
        return cls.__members__.get(name.upper(), cls.UNKNOWN)

    return Qos(
        enum(QosHistory, p["history"]),
        p["depth"],
        enum(QosReliability, p["reliability"]),
        enum(QosDurability, p["durability"]),
        QosTime(*p["deadline"]),
        QosTime(*p["lifespan"]),
        enum(QosLiveliness, p["liveliness"]),
        QosTime(*p["liveliness_lease_duration"]),
        p["avoid_ros_namespace_conventions"],
    )


_FORMATS = {"": "MSG", "ros1msg": "MSG", "ros2msg": "MSG", "ros2idl": "IDL", "omgidl": "IDL"}


class AnyReader:
    """Reads the recordings at ``paths`` (ROS 1 bags, rosbag2 directories or storage files, MCAP
    files) as one, in time order."""

    def __init__(self, paths: Sequence[Union[str, Path]], *, default_typestore: Any = None):
        if not paths:
            raise AnyReaderError("Must call with at least one path.")
        self.paths = [Path(p) for p in paths]
        if missing := [x for x in self.paths if not x.exists()]:
            raise MissingFileError(f"The following paths are missing: {missing!r}")
        kinds = [_bagscope.sniff(p) for p in self.paths]
        for p, kind in zip(self.paths, kinds):
            if kind is None and p.suffix not in (".bag", ".mcap", ".db3"):
                raise AnyReaderError(
                    f"Unrecognized storage format {p.suffix!r}: {p} is neither a ROS 1 bag, an "
                    "MCAP file nor a rosbag2 recording (told by its first bytes)"
                )
        self.is2 = any(kind != "ros1" for kind in kinds)
        self.default_typestore = default_typestore
        self.stack: Optional[ExitStack] = None
        self.connections: list[Connection] = []
        self._rec: Any = None
        self._index: dict = {}
        self._of: list = []
        self._decoder: Any = None

    def _check_open(self) -> None:
        if not self.stack:
            raise AnyReaderError("AnyReader is not open.")

    def open(self) -> None:
        """Opens the recordings."""
        if self.stack:
            raise AnyReaderError("AnyReader is already open.")
        stack = ExitStack()
        try:
            self._open(stack)
        except BaseException as err:
            stack.close()
            self._rec, self._of, self._index, self.connections = None, [], {}, []
            if isinstance(err, AnyReaderError) or not isinstance(err, Error):
                raise
            raise AnyReaderError(self._phrase(err)) from err
        self.stack = stack

    def _phrase(self, err: Error) -> str:
        """rosbags' phrase for a recording that did not open, then bagscope's text."""
        for p in self.paths:
            if p.is_file() and p.stat().st_size == 0:
                return f"File {str(p)!r} seems to be empty. ({err})"
        return f"Could not open {', '.join(map(str, self.paths))}: {err}"

    def _open(self, stack: ExitStack) -> None:
        p = self.paths
        rec = _open(p[0] if len(p) == 1 else p, keep_topic_names=True)
        stack.callback(rec.close)
        readable, warnings = _bagscope.readable(rec)
        if not readable:
            raise AnyReaderError(
                f"File {str(p[0])!r} seems to be empty: nothing readable in it ({'; '.join(warnings)})"
            )
        _bagscope.set_classes(rec, _message_class)
        owners = [Recording(x) for x in p]
        roots = [x.resolve() for x in p]

        def owner_of(file: Optional[str]) -> Recording:
            if file is not None and len(owners) > 1:
                f = Path(file).resolve()
                for o, r in zip(owners, roots):
                    if f == r or r in f.parents:
                        return o
            return owners[0]

        # One Connection per bagscope connection, except that a rosbag2 recording's topic entry
        # is one connection over all its storage files (bagscope has one per file), as rosbags
        # has it. Entries of one topic that differ (QoS, serialization) or repeat within a file
        # stay apart: the k-th such entry of each file is one connection.
        merged: dict = {}
        seen_in_file: dict = {}
        groups: list[tuple[Connection, list[int]]] = []
        for i, (c, d) in enumerate(zip(rec.connections, _bagscope.connection_details(rec))):
            msgtype = _ros2_name(c["type"])
            text = c["definition"]
            # A schema stated as a language is that format even when empty (std_msgs/msg/Empty).
            stated = text.strip() or c["schema_encoding"]
            fmt = MessageDefinitionFormat[_FORMATS.get(c["schema_encoding"], "NONE") if stated else "NONE"]
            if c["encoding"] == "ros1":
                digest = c["md5sum"]
                latching = int(c["latching"]) if d["latching_stated"] else None
                ext: Any = ConnectionExtRosbag1(c["callerid"] or None, latching)
            else:
                stated, computed = d["type_hash"], d["computed_hash"]
                if stated and computed and fmt != MessageDefinitionFormat.NONE and stated != computed:
                    raise AnyReaderError(
                        f"Message type {msgtype!r} hash mismatch {computed} != {stated}: the "
                        f"definition stored for {c['topic']} is not the one the recording's "
                        "type hash was computed from"
                    )
                digest = stated or computed or ""
                ext = ConnectionExtRosbag2(c["encoding"], [_qos(q) for q in d["qos"]])
            conn = Connection(
                c["id"], c["topic"], msgtype, MessageDefinition(fmt, text), digest, c["count"],
                ext, owner_of(d["file"]),
            )
            if isinstance(ext, ConnectionExtRosbag2):
                same = (id(conn.owner), conn.topic, conn.msgtype, ext[0], tuple(ext[1]))
                nth = seen_in_file.get((same, d["file"]), 0)
                seen_in_file[(same, d["file"])] = nth + 1
                k = (same, nth)
                if k in merged:
                    g = groups[merged[k]]
                    groups[merged[k]] = (g[0]._replace(msgcount=g[0].msgcount + conn.msgcount), g[1] + [i])
                    continue
                merged[k] = len(groups)
            groups.append((conn, [i]))
        self._rec = rec
        self._of = [None] * len(rec.connections)
        for conn, indexes in groups:
            for i in indexes:
                self._of[i] = conn
        self._index = {self._key(conn): indexes for conn, indexes in groups}
        self.connections = [conn for conn, _ in groups]
        # `deserialize` without a Python frame while open (see the method); a weak reference
        # back, so the reader and its decoder make no cycle.
        slow = weakref.WeakMethod(type(self).deserialize.__get__(self))
        self._decoder = _bagscope.Decoder([c.msgtype for c in self._of], slow)
        self.deserialize = self._decoder.deserialize

    @staticmethod
    def _key(c: Connection) -> tuple:
        return (id(c.owner), c.id, c.topic, c.msgtype)

    def close(self) -> None:
        """Closes the recordings and forgets their connections."""
        self._check_open()
        stack, self.stack = self.stack, None
        self.connections = []
        self._of, self._index, self._rec = [], {}, None
        self._decoder = None
        self.__dict__.pop("deserialize", None)
        assert stack is not None
        stack.close()

    def __enter__(self) -> "AnyReader":
        self.open()
        return self

    def __exit__(self, *args: object) -> bool:
        self.close()
        return False

    @property
    def start_time(self) -> int:
        """The first message's time (ns)."""
        self._check_open()
        s = self._rec.start_ns
        return s if s is not None else 2**63 - 1

    @property
    def end_time(self) -> int:
        """One past the last message's time (ns)."""
        self._check_open()
        e = self._rec.end_ns
        return e + 1 if e is not None else 0

    @property
    def duration(self) -> int:
        """From the first message to one past the last (ns)."""
        self._check_open()
        return self.end_time - self.start_time

    @property
    def message_count(self) -> int:
        self._check_open()
        return sum(c.msgcount for c in self.connections)

    @property
    def topics(self) -> dict[str, TopicInfo]:
        """Each topic (in name order) with its connections in every recording."""
        self._check_open()
        by_name: dict[str, list[Connection]] = {}
        for c in self.connections:
            by_name.setdefault(c.topic, []).append(c)
        out = {}
        for name in sorted(by_name):
            cs = by_name[name]
            types = {c.msgtype for c in cs}
            defs = {c.msgdef for c in cs}
            out[name] = TopicInfo(
                types.pop() if len(types) == 1 else None,
                defs.pop() if len(defs) == 1 else MessageDefinition(MessageDefinitionFormat.NONE, ""),
                sum(c.msgcount for c in cs),
                cs,
            )
        return out

    def messages(
        self,
        connections: Iterable[Connection] = (),
        start: Optional[int] = None,
        stop: Optional[int] = None,
    ) -> Iterator[tuple[Connection, int, bytes]]:
        """``(connection, timestamp, rawdata)`` in time order, of ``connections`` (all when
        empty), with ``start <= timestamp < stop``."""
        self._check_open()
        wanted = [i for c in connections for i in self._index.get(self._key(c), ())]
        if connections and not wanted:
            return iter(())
        # Made in Rust, each message remembered beside its bytes by `self.deserialize`.
        return _bagscope.dropin_messages(self._rec, self._of, self._decoder, wanted or None, start, stop)

    def deserialize(self, rawdata: bytes, typ: str) -> Any:
        """The message ``rawdata`` holds, decoded with the definition of ``typ`` in the
        recording. (While the reader is open, an instance attribute of the same name answers
        first: a method made in Rust that hands back the message the bytes of
        ``messages()`` came with, and comes here for anything else.)"""
        self._check_open()
        name = _ros2_name(typ)
        index = next((i for i, c in enumerate(self._of) if c.msgtype == name), None)
        if index is None:
            raise AnyReaderError(f"Could not deserialize {typ!r}: the recording has no type {name}")
        cdr = isinstance(self._of[index].ext, ConnectionExtRosbag2)
        try:
            return self._rec.decode(index, bytes(rawdata))
        except DecodeError as err:
            kind = getattr(err, "kind", "content")
            if kind == "encapsulation":
                phrase = "Invalid or unsupported CDR encapsulation."
            elif kind == "trailing":
                phrase = f"{'CDR' if cdr else 'ROS1'} message size mismatch for {typ!r}."
            else:
                phrase = f"Could not deserialize {typ!r}:"
            raise AnyReaderError(f"{phrase} {err}") from err
