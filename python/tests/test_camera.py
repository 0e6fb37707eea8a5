"""Camera models against OpenCV (opencv-python-headless from PyPI): bagscope's projection
equals cv2.projectPoints / cv2.fisheye.projectPoints within 1e-6 px for random calibrations
and points, and its undistorted image equals cv2.undistort / cv2.remap within one grey level
on at least 99.9 % of pixels."""

import numpy as np
import pytest

import bagscope

cv2 = pytest.importorskip("cv2")

RNG = np.random.default_rng(20261129)


def random_k(w, h):
    f = RNG.uniform(300, 900)
    return np.array(
        [
            [f * RNG.uniform(0.95, 1.05), 0.0, w / 2 + RNG.uniform(-20, 20)],
            [0.0, f * RNG.uniform(0.95, 1.05), h / 2 + RNG.uniform(-20, 20)],
            [0.0, 0.0, 1.0],
        ]
    )


def random_d(model):
    if model == "plumb_bob":
        return np.array(
            [
                RNG.uniform(-0.3, 0.1),
                RNG.uniform(-0.05, 0.1),
                RNG.uniform(-2e-3, 2e-3),
                RNG.uniform(-2e-3, 2e-3),
                RNG.uniform(-0.02, 0.02),
            ]
        )
    if model == "rational_polynomial":
        return np.array(
            [
                RNG.uniform(-0.3, 0.3),
                RNG.uniform(-0.1, 0.1),
                RNG.uniform(-2e-3, 2e-3),
                RNG.uniform(-2e-3, 2e-3),
                RNG.uniform(-0.02, 0.02),
                RNG.uniform(-0.3, 0.3),
                RNG.uniform(-0.1, 0.1),
                RNG.uniform(-0.02, 0.02),
            ]
        )
    return np.array(
        [
            RNG.uniform(-0.05, 0.05),
            RNG.uniform(-0.02, 0.02),
            RNG.uniform(-0.01, 0.01),
            RNG.uniform(-0.005, 0.005),
        ]
    )


def random_points(n, spread=0.6):
    z = RNG.uniform(0.5, 8.0, n)
    x = RNG.uniform(-spread, spread, n) * z
    y = RNG.uniform(-spread * 0.75, spread * 0.75, n) * z
    return np.stack([x, y, z], axis=1)


def opencv_project(points, K, D, model):
    if model == "equidistant":
        px, _ = cv2.fisheye.projectPoints(
            points.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), K, D
        )
    else:
        px, _ = cv2.projectPoints(points, np.zeros(3), np.zeros(3), K, D)
    return px.reshape(-1, 2)


@pytest.mark.parametrize("model", ["plumb_bob", "rational_polynomial", "equidistant"])
def test_project_points_equals_opencv(model):
    worst = 0.0
    for _ in range(25):
        K, D = random_k(1280, 960), random_d(model)
        pts = random_points(2000, 1.5 if model == "equidistant" else 0.6)
        ours = bagscope.project_points(pts, K, D, model)
        theirs = opencv_project(pts, K, D, model)
        assert ours.shape == theirs.shape == (2000, 2)
        worst = max(worst, float(np.max(np.abs(ours - theirs))))
    assert worst <= 1e-6, f"{model}: {worst} px"


def test_project_points_takes_opencv_shapes_and_says_what_is_wrong():
    K = random_k(640, 480)
    D = random_d("plumb_bob")
    pts = random_points(5)
    # An (N, 1, 3) array, as OpenCV takes it, and D as a column.
    a = bagscope.project_points(pts.reshape(-1, 1, 3), K, D.reshape(-1, 1))
    assert np.allclose(a, opencv_project(pts, K, D, "plumb_bob"), atol=1e-6)
    with pytest.raises(ValueError, match="unknown model"):
        bagscope.project_points(pts, K, D, "mei")
    with pytest.raises(ValueError, match="takes 4, 5, 8, 12, 14"):
        bagscope.project_points(pts, K, D[:3], "plumb_bob")
    with pytest.raises(ValueError, match="K is 3×3"):
        bagscope.project_points(pts, K[:2], D)
    bad = D.copy()
    bad[1] = np.nan
    with pytest.raises(ValueError, match=r"D\[1\]"):
        bagscope.project_points(pts, K, bad)


def test_image(w, h, channels):
    """A picture with edges, gradients and noise: what a camera sees, not a flat field."""
    yy, xx = np.mgrid[0:h, 0:w]
    base = (
        127
        + 60 * np.sin(xx / 17.0)
        + 40 * np.cos(yy / 11.0)
        + ((xx // 40 + yy // 40) % 2) * 30
    )
    img = np.stack(
        [base + RNG.normal(0, 8, (h, w)) + 10 * c for c in range(channels)], axis=-1
    )
    img = np.clip(img, 0, 255).astype(np.uint8)
    return img[..., 0] if channels == 1 else img


test_image.__test__ = False


def agree(ours, theirs):
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    diff = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
    return float(np.mean(diff <= 1)), int(diff.max())


@pytest.mark.parametrize("model", ["plumb_bob", "rational_polynomial"])
@pytest.mark.parametrize("channels", [1, 3])
def test_undistort_equals_opencv(model, channels):
    w, h = 640, 480
    for _ in range(3):
        K, D = random_k(w, h), random_d(model)
        img = test_image(w, h, channels)
        share, worst = agree(bagscope.undistort(img, K, D, model), cv2.undistort(img, K, D))
        assert share >= 0.999, f"{share:.5f} within 1 grey level (worst {worst})"
        # A new camera matrix and a rectifying rotation, through OpenCV's maps and remap.
        new_k = K.copy()
        new_k[0, 0] *= 0.8
        new_k[1, 1] *= 0.8
        R, _ = cv2.Rodrigues(np.array([0.01, -0.02, 0.005]))
        m1, m2 = cv2.initUndistortRectifyMap(K, D, R, new_k, (w, h), cv2.CV_16SC2)
        theirs = cv2.remap(img, m1, m2, cv2.INTER_LINEAR)
        share, worst = agree(bagscope.undistort(img, K, D, model, R=R, new_K=new_k), theirs)
        assert share >= 0.999, f"rectified: {share:.5f} within 1 (worst {worst})"


def test_undistort_fisheye_equals_opencv():
    w, h = 640, 480
    for _ in range(3):
        K, D = random_k(w, h), random_d("equidistant")
        img = test_image(w, h, 3)
        new_k = K.copy()
        new_k[0, 0] *= 0.6
        new_k[1, 1] *= 0.6
        m1, m2 = cv2.fisheye.initUndistortRectifyMap(K, D, np.eye(3), new_k, (w, h), cv2.CV_16SC2)
        theirs = cv2.remap(img, m1, m2, cv2.INTER_LINEAR)
        ours = bagscope.undistort(img, K, D, "equidistant", new_K=new_k)
        share, worst = agree(ours, theirs)
        assert share >= 0.999, f"{share:.5f} within 1 grey level (worst {worst})"


def test_recording_camera_from_cameraInfo_and_foxglove_calibration(tmp_path):
    """A recording's calibration (tests/py/camera_fixture.py: rosbags' writer, Foxglove's SDK)
    as a Camera, projecting as OpenCV does."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "tests" / "py" / "camera_fixture.py"
    bag, fox, exp = tmp_path / "cam.bag", tmp_path / "fox.mcap", tmp_path / "exp.json"
    subprocess.run([sys.executable, str(script), str(bag), str(fox), str(exp)], check=True)
    want = json.loads(exp.read_text())
    K, D = np.array(want["K"]), np.array(want["D"])
    pts = random_points(500)
    for path, topic in [(bag, "/camera/camera_info"), (fox, "/cam/calibration")]:
        with bagscope.open(path) as rec:
            cam = rec.camera(topic)
            assert cam.model == "plumb_bob" and cam.size == (640, 480)
            assert cam.frame_id == "camera_optical"
            assert np.allclose(cam.K, K) and np.allclose(cam.D, D)
            assert cam.P.shape == (3, 4) and cam.R.shape == (3, 3)
            uv = cam.project(pts)
            theirs = opencv_project(pts, K, D, "plumb_bob")
            seen = ~np.isnan(uv[:, 0])
            assert seen.sum() > 400
            assert np.max(np.abs(uv[seen] - theirs[seen])) < 1e-6
            # Behind the camera: not seen.
            assert np.isnan(cam.project(np.array([[0.0, 0.0, -1.0]]))).all()
            later = rec.camera(topic, at_ns=cam.time_ns + 500_000_000)
            assert later.time_ns > cam.time_ns
            with pytest.raises(bagscope.NotFoundError):
                rec.camera(topic, at_ns=1)


def test_annotations_as_arrays(tmp_path):
    """ImageMarker (ROS 1, rosbags' writer) and foxglove.ImageAnnotations (protobuf, Foxglove's
    SDK) as arrays, stamped as the images they were made for."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "tests" / "py" / "camera_fixture.py"
    bag, fox, exp = tmp_path / "cam.bag", tmp_path / "fox.mcap", tmp_path / "exp.json"
    subprocess.run([sys.executable, str(script), str(bag), str(fox), str(exp)], check=True)
    want = json.loads(exp.read_text())
    with bagscope.open(bag) as rec:
        a = rec.annotations("/annotations")
        # Two ImageMarkers an image (a circle, a polygon), each stamped as its image.
        stamps = [i["stamp"] for i in want["images"]]
        assert sorted(set(a["stamp_ns"].tolist())) == stamps
        assert (a["time_ns"] - a["stamp_ns"] > 0).all()
        circles = [s for per in a["shapes"] for s in per if s["kind"] == "circle"]
        polys = [s for per in a["shapes"] for s in per if s["kind"] == "polygon"]
        assert len(circles) == len(polys) == len(stamps)
        for c, img in zip(circles, want["images"]):
            assert c["points"].shape == (1, 2) and c["points"].dtype == np.float32
            assert np.allclose(c["points"][0], img["circle"][:2]) and c["radius"] == 25.0
            assert c["label"] == "det/0" and c["color"] == (255, 0, 0, 255)
        assert np.allclose(polys[0]["points"], want["images"][0]["polygon"])
    with bagscope.open(fox) as rec:
        a = rec.annotations("/detections")
        assert a["stamp_ns"].tolist() == [f["stamp"] for f in want["foxglove"]]
        for per, f in zip(a["shapes"], want["foxglove"]):
            kinds = sorted(s["kind"] for s in per)
            assert kinds == ["circle", "line_strip", "text"]
            c = next(s for s in per if s["kind"] == "circle")
            assert np.allclose(c["points"][0], f["circle"][:2]) and c["radius"] == 20.0
            strip = next(s for s in per if s["kind"] == "line_strip")
            assert np.allclose(strip["points"], f["strip"])
            text = next(s for s in per if s["kind"] == "text")
            assert text["text"].startswith("car ") and text["font_size"] == 20.0
