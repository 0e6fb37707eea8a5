"""Video packets into an MCAP by Foxglove's own SDK (protobuf foxglove.CompressedVideo), the
route other tools take (tests/corpus/video.rs).

    python3 foxglove_video.py AUS OUT.mcap FORMAT

AUS holds the access units, each as a little-endian u32 length and its bytes; message i is
stamped (and logged) at 1.7e18 ns + i / 30 s.
"""
import struct
import sys

import foxglove
from foxglove.messages import CompressedVideo, Timestamp

T0 = 1_700_000_000 * 10**9
PERIOD = 33_333_333


def main(aus_path, out, fmt):
    data = open(aus_path, "rb").read()
    at, i = 0, 0
    with foxglove.open_mcap(out, allow_overwrite=True):
        while at < len(data):
            (n,) = struct.unpack_from("<I", data, at)
            au = data[at + 4 : at + 4 + n]
            at += 4 + n
            t = T0 + i * PERIOD
            foxglove.log(
                "/camera",
                CompressedVideo(
                    timestamp=Timestamp(sec=t // 10**9, nsec=t % 10**9),
                    frame_id="camera",
                    data=au,
                    format=fmt,
                ),
                log_time=t,
            )
            i += 1


if __name__ == "__main__":
    main(*sys.argv[1:])
