"""`bagscope export --format parquet`: for every decodable topic of both corpora, each row read
back by DuckDB equals what `bagscope echo --json` prints for the same message, and pyarrow
reads back exactly `Recording.to_arrow`'s table (with the recording id column)."""

import json
import math
import subprocess
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bagscope

# The peers (installed by .ci/run): a missing one fails the tests, it does not skip them.
import duckdb

from test_arrow import same


def nan_equal(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(nan_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(nan_equal(x, y) for x, y in zip(a, b))
    return a == b


def assert_same_table(a, b):
    """Equal schemas and values (NaN equal to NaN, which `Table.equals` does not take)."""
    assert a.schema.equals(b.schema), f"schema {a.schema} != {b.schema}"
    if not a.equals(b):
        assert nan_equal(a.to_pylist(), b.to_pylist()), "values differ from to_arrow"


def recordings(bags_dir, bags2_dir):
    ros1 = json.loads((bags_dir / "expected.json").read_text())
    ros2 = json.loads((bags2_dir / "expected.json").read_text())
    out = [bags_dir / n for n, e in ros1.items() if e.get("messages")]
    out += [bags2_dir / n for n, e in ros2.items() if e.get("message_count") and "conformance" not in n]
    return out


# The recordings taken in SHARDS tests of their own, so that pytest's two workers share the
# cross-check (one test, it was the last to finish by two minutes): the largest file first, each
# to the shard with the fewest bytes so far.
SHARDS = 4


def shard_of(recs, shard):
    load = [0] * SHARDS
    mine = []
    sizes = [size(p) for p in recs]
    for k, path in sorted(enumerate(recs), key=lambda kp: (-sizes[kp[0]], kp[0])):
        s = min(range(SHARDS), key=lambda i: (load[i], i))
        load[s] += sizes[k]
        if s == shard:
            mine.append((k, path))
    return sorted(mine)


def size(path):
    """Bytes of a recording: a file, or a rosbag2 directory's files."""
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return path.stat().st_size


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_decodable_topic_of_both_corpora(bags_dir, bags2_dir, cli, tmp_path, shard):
    files = rows = 0
    failures = []
    recs = recordings(bags_dir, bags2_dir)
    assert len(recs) > 100
    for k, path in shard_of(recs, shard):
        out = tmp_path / f"pq{k}"
        r = subprocess.run([str(cli), "export", str(path), "--format", "parquet", "-o", str(out)],
                           capture_output=True, text=True)
        if not out.exists():
            # Refused: it must be a recording bagscope does not open either.
            with pytest.raises(bagscope.Error):
                with bagscope.open(path) as rec:
                    for _ in rec.messages():
                        pass
            continue
        assert r.returncode in (0, 1), r.stderr
        echoed = defaultdict(list)
        lines = subprocess.run([str(cli), "echo", "--json", str(path)], capture_output=True, text=True).stdout
        for line in lines.splitlines():
            if line.startswith("{"):
                e = json.loads(line)
                if "message" in e:
                    echoed[e["topic"]].append(e)
        with bagscope.open(path) as rec:
            for f in sorted(out.glob("*.parquet")):
                table = pq.read_table(f)
                topic = table.schema.metadata[b"bagscope.topic"].decode()
                try:
                    # pyarrow: exactly to_arrow's table, the recording id after the time.
                    ours = rec.to_arrow(topic)
                    assert table.column(1).unique().to_pylist() == [path.name]
                    assert_same_table(table.drop_columns([table.schema.names[1]]), ours)
                    # DuckDB: each row what echo prints.
                    got = duckdb.sql(f"SELECT * FROM read_parquet('{f}')").fetchall()
                    want = echoed[topic]
                    assert len(got) == len(want), f"{len(got)} rows, echo printed {len(want)}"
                    names = table.schema.names
                    struct = pa.struct(list(table.schema)[2:])
                    for g, e in zip(got, want):
                        assert g[0] == e["time_ns"], "time"
                        same(dict(zip(names[2:], g[2:])), e["message"], struct, topic)
                    rows += len(got)
                    files += 1
                except AssertionError as err:
                    failures.append(f"{path.name} {topic}: {err}")
    print(f"{files} topics, {rows} rows compared")
    assert not failures, f"{len(failures)}:\n" + "\n".join(failures[:30])
    # Each shard a good part of both corpora (here 53-793 topics and 47,000-114,000 rows a
    # shard; 1,098 topics and 284,000 rows in all).
    assert files > 40 and rows > 30_000, (files, rows)
