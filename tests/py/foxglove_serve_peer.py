"""The Foxglove SDK's own WebSocket server (pip foxglove-sdk) serving a recording, the peer
bagscope's `serve` is held against (tests/live/serve.rs).

    python3 foxglove_serve_peer.py RECORDING

Reads the recording with an independent reader (an MCAP with the `mcap` package, a ROS 1 bag
with rosbags), advertises one channel per topic, encoding and schema, prints the port, waits
for one client to subscribe to every channel and then logs every message in time order
(as fast as the SDK takes them; nothing is dropped: the backlog holds them all), prints
"logged N" and serves until stdin closes.
"""

import sys
import threading

import foxglove
from foxglove.websocket import Capability, ServerListener


def read(path):
    """(channels: key -> (topic, encoding, schema name, schema encoding, schema bytes),
    messages: [(time, key, bytes)]) of the recording."""
    channels, messages = {}, []
    if path.endswith(".mcap"):
        from mcap.reader import make_reader

        with open(path, "rb") as f:
            for schema, channel, message in make_reader(f).iter_messages(log_time_order=True):
                key = (
                    channel.topic,
                    channel.message_encoding,
                    schema.name if schema else "",
                    schema.encoding if schema else "",
                    bytes(schema.data) if schema else b"",
                )
                channels[key] = key
                messages.append((message.log_time, key, bytes(message.data)))
    else:
        from rosbags.rosbag1 import Reader

        with Reader(path) as reader:
            for conn, t, raw in reader.messages():
                # rosbags names types as ROS 2 does (pkg/msg/Type); the bag says pkg/Type.
                name = conn.msgtype.replace("/msg/", "/")
                key = (conn.topic, "ros1", name, "ros1msg", conn.msgdef.data.encode())
                channels[key] = key
                messages.append((t, key, bytes(raw)))
    messages.sort(key=lambda m: m[0])
    return channels, messages


def main():
    channels, messages = read(sys.argv[1])
    subscribed = set()
    all_in = threading.Event()

    class Listener(ServerListener):
        def on_subscribe(self, client, channel):
            subscribed.add(channel.id)
            if len(subscribed) == len(channels):
                all_in.set()

    start = messages[0][0] if messages else 0
    end = messages[-1][0] if messages else 0
    server = foxglove.start_server(
        port=0,
        capabilities=[Capability.Time],
        server_listener=Listener(),
        playback_time_range=(start, end),
        message_backlog_size=len(messages) + 16,
    )
    fg = {
        key: foxglove.Channel(
            key[0],
            message_encoding=key[1],
            schema=foxglove.Schema(name=key[2], encoding=key[3], data=key[4]),
        )
        for key in channels
    }
    print(server.port, flush=True)
    all_in.wait()
    for t, key, data in messages:
        fg[key].log(data, log_time=t)
    print(f"logged {len(messages)}", file=sys.stderr, flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
