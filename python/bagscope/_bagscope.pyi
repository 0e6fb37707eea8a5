"""Type stubs of bagscope's native module."""

from os import PathLike
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

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

class NotFoundError(Error):
    """A topic, connection or field the recording does not have."""

class FileError(Error):
    """The operating system refused to open or read a file."""

def open(
    path_or_paths: Union[_Path, Sequence[_Path]],
    msg_path: Optional[Union[_Path, Sequence[_Path]]] = None,
) -> Recording:
    """Opens a recording (a list: several on one timeline)."""

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

class Recording:
    @property
    def path(self) -> str: ...
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
    ) -> Messages: ...
    def series(
        self,
        paths: Sequence[str],
        start_ns: Optional[int] = None,
        end_ns: Optional[int] = None,
    ) -> dict[str, np.ndarray]: ...
    @property
    def connections(self) -> list[dict[str, Any]]: ...
    def decode(self, conn: int, data: bytes) -> Any: ...
    def close(self) -> None: ...
    def __enter__(self) -> Recording: ...
    def __exit__(self, *args: object) -> bool: ...
