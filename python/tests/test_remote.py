"""Recordings over HTTP and in S3: an HTTP server with Range support and an S3 API server (moto's,
from pip) on 127.0.0.1. `info`, `echo`, `export`, `catalog` and the Python package give exactly
what they give on the local files; opening an indexed bag or MCAP takes a few requests; a server
that answers 500 or drops a connection gets retries, then a clear error, never a wrong result;
credentials appear nowhere in what bagscope prints."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import range_server  # noqa: E402

import bagscope  # noqa: E402

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
KEY_ID = "AKIAIOSFODNN7EXAMPLE"

def env(**kw):
    e = dict(os.environ, BAGSCOPE_INDEX_DIR="off", BAGSCOPE_RETRIES="2")
    e.update(kw)
    return e


def run(cli, *args, env_=None, check=True):
    r = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, env=env_ or env())
    if check and r.returncode != 0:
        raise AssertionError(f"bagscope {' '.join(map(str, args))}: {r.stderr}")
    return r


def sample(shared: Path):
    """Recordings of both corpora that open locally, of every kind."""
    picked = {}
    for corpus in ("bags", "bags2"):
        exp = json.loads((shared / corpus / "expected.json").read_text())
        for name in sorted(exp):
            p = shared / corpus / name
            kind = (corpus, p.suffix if p.is_file() else "dir", (p / "metadata.yaml").exists())
            if kind in picked and len(picked[kind]) >= 3:
                continue
            picked.setdefault(kind, []).append(f"{corpus}/{name}")
    return [n for v in picked.values() for n in v]


@pytest.fixture(scope="module")
def http(bags_dir):
    srv, state, url = range_server.start(bags_dir.parent)
    yield state, url
    srv.shutdown()


def same_json(local: str, remote: str, local_root: str, remote_root: str):
    a = local.replace(local_root, "@")
    b = remote.replace(remote_root, "@")
    return a == b


def test_info_echo_export_over_http_equal_local(http, bags_dir, cli, tmp_path):
    state, url = http
    shared = bags_dir.parent
    names = sample(shared)
    assert len(names) >= 15
    compared = 0
    opened = []
    for n in names:
        local = run(cli, "info", "--json", shared / n, check=False)
        if local.returncode != 0:
            continue
        opened.append(n)
        if (shared / n).is_dir() and not (shared / n / "metadata.yaml").exists():
            continue  # an HTTP server cannot list a folder
        remote = run(cli, "info", "--json", f"{url}/{n}")
        a = json.loads(local.stdout)
        b = json.loads(remote.stdout)
        assert b["path"] == f"{url}/{n}"
        a["path"] = b["path"] = None
        a.pop("files", None), b.pop("files", None)
        assert a == b, n
        topics = [t["name"] for t in a["topics"]]
        if not topics:
            continue
        le = run(cli, "echo", "--json", "--topic", topics[0], shared / n, check=False)
        re_ = run(cli, "echo", "--json", "--topic", topics[0], f"{url}/{n}", check=False)
        assert (le.returncode, le.stdout) == (re_.returncode, re_.stdout), n
        compared += 1
    assert compared >= 10
    # export of a remote recording is the local export byte for byte.
    for n in ["bags/ros_comm/rosbag_storage_test.bag"] + [x for x in opened if x.endswith(".mcap")][:2]:
        a, b = tmp_path / "a.mcap", tmp_path / "b.mcap"
        for p in (a, b):
            p.unlink(missing_ok=True)
        run(cli, "export", shared / n, "-o", a)
        run(cli, "export", f"{url}/{n}", "-o", b)
        assert a.read_bytes() == b.read_bytes(), n


def test_opening_an_indexed_recording_takes_few_requests(http, bags_dir):
    state, url = http
    shared = bags_dir.parent
    def indexed(n):
        try:
            return bagscope.open(str(shared / n)).info()["indexed"]
        except Exception:
            return False
    def pick(pattern, k):
        found = [str(p.relative_to(shared)) for p in sorted(shared.glob(pattern))]
        return [n for n in found if indexed(n)][:k]
    mcaps, bags = pick("bags2/**/*.mcap", 4), pick("bags/**/*.bag", 4)
    assert len(mcaps) == 4 and len(bags) == 4
    for n in bags + mcaps:
        state.reset()
        with bagscope.open(f"{url}/{n}") as r:
            opened = state.count()
            topics = r.topics
            assert r.path == f"{url}/{n}"
        assert opened <= 4, (n, state.requests)
        local = bagscope.open(str(shared / n))
        assert [(t.name, t.count) for t in topics] == [(t.name, t.count) for t in local.topics]
        # Reading every message gives the local messages.
        got = [(m.topic, m.time_ns, bytes(m.data)) for m in bagscope.open(f"{url}/{n}").messages()]
        want = [(m.topic, m.time_ns, bytes(m.data)) for m in local.messages()]
        assert got == want, n


def test_server_errors_retry_then_fail_clearly(http, bags_dir, cli):
    state, url = http
    n = "bags/ros_comm/rosbag_storage_test.bag"
    want = run(cli, "echo", "--json", bags_dir.parent / n).stdout
    # Two 500s, then answers: the retries hide them.
    state.fail_500 = 2
    r = run(cli, "echo", "--json", f"{url}/{n}")
    assert r.stdout == want and state.fail_500 == 0
    # A connection dropped mid-body: retried, the same messages.
    state.drop = 1
    r = run(cli, "echo", "--json", f"{url}/{n}")
    assert r.stdout == want and state.drop == 0
    # A server that keeps failing: a clear error naming the location and the status, no output.
    state.fail_500 = 1000
    t = time.time()
    r = run(cli, "info", f"{url}/{n}", check=False)
    state.fail_500 = 0
    assert r.returncode != 0 and r.stdout == ""
    assert f"{url}/{n}" in r.stderr and "500" in r.stderr, r.stderr
    assert time.time() - t < 30
    # Nothing there.
    r = run(cli, "info", f"{url}/bags/nothing.bag", check=False)
    assert r.returncode != 0 and "no such object" in r.stderr, r.stderr
    # The server gone.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run(cli, "info", f"http://127.0.0.1:{port}/x.bag", check=False)
    assert r.returncode != 0 and f"127.0.0.1:{port}/x.bag" in r.stderr, r.stderr


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(bags_dir, tmp_path_factory):
    """moto's S3 server on 127.0.0.1 with a bucket holding a sample of both corpora."""
    import boto3
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    exe = shutil.which("moto_server")
    assert exe, "moto_server is missing: pip install 'moto[server]'"
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=open(log, "w"), stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    e = env(AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET, AWS_ENDPOINT_URL=endpoint,
            AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true")
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY_ID,
                          aws_secret_access_key=SECRET, region_name="us-east-1")
    client.create_bucket(Bucket="fleet")
    shared = bags_dir.parent
    names = [n for n in sample(shared)]
    uploaded = []
    for n in names:
        p = shared / n
        files = [p] if p.is_file() else [f for f in p.iterdir() if f.is_file()]
        for f in files:
            client.upload_file(str(f), "fleet", "runs/" + str(f.relative_to(shared)))
        uploaded.append(n)
    yield e, uploaded
    proc.terminate()
    proc.wait(10)


def test_s3_info_echo_catalog_and_python_equal_local(s3, bags_dir, cli, tmp_path):
    e, names = s3
    shared = bags_dir.parent
    compared = 0
    for n in names:
        local = run(cli, "info", "--json", shared / n, check=False)
        remote = run(cli, "info", "--json", f"s3://fleet/runs/{n}", env_=e, check=False)
        assert SECRET not in remote.stdout + remote.stderr and KEY_ID not in remote.stdout + remote.stderr
        if local.returncode != 0:
            assert remote.returncode != 0, n
            continue
        assert remote.returncode == 0, (n, remote.stderr)
        a, b = json.loads(local.stdout), json.loads(remote.stdout)
        assert b["path"] == f"s3://fleet/runs/{n}"
        for x in (a, b):
            x["path"] = None
            x.pop("files", None)
        assert a == b, n
        compared += 1
    assert compared >= 15
    # echo of a rosbag2 folder and an MCAP file.
    for n in [x for x in names if (shared / x).is_dir()][:2] + [x for x in names if x.endswith(".mcap")][:2]:
        le = run(cli, "echo", "--json", shared / n, check=False)
        re_ = run(cli, "echo", "--json", f"s3://fleet/runs/{n}", env_=e, check=False)
        assert (le.returncode, le.stdout) == (re_.returncode, re_.stdout), n
    # The catalog of the prefix: a row per recording, as the local catalog has them.
    out = tmp_path / "cat"
    r = run(cli, "catalog", "s3://fleet/runs", "-o", out, env_=e)
    assert "0 unchanged" in r.stderr
    import duckdb
    rows = duckdb.sql(f"SELECT path, messages, topics, etag FROM read_parquet('{out}/recordings.parquet')").fetchall()
    by_path = {p: (m, t, etag) for p, m, t, etag in rows}
    for n in names:
        local = run(cli, "info", "--json", shared / n, check=False)
        if local.returncode != 0:
            continue
        i = json.loads(local.stdout)
        m, t, etag = by_path[f"s3://fleet/runs/{n}"]
        assert (m, t) == (i["messages"], len(i["topics"])), n
        assert etag
    r = run(cli, "catalog", "s3://fleet/runs", "-o", out, env_=e)
    assert " 0 read" in r.stderr.replace("(0 read", " 0 read"), r.stderr
    # The Python package reads the same messages.
    mcap = [x for x in names if x.endswith(".mcap") and run(cli, "info", shared / x, check=False).returncode == 0][0]
    os.environ.update({k: v for k, v in e.items() if k.startswith("AWS_")})
    try:
        got = [(m.topic, m.time_ns, bytes(m.data)) for m in bagscope.open(f"s3://fleet/runs/{mcap}").messages()]
    finally:
        for k in [k for k in os.environ if k.startswith("AWS_")]:
            del os.environ[k]
    want = [(m.topic, m.time_ns, bytes(m.data)) for m in bagscope.open(str(shared / mcap)).messages()]
    assert got == want
    # A missing object: a clear error, no credentials.
    r = run(cli, "info", "s3://fleet/runs/none.bag", env_=e, check=False)
    assert r.returncode != 0 and "s3://fleet/runs/none.bag" in r.stderr
    assert SECRET not in r.stderr and KEY_ID not in r.stderr
