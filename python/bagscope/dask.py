"""A topic of many recordings as one Dask DataFrame: the fan-out is Dask's, each partition read
by bagscope on a worker (``pip install "dask[dataframe]" distributed``)::

    from dask.distributed import Client
    import bagscope.dask

    client = Client("tcp://scheduler:8786")          # or a LocalCluster
    df = bagscope.dask.read_topic(sorted(Path("runs").glob("*.bag")), "/battery_state",
                                  fields=["voltage"])
    low = df[df["voltage"] < 11.0].groupby("recording").size().compute()

Each partition is ``Recording.to_pandas`` of one recording (or of one time slice of it, with
``partition_ns``) with a ``recording`` column naming it: dotted columns, a ``DatetimeIndex`` of
receive times; array fields are ``pd.ArrowDtype`` list columns (Dask turns object columns into
strings). The schema comes from the definition, so recordings of one type make one frame.

``expectations`` checks a rules file over recordings, a partition each; ``lerobot`` makes a
LeRobot dataset of recordings, a task each (docs/lerobot.md).
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

import bagscope

_Path = Union[str, "os.PathLike[str]"]


def _read_part(part, topic, fields):
    """One partition: (path, start_ns, end_ns) of `topic` as a DataFrame."""
    from bagscope._arrow import to_pandas

    path, start_ns, end_ns = part
    with bagscope.open(path) as rec:
        table = rec.to_arrow(topic, fields=fields, start_ns=start_ns, end_ns=end_ns)
        # A remote recording is named by its URL without credentials.
        name = str(rec.path) if "://" in str(path) else str(path)
    # Arrays as Arrow-backed columns: Dask would turn object columns into strings.
    df = to_pandas(table, arrow_arrays=True)
    df.insert(0, "recording", name)
    return df


def partitions(paths, start_ns=None, end_ns=None, partition_ns=None):
    """The (path, start_ns, end_ns) of each partition: a recording, clipped to the window, in
    slices of `partition_ns` when given. Opens each recording's index only."""
    parts = []
    for p in paths:
        with bagscope.open(p) as rec:
            first, last = rec.start_ns, rec.end_ns
        if first is None:
            parts.append((p, start_ns, end_ns))
            continue
        lo = first if start_ns is None else max(first, start_ns)
        hi = last + 1 if end_ns is None else min(last + 1, end_ns)
        if not partition_ns or hi <= lo:
            parts.append((p, start_ns, end_ns))
            continue
        t = lo
        while t < hi:
            parts.append((p, t, min(t + partition_ns, hi)))
            t += partition_ns
    return parts


def read_topic(
    paths_or_urls: Union[_Path, Sequence[_Path]],
    topic: str,
    fields: Optional[Sequence[str]] = None,
    start_ns: Optional[int] = None,
    end_ns: Optional[int] = None,
    partition_ns: Optional[int] = None,
):
    """`topic` of every recording as one ``dask.dataframe.DataFrame``: one partition per
    recording, or per `partition_ns` of each; `fields` and the `[start_ns, end_ns)` window as
    ``Recording.to_arrow`` takes them. The frame's meta is the topic's schema, read from the
    first recording's definition without reading a message."""
    import dask.dataframe as dd

    if isinstance(paths_or_urls, (str, os.PathLike)):
        paths = [paths_or_urls]
    else:
        paths = list(paths_or_urls)
    if not paths:
        raise ValueError("no recording given")
    paths = [os.fspath(p) for p in paths]
    fields = list(fields) if fields is not None else None
    parts = partitions(paths, start_ns, end_ns, partition_ns)
    # An empty window of the first recording: the columns and dtypes, no message read.
    meta = _read_part((paths[0], 0, 0), topic, fields)
    return dd.from_map(_read_part, parts, topic=topic, fields=fields, meta=meta,
                       enforce_metadata=False)


#: The ``expectations`` table's columns and dtypes (as ``bagscope catalog --expect`` writes it).
EXPECTATION_COLUMNS = {
    "recording": "string",
    "check": "string",
    "topic": "string",
    "status": "string",
    "measured": "float64",
    "expected": "string",
    "start_ns": "Int64",
    "end_ns": "Int64",
    "detail": "string",
    "line": "int64",
}


def _expect_part(path, rules):
    """One partition: `path` checked against `rules`, a row per rule."""
    import pandas as pd

    rows = bagscope.expect(path, rules, threads=1)
    df = pd.DataFrame(rows, columns=list(EXPECTATION_COLUMNS))
    return df.astype(EXPECTATION_COLUMNS)


def expectations(paths: Sequence[_Path], rules: _Path):
    """Every recording of `paths` checked against the rules file `rules` (docs/expectations.md)
    as one ``dask.dataframe.DataFrame``, one partition per recording: the rows and columns of the
    ``expectations.parquet`` that ``bagscope catalog --expect`` writes. The rules file is parsed
    here first, so a mistake in it raises ``ValueError`` (with its line) before any work."""
    import dask.dataframe as dd
    import pandas as pd

    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("no recording given")
    rules = os.fspath(rules)
    from bagscope._bagscope import _check_rules

    _check_rules(rules)
    meta = pd.DataFrame(columns=list(EXPECTATION_COLUMNS)).astype(EXPECTATION_COLUMNS)
    return dd.from_map(_expect_part, paths, rules=rules, meta=meta, enforce_metadata=False)


def _recording_paths(recordings):
    """Absolute paths from one path, a sequence of them, or a catalog's table (a pandas
    DataFrame or Series with a ``path`` column, e.g. ``bagscope catalog``'s
    ``recordings.parquet`` filtered)."""
    if isinstance(recordings, (str, os.PathLike)):
        recordings = [recordings]
    elif hasattr(recordings, "columns"):
        if "path" not in recordings.columns:
            raise ValueError("a table of recordings needs a 'path' column (as bagscope catalog "
                             "writes recordings.parquet)")
        recordings = recordings["path"]
    paths = [os.path.abspath(os.fspath(p)) for p in list(recordings)]
    if not paths:
        raise ValueError("no recording given")
    return paths


def _lerobot_part(path, mapping, part, threads, scripts):
    """One recording's episodes made into the part directory `part` (a worker's task)."""
    from bagscope._bagscope import _lerobot_part as make

    return make(path, mapping, part, threads=threads, scripts=scripts)


def lerobot(recordings, mapping: _Path, out: _Path, scripts: Sequence[_Path] = (),
            threads: int = 1) -> dict:
    """Recordings into a LeRobot dataset at `out` by the mapping file `mapping`
    (docs/lerobot.md), each recording's episodes made on a worker of the current Dask client
    (a ``LocalCluster`` or a cluster's scheduler; without one, Dask's local scheduler), with
    `threads` threads each: the dataset ``bagscope export --format lerobot`` writes of the same
    recordings, episodes in their order.

    `recordings`: paths, or a catalog's table with a ``path`` column (``bagscope catalog``'s
    ``recordings.parquet``, read and filtered with pandas or DuckDB). `scripts`: message script
    files whose virtual topics the mapping may name. The mapping is parsed and checked against
    every recording here first (no message read), so a mistake raises ``ValueError`` with its
    line before any work. The workers write into `out` (storage they share with this process);
    a recording or episode that fails on a worker is left out of the dataset and said in the
    report: a dict of ``episodes``, ``frames``, ``dropped``, ``filled``, ``left_out``."""
    import shutil

    import dask

    from bagscope._bagscope import _lerobot_assemble, _lerobot_check

    paths = _recording_paths(recordings)
    mapping = os.path.abspath(os.fspath(mapping))
    scripts = [os.path.abspath(os.fspath(s)) for s in scripts]
    _lerobot_check(paths, mapping, scripts)
    out = os.path.abspath(os.fspath(out))
    staging = os.path.join(out, ".bagscope-parts")
    parts = [os.path.join(staging, f"{k:06d}") for k in range(len(paths))]
    tasks = [dask.delayed(_lerobot_part, pure=False)(p, mapping, part, threads, scripts)
             for p, part in zip(paths, parts)]
    try:
        dask.compute(*tasks)
        return _lerobot_assemble(parts, mapping, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
