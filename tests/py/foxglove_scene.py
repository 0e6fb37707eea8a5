"""An MCAP file in Foxglove's own schemas, written by Foxglove's SDK (protobuf encoding): the
3D scene's peer fixture (tests/corpus/scene.rs).

    python3 foxglove_scene.py OUT.mcap

- /tf: foxglove.FrameTransform, world -> base at (2, 0, 0) turned 90 degrees about z, at 0, 1, 2 s
  (the base moves 1 m along y each second).
- /cloud: foxglove.PointCloud in base at 0.5 s: 3 points, x y z float32 + intensity uint8, a
  stride of 16 with padding, a pose (0, 0, 1) in base.
- /scene: foxglove.SceneUpdate at 0.5 s: entity "box" (a 1 m cube at (1, 0, 0) in world, red),
  entity "arrow" (from base's origin, 2 m long, green), entity "label" (text "hello"); at 1.5 s
  the "box" entity deleted.
- /pose: foxglove.PoseInFrame in world at (0, 3, 0) at 0.5 s.
"""
import struct
import sys

import foxglove
from foxglove.messages import (
    ArrowPrimitive,
    Color,
    CubePrimitive,
    FrameTransform,
    PackedElementField,
    PackedElementFieldNumericType,
    PointCloud,
    Pose,
    PoseInFrame,
    Quaternion,
    SceneEntity,
    SceneEntityDeletion,
    SceneEntityDeletionType,
    SceneUpdate,
    TextPrimitive,
    Timestamp,
    Vector3,
)

T0 = 1_700_000_000 * 10**9


def ts(ns):
    return Timestamp(sec=ns // 10**9, nsec=ns % 10**9)


def pose(x, y, z, qz=0.0, qw=1.0):
    return Pose(position=Vector3(x=x, y=y, z=z), orientation=Quaternion(x=0.0, y=0.0, z=qz, w=qw))


def main(out):
    s = 0.5**0.5
    with foxglove.open_mcap(out, allow_overwrite=True):
        for k in range(3):
            t = T0 + k * 10**9
            foxglove.log(
                "/tf",
                FrameTransform(
                    timestamp=ts(t),
                    parent_frame_id="world",
                    child_frame_id="base",
                    translation=Vector3(x=2.0, y=float(k), z=0.0),
                    rotation=Quaternion(x=0.0, y=0.0, z=s, w=s),
                ),
                log_time=t,
            )
            if k == 0:
                th = T0 + 5 * 10**8
                data = b""
                for (x, y, z, i) in [(1.0, 0.0, 0.0, 10), (0.0, 2.0, 0.0, 20), (0.0, 0.0, 3.0, 30)]:
                    data += struct.pack("<fffB3x", x, y, z, i)
                F = PackedElementFieldNumericType
                foxglove.log(
                    "/cloud",
                    PointCloud(
                        timestamp=ts(th),
                        frame_id="base",
                        pose=pose(0.0, 0.0, 1.0),
                        point_stride=16,
                        fields=[
                            PackedElementField(name="x", offset=0, type=F.Float32),
                            PackedElementField(name="y", offset=4, type=F.Float32),
                            PackedElementField(name="z", offset=8, type=F.Float32),
                            PackedElementField(name="intensity", offset=12, type=F.Uint8),
                        ],
                        data=data,
                    ),
                    log_time=th,
                )
                foxglove.log(
                    "/scene",
                    SceneUpdate(
                        entities=[
                            SceneEntity(
                                timestamp=ts(th),
                                frame_id="world",
                                id="box",
                                cubes=[
                                    CubePrimitive(
                                        pose=pose(1.0, 0.0, 0.0),
                                        size=Vector3(x=1.0, y=1.0, z=1.0),
                                        color=Color(r=1.0, g=0.0, b=0.0, a=1.0),
                                    )
                                ],
                            ),
                            SceneEntity(
                                timestamp=ts(th),
                                frame_id="base",
                                id="arrow",
                                arrows=[
                                    ArrowPrimitive(
                                        pose=pose(0.0, 0.0, 0.0),
                                        shaft_length=1.5,
                                        shaft_diameter=0.1,
                                        head_length=0.5,
                                        head_diameter=0.3,
                                        color=Color(r=0.0, g=1.0, b=0.0, a=1.0),
                                    )
                                ],
                            ),
                            SceneEntity(
                                timestamp=ts(th),
                                frame_id="world",
                                id="label",
                                texts=[
                                    TextPrimitive(
                                        pose=pose(0.0, 0.0, 2.0),
                                        billboard=True,
                                        font_size=12.0,
                                        color=Color(r=1.0, g=1.0, b=1.0, a=1.0),
                                        text="hello",
                                    )
                                ],
                            ),
                        ]
                    ),
                    log_time=th,
                )
                foxglove.log(
                    "/pose",
                    PoseInFrame(timestamp=ts(th), frame_id="world", pose=pose(0.0, 3.0, 0.0)),
                    log_time=th,
                )
            if k == 1:
                td = T0 + 15 * 10**8
                foxglove.log(
                    "/scene",
                    SceneUpdate(
                        deletions=[
                            SceneEntityDeletion(
                                timestamp=ts(td), type=SceneEntityDeletionType.MatchingId, id="box"
                            )
                        ]
                    ),
                    log_time=td,
                )


if __name__ == "__main__":
    main(sys.argv[1])
