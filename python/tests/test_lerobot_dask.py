"""A LeRobot dataset made on a Dask cluster from a catalog (`bagscope.dask.lerobot`), held
against the same dataset made by `bagscope export --format lerobot` in one process, and read by
LeRobot's own loader."""
import json
import subprocess

import pandas as pd
import pytest

from test_lerobot import MAPPING, doctor, load


@pytest.fixture(scope="module")
def runs(cli, tmp_path_factory):
    """A directory of three recordings (the demo of 30, 12 and 20 s), a catalog of it and a
    mapping of two episodes a recording."""
    d = tmp_path_factory.mktemp("fleet")
    runs = d / "runs"
    runs.mkdir()
    for name, seconds in [("a.bag", 30), ("b.bag", 12), ("c.bag", 20)]:
        subprocess.run([str(cli), "demo", str(runs / name), "--seconds", str(seconds)],
                       check=True, capture_output=True)
    subprocess.run([str(cli), "catalog", str(runs), "-o", str(d / "catalog")], check=True,
                   capture_output=True)
    mapping = d / "map.yaml"
    mapping.write_text(MAPPING.format(episodes="[[0, 5], [6, 11]]"))
    return d, mapping


def frames_of(root):
    """Every file's bytes under `root` but the Parquet files, and the Parquet files' tables."""
    files, tables = {}, {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = str(p.relative_to(root))
            if p.suffix == ".parquet":
                tables[rel] = pd.read_parquet(p)
            else:
                files[rel] = p.read_bytes()
    return files, tables


def test_a_catalog_on_a_dask_cluster_gives_the_dataset_of_one_process(cli, runs, tmp_path):
    """The catalog's recordings, filtered with pandas (the 12 s one left out), on a Dask local
    cluster of two worker processes: the same files as `bagscope export` of the same recordings
    (every MP4 and JSON file byte for byte, every table equal), nothing of the workers' parts
    left; LeRobot's loader reads four episodes; lerobot-doctor finds no error."""
    d, mapping = runs
    catalog = pd.read_parquet(d / "catalog" / "recordings.parquet")
    chosen = catalog[catalog["duration_ns"] > 15 * 10**9].sort_values("path")
    assert [p.rsplit("/", 1)[-1] for p in chosen["path"]] == ["a.bag", "c.bag"]

    from dask.distributed import Client, LocalCluster

    import bagscope.dask

    out = tmp_path / "cluster"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, host="127.0.0.1") as cluster, Client(cluster):
        report = bagscope.dask.lerobot(chosen, mapping, out)
    assert report["episodes"] == 4 and report["left_out"] == [], report
    one = tmp_path / "one"
    r = subprocess.run([str(cli), "export", *chosen["path"], "--format", "lerobot", "--mapping",
                        str(mapping), "-o", str(one)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{report['frames']} frames" in r.stderr, (report, r.stderr)
    files, tables = frames_of(out)
    want_files, want_tables = frames_of(one)
    assert sorted(files) == sorted(want_files) and sorted(tables) == sorted(want_tables)
    assert not any(".bagscope" in k for k in files), sorted(files)
    for k, v in want_files.items():
        assert files[k] == v, k
    for k, v in want_tables.items():
        pd.testing.assert_frame_equal(tables[k], v, check_exact=True)
    got = load(out, tmp_path / "loaded", [0])
    assert got["episodes"] == 4 and got["frames"] == report["frames"]
    assert json.loads((out / "meta/info.json").read_text())["total_episodes"] == 4
    doctor(out)


def test_a_recording_that_fails_on_a_worker_is_left_out_and_said(cli, runs, tmp_path):
    """A recording damaged where its camera lies (16 bytes of one LZ4 chunk overwritten: the
    index opens, the chunk does not decompress) fails on the worker: its episodes are left out
    and said, naming it; the dataset holds the other's episodes, consistent (LeRobot's loader
    reads it). A mapping mistake raises ValueError with its line before any work: nothing is
    written."""
    d, mapping = runs
    bad = tmp_path / "damaged.bag"
    data = bytearray((d / "runs" / "b.bag").read_bytes())
    data[len(data) // 2:len(data) // 2 + 16] = b"\xff" * 16
    bad.write_bytes(bytes(data))
    paths = [d / "runs" / "a.bag", bad]

    import bagscope.dask

    out = tmp_path / "ds"
    report = bagscope.dask.lerobot(paths, mapping, out)
    assert report["episodes"] == 2, report
    assert len(report["left_out"]) == 2, report
    assert all("damaged.bag" in w and "cannot be decompressed" in w for w in report["left_out"]), report
    got = load(out, tmp_path / "loaded", [0])
    assert got["episodes"] == 2
    assert not (out / ".bagscope-parts").exists()
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(MAPPING.format(episodes="recording").replace("position.y", "position.w"))
    with pytest.raises(ValueError, match=r"wrong\.yaml:9: .*has no field \"w\""):
        bagscope.dask.lerobot(paths, wrong, tmp_path / "never")
    assert not (tmp_path / "never").exists()
