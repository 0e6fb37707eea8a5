"""Each mesh file named on the command line as trimesh reads it (the peer of bagscope's mesh
reader, tests/corpus/robot_mesh.rs): its triangle count and the box of the corners its
triangles use, as JSON. A COLLADA file is put in metres and z up by the unit and up axis its
asset declares (pycollada reads them; trimesh itself keeps the file's units), as ROS's tools
draw it."""

import json
import sys

import numpy as np
import trimesh

out = {}
for f in sys.argv[1:]:
    try:
        if f.lower().endswith(".dae"):
            import collada

            c = collada.Collada(
                f,
                ignore=[collada.common.DaeUnsupportedError, collada.common.DaeBrokenRefError],
            )
            unit = c.assetInfo.unitmeter or 1.0
            up = c.assetInfo.upaxis or "Y_UP"
            s = trimesh.load(f, force="scene", process=False)
            m = s.to_geometry() if hasattr(s, "to_geometry") else s.dump(concatenate=True)
            v = np.asarray(m.vertices, dtype=float)[np.unique(np.asarray(m.faces).ravel())] * unit
            if up == "Y_UP":
                v = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)
            elif up == "X_UP":
                v = np.stack([-v[:, 1], v[:, 0], v[:, 2]], axis=1)
        else:
            m = trimesh.load(f, force="mesh", process=False)
            v = np.asarray(m.vertices, dtype=float)[np.unique(np.asarray(m.faces).ravel())]
        out[f] = [len(m.faces), v.min(axis=0).tolist(), v.max(axis=0).tolist()]
    except Exception as e:  # noqa: BLE001 - a file trimesh refuses is reported, not fatal
        out[f] = f"trimesh: {e}"
print(json.dumps(out))
