"""Link poses of a URDF by yourdfpy (an independent forward-kinematics peer), for joint values
given as JSON: prints {"configs": [{link: 4x4 row-major, in the root link's frame}]}.

python3 urdf_fk.py URDF CONFIGS.json   (CONFIGS: [{joint: value}], actuated joints only)
"""
import json
import sys

import numpy as np
import yourdfpy

urdf = yourdfpy.URDF.load(sys.argv[1], build_scene_graph=True, load_meshes=False,
                          load_collision_meshes=False)
configs = json.load(open(sys.argv[2]))
out = []
for cfg in configs:
    urdf.update_cfg({k: v for k, v in cfg.items() if k in urdf.actuated_joint_names})
    out.append({l: np.asarray(urdf.get_transform(frame_to=l)).reshape(-1).tolist()
                for l in urdf.link_map})
print(json.dumps({"root": urdf.base_link, "actuated": urdf.actuated_joint_names, "configs": out}))
