"""Run inside LeRobot's own environment (python/tests/test_lerobot.py): loads a dataset with
LeRobot's loader offline from a local root and writes what it saw as JSON and .npy files.

    LEROBOT_PYTHON lerobot_load.py ROOT OUT_DIR FRAME_INDEX...

OUT_DIR/loaded.json: episodes, frames, fps, the features' shapes and dtypes as the loader gives
them, every frame's state, action, timestamp, frame and episode indices; the statistics LeRobot's
own `compute_episode_stats` and `aggregate_stats` give from the loaded columns. For each FRAME_INDEX,
OUT_DIR/frame_N_KEY.npy: each camera's frame there (H×W×3 uint8, as the loader decoded it),
and OUT_DIR/frame_N.npy the first camera's.
"""
import json
import sys
from pathlib import Path

import numpy as np
from lerobot.datasets.compute_stats import aggregate_stats, compute_episode_stats
from lerobot.datasets.lerobot_dataset import LeRobotDataset


def main():
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    picks = [int(x) for x in sys.argv[3:]]
    ds = LeRobotDataset(repo_id="bagscope/test", root=root, video_backend="pyav")
    hf = ds.hf_dataset.with_format(None)
    cols = {k: hf[k] for k in ["observation.state", "action", "timestamp", "frame_index",
                                "episode_index", "index", "task_index"]}
    first = ds[0]
    shapes = {k: [list(v.shape), str(v.dtype)] for k, v in first.items() if hasattr(v, "shape")}
    cams = [k for k in ds.meta.video_keys]
    for i in picks:
        item = ds[i]
        for c in cams:
            img = (item[c].permute(1, 2, 0).numpy() * 255.0).round().astype(np.uint8)
            np.save(out / f"frame_{i}_{c}.npy", img)
            if c == cams[0]:
                np.save(out / f"frame_{i}.npy", img)
    # LeRobot's statistics of the loaded columns, per episode then aggregated.
    numeric = {k: {"dtype": ds.features[k]["dtype"], "shape": ds.features[k]["shape"]}
               for k in cols}
    per_ep = []
    eps = np.array(cols["episode_index"])
    for e in sorted(set(eps.tolist())):
        sel = eps == e
        data = {}
        for k, v in cols.items():
            a = np.array(v)[sel]
            dt = np.float32 if numeric[k]["dtype"] == "float32" else np.int64
            data[k] = a.astype(dt)
        per_ep.append(compute_episode_stats(data, numeric))
    agg = aggregate_stats(per_ep)
    stats = {k: {s: np.asarray(v).tolist() for s, v in d.items()} for k, d in agg.items()}
    (out / "loaded.json").write_text(json.dumps({
        "episodes": ds.num_episodes,
        "frames": ds.num_frames,
        "fps": ds.fps,
        "shapes": shapes,
        "cameras": cams,
        "columns": {k: np.asarray(v).tolist() for k, v in cols.items()},
        "task": first["task"],
        "stats": stats,
    }))


if __name__ == "__main__":
    main()
