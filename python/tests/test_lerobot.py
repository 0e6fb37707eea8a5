"""`bagscope export --format lerobot` held against LeRobot's own loader (the `lerobot` package,
0.4.4, in an environment of its own: it brings torch; `.ci/run` makes it at $LEROBOT_PYTHON's
venv), rosbags' decoded values at the frame times, and bagscope's own decoded camera frames.
"""
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rosbags.highlevel import AnyReader

HERE = Path(__file__).resolve().parent
LEROBOT_PYTHON = os.environ.get("LEROBOT_PYTHON", "/opt/bagscope-peers/lerobot/bin/python")
# lerobot-doctor (PyPI, 0.2.0: "dataset quality diagnostics for LeRobot v2/v3 datasets"), in an
# environment of its own (.ci/run makes it).
LEROBOT_DOCTOR = os.environ.get("LEROBOT_DOCTOR", "/opt/bagscope-peers/doctor/bin/lerobot-doctor")
FPS = 10
MAPPING = """\
fps: 10
task: drive the figure of eight
robot_type: bagscope_demo
align: hold
missing: drop
episodes: {episodes}
observation.state:
  - /odom.pose.pose.position.x
  - /odom.pose.pose.position.y
  - /imu/data.orientation.yaw
action:
  - /cmd_vel.linear.x
  - /cmd_vel.angular.z
observation.images.front: /camera/front/h264
names:
  observation.state: [x, y, yaw]
  action: [vx, wz]
"""


def lerobot():
    if not Path(LEROBOT_PYTHON).exists():
        pytest.fail(f"LeRobot's environment is missing: {LEROBOT_PYTHON} (see .ci/run: "
                    "python3 -m venv /opt/bagscope-peers/lerobot && its pip install lerobot==0.4.4)")
    return LEROBOT_PYTHON


def doctor(root):
    """`lerobot-doctor check --json ROOT`: its report; the test fails on any FAIL."""
    if not Path(LEROBOT_DOCTOR).exists():
        pytest.fail(f"lerobot-doctor is missing: {LEROBOT_DOCTOR} (see .ci/run: python3 -m venv "
                    "/opt/bagscope-peers/doctor && its pip install lerobot-doctor==0.2.0)")
    r = subprocess.run([LEROBOT_DOCTOR, "check", "--json", str(root)], capture_output=True,
                       text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    report = json.loads(r.stdout)
    fails = [(c["name"], m["message"]) for c in report["checks"] for m in c["messages"]
             if m["severity"] == "FAIL"]
    assert report["summary"]["FAIL"] == 0 and not fails, fails
    return report


def load(root, out, picks):
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([lerobot(), str(HERE / "lerobot_load.py"), str(root), str(out),
                    *[str(p) for p in picks]], check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return json.loads((out / "loaded.json").read_text())


def held(times, values, t):
    i = np.searchsorted(times, t, side="right") - 1
    return values[i] if i >= 0 else None


# The state and action of tests/py/av1_camera.py and image_cameras.py, on a 10 fps clock.
SYNTHETIC = """\
fps: 10
task: {task}
align: hold
missing: drop
episodes: recording
observation.state: [/state.x, /state.y]
action: [/action.x]
{cameras}
"""


def export(cli, rec, mapping, out, *more):
    """`bagscope export REC --format lerobot --mapping MAPPING -o OUT [MORE…]`, its output kept."""
    return subprocess.run([str(cli), "export", str(rec), "--format", "lerobot", "--mapping",
                           str(mapping), "-o", str(out), *more], capture_output=True, text=True)


def synthetic_export(cli, tmp_path, script, frames, task, cameras):
    """The recording `script` makes (tests/py/SCRIPT FRAMES) exported with SYNTHETIC's mapping;
    the recording and the dataset's directory."""
    rec = tmp_path / "rec.mcap"
    subprocess.run(["python3", str(HERE.parents[1] / "tests" / "py" / script), str(rec),
                    str(frames)], check=True)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(SYNTHETIC.format(task=task, cameras=cameras))
    out = tmp_path / "ds"
    r = export(cli, rec, mapping, out)
    assert r.returncode == 0, r.stderr
    return rec, out


def yaw(q):
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def short_demo(cli, tmp_path):
    """A second recording: the demo of 12 s."""
    second = tmp_path / "short.bag"
    subprocess.run([str(cli), "demo", str(second), "--seconds", "12"], check=True,
                   capture_output=True)
    return second


@pytest.fixture(scope="module")
def demo(cli, tmp_path_factory):
    d = tmp_path_factory.mktemp("lerobot")
    bag = d / "demo.bag"
    subprocess.run([str(cli), "demo", str(bag), "--seconds", "30"], check=True,
                   capture_output=True)
    return bag


def test_lerobots_loader_reads_what_the_recording_holds(cli, demo, tmp_path):
    mapping = tmp_path / "map.yaml"
    mapping.write_text(MAPPING.format(episodes="recording"))
    out = tmp_path / "dataset"
    r = export(cli, demo, mapping, out)
    assert r.returncode == 0, r.stderr
    n = len(pd.read_parquet(out / "data/chunk-000/file-000.parquet"))
    picks = [0, n // 2, n - 1]
    got = load(out, tmp_path / "loaded", picks)
    assert (got["episodes"], got["frames"], got["fps"]) == (1, n, FPS)
    assert got["task"] == "drive the figure of eight"
    assert got["shapes"]["observation.state"] == [[3], "torch.float32"]
    assert got["shapes"]["action"] == [[2], "torch.float32"]
    assert got["shapes"]["observation.images.front"][0][0] == 3

    # Every value equals rosbags' decoded value held at the frame's time.
    with AnyReader([demo]) as rd:
        msgs = {}
        for c, t, raw in rd.messages():
            if c.topic in ("/odom", "/cmd_vel", "/imu/data"):
                msgs.setdefault(c.topic, []).append((t, rd.deserialize(raw, c.msgtype)))
            elif c.topic == "/camera/front/h264":
                msgs.setdefault(c.topic, []).append((t, None))
    cam = np.array([t for t, _ in msgs["/camera/front/h264"]])
    t0 = int(cam[0])
    series = {
        "x": ("/odom", lambda m: m.pose.pose.position.x),
        "y": ("/odom", lambda m: m.pose.pose.position.y),
        "yaw": ("/imu/data", lambda m: yaw(m.orientation)),
        "vx": ("/cmd_vel", lambda m: m.linear.x),
        "wz": ("/cmd_vel", lambda m: m.angular.z),
    }
    arrays = {k: (np.array([t for t, _ in msgs[topic]]), [f(m) for _, m in msgs[topic]])
              for k, (topic, f) in series.items()}
    cols = got["columns"]
    for row, ts in enumerate(cols["timestamp"]):
        t = t0 + round(ts * FPS) * 10**9 // FPS
        want = [held(*arrays[k], t) for k in ("x", "y", "yaw")]
        assert np.allclose(np.float32(want), cols["observation.state"][row], atol=2e-7), row
        want = [held(*arrays[k], t) for k in ("vx", "wz")]
        assert np.array_equal(np.float32(want), np.float32(cols["action"][row])), row
    assert cols["index"] == list(range(n)) and cols["frame_index"] == list(range(n))

    # The camera's frames as LeRobot decodes them equal bagscope's own decode of the frame
    # nearest the tick (the copied stream: not re-encoded).
    import cv2

    for i in picks:
        t = t0 + round(cols["timestamp"][i] * FPS) * 10**9 // FPS
        j = int(np.argmin(np.abs(cam - t)))
        png = tmp_path / f"ours_{i}.png"
        subprocess.run([str(cli), "image", str(demo), "/camera/front/h264", "--index", str(j),
                        "-o", str(png)], check=True, capture_output=True)
        ours = cv2.cvtColor(cv2.imread(str(png)), cv2.COLOR_BGR2RGB).astype(int)
        theirs = np.load(tmp_path / "loaded" / f"frame_{i}.npy").astype(int)
        assert ours.shape == theirs.shape
        diff = np.abs(ours - theirs)
        # YUV to RGB rounding differs between decoders by a level or two.
        assert diff.mean() < 1.5 and np.percentile(diff, 99) <= 4, (i, diff.mean())

    # Statistics: meta/stats.json equals LeRobot's own compute_episode_stats + aggregate_stats
    # over the loaded columns.
    ours = json.loads((out / "meta/stats.json").read_text())
    for feat, theirs in got["stats"].items():
        for stat, v in theirs.items():
            a, b = np.asarray(ours[feat][stat], float), np.asarray(v, float)
            scale = max(1.0, float(np.max(np.abs(b))))
            assert np.allclose(a, b, rtol=1e-5, atol=1e-6 * scale), (feat, stat, a, b)
    assert "observation.images.front" in ours
    assert np.asarray(ours["observation.images.front"]["mean"]).shape == (3, 1, 1)


def test_episodes_by_bookmarks_one_left_out(cli, demo, tmp_path):
    with AnyReader([demo]) as rd:
        start = rd.start_time
    s = 10**9
    side = Path(str(demo) + ".bookmarks.json")
    side.write_text(json.dumps({"bagscope_bookmarks": 1, "bookmarks": [
        {"start_ns": start + 2 * s, "end_ns": start + 8 * s, "label": "a"},
        {"start_ns": start + 10 * s, "end_ns": start + 15 * s, "label": "b"},
        # Shorter than a camera frame: no frame has every stream; left out and said.
        {"start_ns": start + 20 * s + 1, "end_ns": start + 20 * s + 2, "label": "c"},
    ]}))
    try:
        mapping = tmp_path / "map.yaml"
        mapping.write_text(MAPPING.format(episodes="bookmarks"))
        out = tmp_path / "dataset"
        r = export(cli, demo, mapping, out)
        assert r.returncode == 1, r.stderr
        assert "episode left out" in r.stderr and "no frame" in r.stderr, r.stderr
        got = load(out, tmp_path / "loaded", [0])
        assert got["episodes"] == 2
        eps = got["columns"]["episode_index"]
        assert sorted(set(eps)) == [0, 1]
        assert got["columns"]["index"] == list(range(len(eps)))
        # About 6 s and 5 s at 10 fps.
        assert abs(eps.count(0) - 60) <= 1 and abs(eps.count(1) - 50) <= 1, (eps.count(0), eps.count(1))
    finally:
        side.unlink()


def test_episodes_by_ranges_of_every_recording(cli, demo, tmp_path):
    """`episodes:` as ranges (seconds from the recording's start): an episode each, cut at the
    recording's end; a range after the end is said before anything is written."""
    mapping = tmp_path / "map.yaml"
    mapping.write_text(MAPPING.format(episodes="[[2, 8], [10, 15], [28, 1000]]"))
    out = tmp_path / "dataset"
    r = export(cli, demo, mapping, out)
    assert r.returncode == 0, r.stderr
    got = load(out, tmp_path / "loaded", [0])
    eps = got["columns"]["episode_index"]
    with AnyReader([demo]) as rd:
        length = (rd.end_time - rd.start_time) / 1e9
    # About 6 s and 5 s at 10 fps, then from 28 s to the end.
    assert got["episodes"] == 3 and abs(eps.count(0) - 60) <= 1 and abs(eps.count(1) - 50) <= 1
    assert abs(eps.count(2) - (length - 28) * 10) <= 2, (eps.count(2), length)
    mapping.write_text(MAPPING.format(episodes="[[2, 8], [5000, 5001]]"))
    r = export(cli, demo, mapping, tmp_path / "never")
    assert r.returncode != 0 and "[5000, 5001] starts after the recording's end" in r.stderr, r.stderr
    assert not (tmp_path / "never").exists()


def test_mapping_mistakes_are_said_with_their_line(cli, demo, tmp_path):
    cases = [
        (MAPPING.format(episodes="recording").replace("/odom.pose.pose.position.y",
                                                      "/odom.pose.pose.position.w"), ":9:"),
        (MAPPING.format(episodes="recording").replace("fps: 10", "fps: ten"), ":1:"),
        (MAPPING.format(episodes="recording").replace("align: hold", "align: closest"), ":4:"),
        (MAPPING.format(episodes="recording").replace("/camera/front/h264", "/nope"), ":14:"),
        # Not a camera (raw and JPEG cameras are: encoded as AV1).
        (MAPPING.format(episodes="recording").replace("/camera/front/h264", "/odom"), ":14:"),
    ]
    for text, line in cases:
        mapping = tmp_path / "bad.yaml"
        mapping.write_text(text)
        out = tmp_path / "never"
        r = export(cli, demo, mapping, out)
        assert r.returncode == 2, r.stderr
        assert f"bad.yaml{line}" in r.stderr, (line, r.stderr)
        assert not out.exists()


def test_nearest_within_a_tolerance_and_filled(cli, demo, tmp_path):
    """align: nearest (5 ms), missing: fill: each value is rosbags' sample nearest the frame's
    time within 5 ms, else the last before it (else the first); LeRobot's loader reads it."""
    mapping = tmp_path / "map.yaml"
    text = MAPPING.format(episodes="recording").replace("align: hold", "align: nearest\ntolerance: 0.005")
    mapping.write_text(text.replace("missing: drop", "missing: fill"))
    out = tmp_path / "dataset"
    r = export(cli, demo, mapping, out)
    assert r.returncode == 0, r.stderr
    assert "frames filled" in r.stderr
    got = load(out, tmp_path / "loaded", [0])
    with AnyReader([demo]) as rd:
        msgs = {}
        for c, t, raw in rd.messages():
            if c.topic in ("/odom", "/cmd_vel", "/camera/front/h264"):
                msgs.setdefault(c.topic, []).append(
                    (t, None if c.topic.startswith("/camera") else rd.deserialize(raw, c.msgtype)))
    t0 = msgs["/camera/front/h264"][0][0]
    tol = 5_000_000

    def nearest_or_fill(topic, f, t):
        times = np.array([x for x, _ in msgs[topic]])
        i = np.searchsorted(times, t)
        best = None
        for j in (i - 1, i):
            if 0 <= j < len(times) and abs(int(times[j]) - t) <= tol:
                if best is None or abs(int(times[j]) - t) < abs(int(times[best]) - t):
                    best = j
        if best is None:
            k = np.searchsorted(times, t, side="right") - 1
            best = k if k >= 0 else 0
        return f(msgs[topic][best][1])

    cols = got["columns"]
    filled = 0
    for row, ts in enumerate(cols["timestamp"]):
        t = t0 + round(ts * FPS) * 10**9 // FPS
        want = [nearest_or_fill("/cmd_vel", lambda m: m.linear.x, t),
                nearest_or_fill("/cmd_vel", lambda m: m.angular.z, t)]
        assert np.array_equal(np.float32(want), np.float32(cols["action"][row])), row
        x = nearest_or_fill("/odom", lambda m: m.pose.pose.position.x, t)
        assert np.float32(x) == np.float32(cols["observation.state"][row][0]), row
        far = [np.min(np.abs(np.array([x for x, _ in msgs[tp]]) - t)) > tol
               for tp in ("/cmd_vel", "/odom")]
        filled += int(any(far))
    assert got["frames"] == len(cols["timestamp"])
    # The frames filled, as the command counts them (the IMU, at 100 Hz, is never 5 ms away).
    assert f", {filled} frames filled)" in r.stderr, (filled, r.stderr)


def test_several_recordings_are_episodes_in_order(cli, demo, tmp_path):
    """Two recordings: two episodes, the second's indices following the first's, each frame's
    values from its own recording; LeRobot's loader reads both."""
    second = short_demo(cli, tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(MAPPING.format(episodes="recording"))
    out = tmp_path / "dataset"
    r = subprocess.run([str(cli), "export", str(demo), str(second), "--format", "lerobot",
                        "--mapping", str(mapping), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = load(out, tmp_path / "loaded", [0])
    cols = got["columns"]
    eps = cols["episode_index"]
    assert got["episodes"] == 2 and sorted(set(eps)) == [0, 1]
    assert cols["index"] == list(range(len(eps)))
    n0 = eps.count(0)
    assert eps == [0] * n0 + [1] * (len(eps) - n0)
    assert abs(n0 - 300) <= 1 and abs((len(eps) - n0) - 120) <= 1, (n0, len(eps) - n0)
    for e, bag in enumerate([demo, second]):
        with AnyReader([bag]) as rd:
            odom, cam = [], []
            for c, t, raw in rd.messages():
                if c.topic == "/odom":
                    odom.append((t, rd.deserialize(raw, c.msgtype).pose.pose.position.x))
                elif c.topic == "/camera/front/h264":
                    cam.append(t)
        times = np.array([t for t, _ in odom])
        values = [v for _, v in odom]
        rows = [i for i, x in enumerate(eps) if x == e]
        for row in rows:
            t = cam[0] + round(cols["timestamp"][row] * FPS) * 10**9 // FPS
            assert np.float32(held(times, values, t)) == np.float32(cols["observation.state"][row][0])
    ep_meta = pd.read_parquet(out / "meta/episodes/chunk-000/file-000.parquet")
    assert list(ep_meta["dataset_from_index"]) == [0, n0]
    assert list(ep_meta["length"]) == [n0, len(eps) - n0]


@pytest.mark.parametrize("script, codec", [("av1_camera.py", "av1"), ("h265_camera.py", "hevc")])
def test_a_video_camera_is_copied_and_lerobot_decodes_it(cli, tmp_path, script, codec):
    """An AV1 camera (ffmpeg's SVT-AV1) and an H.265 one (libx265, with B-frames), logged by
    Foxglove's SDK, are copied into the dataset's MP4 as they are (`av01`, `hvc1`); LeRobot's
    loader (PyAV) decodes the frames bagscope shows, and `info.json` says the codec."""
    rec, out = synthetic_export(cli, tmp_path, script, 90, "watch the test picture",
                                "observation.images.front: /camera")
    info = json.loads((out / "meta/info.json").read_text())
    video = info["features"]["observation.images.front"]["info"]
    assert (video["video.codec"], video["video.pix_fmt"]) == (codec, "yuv420p")
    assert (video["video.width"], video["video.height"]) == (320, 240)
    mp4 = next((out / "videos").rglob("*.mp4"))
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                            "stream=codec_name,nb_frames", "-of", "json", str(mp4)],
                           check=True, capture_output=True, text=True)
    assert json.loads(probe.stdout)["streams"][0]["codec_name"] == codec
    picks = [0, 4, 15, 29]
    got = load(out, tmp_path / "loaded", picks)
    assert got["frames"] == 30 and got["episodes"] == 1
    cols = got["columns"]
    # Frame k of the clock is the camera's frame 3k (30 fps under a 10 fps clock, held).
    for row, ts in enumerate(cols["timestamp"]):
        j = round(ts * 30)
        assert cols["observation.state"][row] == [float(j), 2.0 * j], row
        # A feature of one element is a scalar column, as LeRobot's own of shape (1,) are.
        assert cols["action"][row] == 0.5 * j, row
    ours = json.loads((out / "meta/stats.json").read_text())
    for feat in ("observation.state", "action"):
        for stat, v in got["stats"][feat].items():
            assert np.allclose(np.asarray(ours[feat][stat], float), np.asarray(v, float),
                               rtol=1e-5, atol=1e-6), (feat, stat)
    import cv2

    for i in picks:
        j = round(cols["timestamp"][i] * 30)
        png = tmp_path / f"ours_{i}.png"
        subprocess.run([str(cli), "image", str(rec), "/camera", "--index", str(j), "-o",
                        str(png)], check=True, capture_output=True)
        ours = cv2.cvtColor(cv2.imread(str(png)), cv2.COLOR_BGR2RGB).astype(int)
        theirs = np.load(tmp_path / "loaded" / f"frame_{i}.npy").astype(int)
        assert ours.shape == theirs.shape
        diff = np.abs(ours - theirs)
        assert diff.mean() < 1.5 and np.percentile(diff, 99) <= 4, (i, diff.mean())


def test_raw_and_jpeg_cameras_are_encoded_as_av1_and_lerobot_decodes_them(cli, tmp_path):
    """Cameras that are not video (a raw `RawImage`, a JPEG and a PNG `CompressedImage`, logged
    by Foxglove's SDK) are encoded as AV1 (rav1e, never a patent-pool codec), each frame on the
    clock shown at its tick: ffprobe says av1 and the frame count, LeRobot's loader (PyAV)
    decodes pictures at 35 dB PSNR or more against the recorded ones."""
    rec, out = synthetic_export(cli, tmp_path, "image_cameras.py", 60, "watch the square",
                                "observation.images.raw: /raw\nobservation.images.jpeg: /jpeg\n"
                                "observation.images.png: /png")
    keys = ("observation.images.raw", "observation.images.jpeg", "observation.images.png")
    info = json.loads((out / "meta/info.json").read_text())
    for key in keys:
        video = info["features"][key]["info"]
        assert (video["video.codec"], video["video.pix_fmt"]) == ("av1", "yuv420p")
        assert (video["video.width"], video["video.height"]) == (320, 240)
        mp4 = next((out / "videos" / key).rglob("*.mp4"))
        probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
                                "-show_entries", "stream=codec_name,nb_read_frames", "-of", "json",
                                str(mp4)], check=True, capture_output=True, text=True)
        stream = json.loads(probe.stdout)["streams"][0]
        assert (stream["codec_name"], int(stream["nb_read_frames"])) == ("av1", 20)
    picks = [0, 7, 19]
    got = load(out, tmp_path / "loaded", picks)
    assert got["frames"] == 20 and sorted(got["cameras"]) == sorted(keys)
    import importlib.util

    spec = importlib.util.spec_from_file_location("image_cameras", HERE.parents[1] / "tests" / "py" / "image_cameras.py")
    cams = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cams)
    for i in picks:
        j = round(got["columns"]["timestamp"][i] * 30)
        assert got["columns"]["observation.state"][i] == [float(j), 2.0 * j]
        want = cams.picture(j).astype(int)
        for key in keys:
            theirs = np.load(tmp_path / "loaded" / f"frame_{i}_{key}.npy").astype(int)
            assert theirs.shape == want.shape
            diff = np.abs(theirs - want)
            psnr = 10 * np.log10(255**2 / np.mean(diff.astype(float) ** 2))
            # The stated quality of an encoded camera: PSNR 35 dB or more against the picture.
            assert psnr >= 35 and diff.mean() < 3.0, (key, i, psnr, diff.mean())
    # The image statistics are of the recorded pictures as LeRobot samples them (per channel,
    # /255; a 320×240 picture every other column and row, so red's largest is x = 318's 254
    # and green's y = 238's 253, not 255); blue is 96 but in the square (40).
    stats = json.loads((out / "meta/stats.json").read_text())["observation.images.raw"]
    assert np.asarray(stats["max"]).shape == (3, 1, 1)
    hi, lo = np.asarray(stats["max"]).ravel(), np.asarray(stats["min"]).ravel()
    assert hi == pytest.approx([254 / 255, 253 / 255, 96 / 255]) and lo == pytest.approx([0, 0, 40 / 255])


def test_depth_cameras_are_grey_over_the_depth_range(cli, tmp_path):
    """Depth cameras (`RawImage` 16UC1 in mm and 32FC1 in m, the same depths) are encoded as
    AV1 grey over the mapping's `depth_range` (near black, far white, no return black), said in
    info.json (`video.is_depth_map`, `video.depth_range_m`); LeRobot's loader decodes pictures
    at 35 dB PSNR or more against the depths drawn so; lerobot-doctor finds no error."""
    near, far = 0.5, 4.5
    rec, out = synthetic_export(cli, tmp_path, "image_cameras.py", 60, "see the depth",
                                f"depth_range: [{near}, {far}]\n"
                                "observation.images.depth: /depth\n"
                                "observation.images.depth32: /depth32")
    info = json.loads((out / "meta/info.json").read_text())
    keys = ("observation.images.depth", "observation.images.depth32")
    for key in keys:
        video = info["features"][key]["info"]
        assert (video["video.codec"], video["video.is_depth_map"]) == ("av1", True)
        assert video["video.depth_range_m"] == [near, far]
    import importlib.util

    spec = importlib.util.spec_from_file_location("image_cameras", HERE.parents[1] / "tests" / "py" / "image_cameras.py")
    cams = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cams)
    picks = [0, 7, 19]
    got = load(out, tmp_path / "loaded", picks)
    assert got["frames"] == 20
    for i in picks:
        j = round(got["columns"]["timestamp"][i] * 30)
        grey = np.clip((cams.depth(j) - near) / (far - near), 0, 1) * 255
        want = np.repeat(np.round(grey)[..., None], 3, axis=-1)
        for key in keys:
            theirs = np.load(tmp_path / "loaded" / f"frame_{i}_{key}.npy").astype(float)
            assert theirs.shape == want.shape
            psnr = 10 * np.log10(255**2 / np.mean((theirs - want) ** 2))
            assert psnr >= 35, (key, i, psnr)
            print(f"{key} frame {i}: PSNR {psnr:.1f} dB")
            # Back to metres through the range info.json states: within 5 cm on the ramp.
            metres = near + theirs[20:, :, 0] / 255 * (far - near)
            assert np.median(np.abs(metres - cams.depth(j)[20:])) < 0.05, (key, i)
    doctor(out)


def test_lerobot_doctor_finds_no_error(cli, demo, tmp_path):
    """lerobot-doctor's checks over the demo cut into two episodes and over two recordings an
    episode each, the demo's H.264 camera copied: no FAIL. (It warns that a copied stream's MP4 holds
    more frames than its episode: the frames from the keyframe before the episode's first, which
    decoding needs; and of episodes shorter than 100 frames.)"""
    second = short_demo(cli, tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(MAPPING.format(episodes="[[0, 10], [12, 25]]"))
    out = tmp_path / "dataset"
    r = export(cli, demo, mapping, out)
    assert r.returncode == 0, r.stderr
    report = doctor(out)
    assert report["total_episodes"] == 2
    mapping.write_text(MAPPING.format(episodes="recording"))
    r = subprocess.run([str(cli), "export", str(demo), str(second), "--format", "lerobot",
                        "--mapping", str(mapping), "-o", str(tmp_path / "two")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert doctor(tmp_path / "two")["total_episodes"] == 2


def test_virtual_topics_of_message_scripts_feed_the_mapping(cli, tmp_path):
    """`--script` message scripts make virtual topics the mapping names like any other: a
    `std_msgs/msg/Float64` in `observation.state` and a `sensor_msgs/msg/Image` as a camera
    (encoded as AV1), both from `/state`."""
    rec = tmp_path / "rec.mcap"
    subprocess.run(["python3", str(HERE.parents[1] / "tests" / "py" / "image_cameras.py"), str(rec),
                    "60"], check=True)
    speed = tmp_path / "speed.lua"
    speed.write_text("-- topic: /speed\n-- type: std_msgs/msg/Float64\n-- input: /state\n"
                     "function message(topic, msg, time)\n  return { data = 3 * msg.x }\nend\n")
    grey = tmp_path / "grey.lua"
    grey.write_text("-- topic: /grey\n-- type: sensor_msgs/msg/Image\n-- input: /state\n"
                    "function message(topic, msg, time)\n"
                    "  return { height = 32, width = 32, encoding = 'mono8', step = 32,\n"
                    "           data = string.rep(string.char((8 * math.floor(msg.x)) % 256), 32 * 32) }\n"
                    "end\n")
    mapping = tmp_path / "map.yaml"
    mapping.write_text(SYNTHETIC.format(task="virtual", cameras="observation.images.grey: /grey")
                       .replace("[/state.x, /state.y]", "[/state.x, /speed.data]"))
    out = tmp_path / "ds"
    r = export(cli, rec, mapping, out, "--script", str(speed), "--script", str(grey))
    assert r.returncode == 0, r.stderr
    got = load(out, tmp_path / "loaded", [0, 9, 19])
    assert got["frames"] == 20
    for row, ts in enumerate(got["columns"]["timestamp"]):
        j = round(ts * 30)
        assert got["columns"]["observation.state"][row] == [float(j), 3.0 * j], row
    for i in (0, 9, 19):
        j = round(got["columns"]["timestamp"][i] * 30)
        frame = np.load(tmp_path / "loaded" / f"frame_{i}.npy").astype(int)
        assert frame.shape == (32, 32, 3) and abs(frame.mean() - (8 * j) % 256) < 3, (i, frame.mean())
    # Without the scripts the mapping names topics the recording does not have.
    r = export(cli, rec, mapping, tmp_path / "never")
    assert r.returncode == 2 and "no topic /speed" in r.stderr, r.stderr
