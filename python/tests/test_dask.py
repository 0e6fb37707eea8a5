"""`bagscope.dask.read_topic` on a local Dask cluster of two worker processes (on 127.0.0.1
only): over 8 recordings, the same rows as reading each in turn."""

import subprocess

import pandas as pd
import pytest

import bagscope
import bagscope.dask

# The peers (installed by .ci/run): a missing one fails the tests, it does not skip them.
from dask.distributed import Client, LocalCluster


@pytest.fixture(scope="module")
def runs(tmp_path_factory, cli):
    d = tmp_path_factory.mktemp("runs")
    paths = []
    for k in range(8):
        p = d / f"run{k}.bag"
        subprocess.run([str(cli), "demo", str(p), "--seconds", str(2 + k)], check=True, capture_output=True)
        paths.append(p)
    return paths


def serial(paths, topic, fields=None):
    from bagscope._arrow import to_pandas

    frames = []
    for p in paths:
        with bagscope.open(p) as rec:
            df = to_pandas(rec.to_arrow(topic, fields=fields), arrow_arrays=True)
        df.insert(0, "recording", str(p))
        frames.append(df)
    return pd.concat(frames)


def same_frame(got, want):
    """Equal frames; Dask holds strings in its own string dtype (`dataframe.convert-string`),
    so text columns are compared as values."""
    text = [c for c in want.columns
            if isinstance(got[c].dtype, pd.StringDtype) or isinstance(want[c].dtype, pd.StringDtype)]
    def plain(df):
        df = df.astype({c: object for c in text})
        return df
    pd.testing.assert_frame_equal(plain(got), plain(want))


def test_read_topic_on_a_local_cluster_equals_the_serial_result(runs):
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster):
        df = bagscope.dask.read_topic(runs, "/imu/data")
        assert df.npartitions == 8
        got = df.compute()
        want = serial(runs, "/imu/data")
        same_frame(got, want)
        # A query runs on the workers: messages per recording.
        counts = df.groupby("recording").size().compute().sort_index()
        assert counts.to_dict() == want.groupby("recording").size().sort_index().to_dict()
        # Time slices of one second, chosen fields.
        sliced = bagscope.dask.read_topic(runs, "/odom", fields=["pose.pose.position"], partition_ns=10**9)
        assert sliced.npartitions > 8
        same_frame(sliced.compute(), serial(runs, "/odom", ["pose.pose.position"]))
