"""The robot of the camera recording (tests/py/camera_fixture.py) and where OpenCV puts it.

    python3 camera_robot.py OUT.urdf

Writes a URDF whose `bumper` link, a red box fixed to `base_link` 1 m ahead of it, stands in
the camera's view, and prints as JSON the pixels (`cv2.projectPoints`, the fixture's K and
plumb_bob D, carried into the optical frame as the fixture's TF does, rounded) of points
sampled densely over the box's six faces: the region bagscope must paint
(tests/corpus/camera.rs).
"""
import json
import sys

import numpy as np

from camera_fixture import project, to_optical

CENTRE = np.array([1.0, 0.0, 0.0])
SIZE = np.array([0.12, 0.6, 0.1])

URDF = f"""<?xml version="1.0"?>
<robot name="camera_cart">
  <material name="red"><color rgba="0.9 0.1 0.1 1"/></material>
  <link name="base_link"/>
  <link name="bumper">
    <visual>
      <geometry><box size="{SIZE[0]} {SIZE[1]} {SIZE[2]}"/></geometry>
      <material name="red"/>
    </visual>
  </link>
  <joint name="bumper_joint" type="fixed">
    <parent link="base_link"/>
    <child link="bumper"/>
    <origin xyz="{CENTRE[0]} {CENTRE[1]} {CENTRE[2]}" rpy="0 0 0"/>
  </joint>
</robot>
"""


def surface(n=600):
    """Points over the box's faces, in base_link."""
    g = np.linspace(-0.5, 0.5, n)
    a, b = np.meshgrid(g, g)
    a, b = a.ravel(), b.ravel()
    pts = []
    for axis in range(3):
        for s in (-0.5, 0.5):
            p = np.zeros((a.size, 3))
            p[:, axis] = s
            p[:, (axis + 1) % 3] = a
            p[:, (axis + 2) % 3] = b
            pts.append(CENTRE + p * SIZE)
    return np.concatenate(pts)


def main(out):
    with open(out, "w") as f:
        f.write(URDF)
    px = project(to_optical(surface()))
    # Dense enough that neighbouring samples are under a pixel apart: the pixels they round
    # to, each once.
    json.dump(np.unique(np.round(px).astype(int), axis=0).tolist(), sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
