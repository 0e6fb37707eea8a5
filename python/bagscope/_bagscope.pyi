"""Type stubs of bagscope's native module."""

from os import PathLike
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

if TYPE_CHECKING:
    import pandas
    import pyarrow

_Path = Union[str, PathLike[str]]

__version__: str

class Error(Exception):
    """What bagscope could not do, saying what and where (file, byte offset, record)."""

class NotARecordingError(Error):
    """The file is not a recording bagscope knows."""

class DamagedError(Error):
    """The recording is damaged where it was read."""

class DefinitionError(Error):
    """A message definition or schema that does not parse, or none found."""

class DecodeError(Error):
    """A message whose bytes do not fit its definition."""

    kind: str
    """Which part is at fault (from ``Recording.decode``): ``"content"``, ``"encapsulation"`` (CDR's
    header) or ``"trailing"`` (bytes left after the last field)."""

class NotFoundError(Error):
    """A topic, connection or field the recording does not have."""

class FileError(Error, OSError):
    """The operating system refused to open or read a file."""

class MissingFileError(FileError, FileNotFoundError):
    """A file or directory that does not exist."""

def open(
    path_or_paths: Union[_Path, Sequence[_Path]],
    msg_path: Optional[Union[_Path, Sequence[_Path]]] = None,
    *,
    keep_topic_names: bool = False,
    offsets_ns: Optional[Sequence[int]] = None,
    threads: Optional[int] = None,
) -> Recording:
    """Opens a recording (a list: several on one timeline, each recording's topics under a
    namespace named after its file, or with ``keep_topic_names`` under their own names): a local
    path, or an ``s3://``, ``gs://``, ``az://`` or ``http(s)://`` location (credentials from each
    cloud's environment). ``threads``: how many threads a read may use (default: the cores, at
    most 8). Reads release the GIL while they decompress, decode and build series."""

def sniff(path: _Path) -> Optional[str]:
    """The kind of recording at a local path told by its first bytes: ``"ros1"``, ``"mcap"``,
    ``"rosbag2"``, or None."""

def set_classes(rec: Recording, make: Optional[Any]) -> None:
    """Messages of ``rec`` made as instances of ``make(name, field_names, constants)``."""

def connection_details(rec: Recording) -> list[dict[str, Any]]:
    """Per connection: ``file``, ``type_hash`` (stated), ``computed_hash``, ``qos``."""

def readable(rec: Recording) -> tuple[bool, list[str]]:
    """Whether the recording has anything to read, and its warnings."""

class Decoder:
    """The rosbags drop-in's ``deserialize``: the message the last bytes of
    :func:`dropin_messages` came with, ``slow()(rawdata, typ)`` for anything else."""

    def __init__(self, types: list[str], slow: Any) -> None: ...
    def deserialize(self, rawdata: bytes, typ: str) -> Any: ...

def dropin_messages(
    rec: Recording,
    conns: list[Any],
    decoder: Decoder,
    connections: Optional[list[int]] = None,
    start_ns: Optional[int] = None,
    end_ns: Optional[int] = None,
) -> Iterator[tuple[Any, int, bytes]]:
    """``(connection, timestamp, rawdata)`` of ``rec``, ``conns[i]`` for its connection ``i``."""

class Topic:
    name: str
    msgtype: str
    count: int
    encoding: str
    definition: str
    connections: int
    @property
    def rate(self) -> Optional[float]:
        """The median rate in Hz (reads the message tables)."""

class Msg:
    """A decoded message: fields as attributes and items."""

    __msgtype__: str
    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, name: str) -> Any: ...
    def keys(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]: ...

class Message:
    topic: str
    time_ns: int
    conn: int
    @property
    def data(self) -> bytes: ...
    @property
    def msg(self) -> Optional[Msg]: ...

class Messages(Iterator[Message]):
    def __iter__(self) -> Messages: ...
    def __next__(self) -> Message: ...

class ArrowStream:
    """Record batches behind the Arrow PyCapsule interface."""

    def __arrow_c_stream__(self, requested_schema: object = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...
    @property
    def skipped(self) -> tuple[int, Optional[str]]:
        """Messages that did not decode and were left out, and the first one's error."""

class Frames(Iterator[Tuple[int, np.ndarray]]):
    """A video topic's frames: ``(time_ns, rgb)``, ``rgb`` an ``(height, width, 3)`` uint8 array."""

    def __iter__(self) -> Frames: ...
    def __next__(self) -> Tuple[int, np.ndarray]: ...
    @property
    def total(self) -> int: ...

class Recording:
    @property
    def path(self) -> Union[PathLike[str], str]:
        """The recording's path (a ``pathlib.Path``), or a remote recording's URL as a string
        (without credentials)."""
    @property
    def topics(self) -> list[Topic]: ...
    @property
    def start_ns(self) -> Optional[int]: ...
    @property
    def end_ns(self) -> Optional[int]: ...
    @property
    def duration(self) -> float: ...
    @property
    def warnings(self) -> list[str]: ...
    def info(self) -> dict[str, Any]: ...
    def messages(
        self,
        topics: Optional[Sequence[str]] = None,
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
        raw: bool = False,
        connections: Optional[Sequence[int]] = None,
    ) -> Messages: ...
    def frames(
        self, topic: str, start_ns: Optional[int] = None, end_ns: Optional[int] = None
    ) -> Frames:
        """A video topic's frames (H.264, H.265), decoded in-process in display order."""
        ...
    def series(
        self,
        paths: Sequence[str],
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
        vars: Optional[Mapping[str, Union[int, float, bool, str]]] = None,
        named: Optional[Mapping[str, str]] = None,
        interp: str = "hold",
    ) -> dict[str, np.ndarray]: ...
    def derive(
        self,
        func: Callable[..., Any],
        *sources: str,
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
        vectorized: bool = False,
    ) -> dict[str, np.ndarray]:
        """A Python function over a main series and sources aligned on it (nearest sample)."""
        ...
    def lua(
        self,
        script: str,
        name: Optional[str] = None,
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
    ) -> dict[str, dict[str, np.ndarray]]:
        """A Lua series script (inline, a .lua file, or a PlotJuggler file's snippet)."""
        ...
    def with_virtual(
        self, topic: str, type: str, inputs: Sequence[str], func: Callable[[str, Any, float], Any]
    ) -> "Recording":
        """This recording with a virtual topic made by a Python function."""
        ...
    def with_scripts(self, files: Sequence[Union[str, PathLike[str]]]) -> "Recording":
        """This recording with the virtual topics of message script files."""
        ...
    def track(
        self,
        topic: Optional[str] = None,
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
        *,
        lat: Optional[str] = None,
        lon: Optional[str] = None,
    ) -> dict[str, Any]: ...
    def annotations(
        self, topic: str, start_ns: Optional[int] = None, end_ns: Optional[int] = None
    ) -> dict[str, Any]:
        """Annotation messages: ``time_ns``, ``stamp_ns``, ``shapes`` (points N×2), ``notes``."""
    def camera(self, topic: str, at_ns: Optional[int] = None) -> "Camera":
        """The calibration on ``topic`` at or before ``at_ns`` (the first where None)."""
    def to_arrow(
        self,
        topic: str,
        fields: Optional[Sequence[str]] = None,
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
    ) -> "pyarrow.Table":
        """The topic as typed, nested Arrow columns (needs pyarrow)."""
    def to_pandas(
        self,
        topic: str,
        fields: Optional[Sequence[str]] = None,
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
    ) -> "pandas.DataFrame":
        """`to_arrow` flattened to dotted columns, indexed by receive time (needs pandas)."""
    def arrow_stream(
        self,
        topic: str,
        fields: Optional[Sequence[str]] = None,
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
    ) -> ArrowStream:
        """The topic as an Arrow C stream, read as the consumer asks (DuckDB, polars, pyarrow)."""
    @property
    def connections(self) -> list[dict[str, Any]]: ...
    def decode(self, conn: int, data: bytes) -> Any: ...
    def close(self) -> None: ...
    def __enter__(self) -> Recording: ...
    def __exit__(self, *args: object) -> bool: ...


class Camera:
    """A camera's calibration (``CameraInfo`` or ``foxglove.CameraCalibration``)."""

    @property
    def K(self) -> Any: ...
    @property
    def D(self) -> Any: ...
    @property
    def P(self) -> Any: ...
    @property
    def R(self) -> Any: ...
    @property
    def model(self) -> str: ...
    @property
    def size(self) -> tuple[int, int]: ...
    @property
    def frame_id(self) -> str: ...
    @property
    def time_ns(self) -> int: ...
    @property
    def notes(self) -> list[str]: ...
    def project(self, points: Any, rectified: bool = False) -> Any:
        """Pixels (N×2, NaN where not seen) of points (N×3) in the camera's frame."""

def expect(
    recording: Union[str, PathLike[str]], rules: Union[str, PathLike[str]], threads: Optional[int] = None
) -> list[dict[str, Any]]:
    """`recording` checked against the rules file `rules`: one dict per rule with the
    ``expectations`` table's columns (recording, check, topic, status, measured, expected,
    start_ns, end_ns, detail, line)."""

def _check_rules(rules: Union[str, PathLike[str]]) -> None: ...
def _project_points(points: Any, k: list[float], d: list[float], model: str) -> Any: ...
def _undistort(
    image: Any, k: list[float], d: list[float], model: str, r: list[float], new_k: list[float]
) -> Any: ...
