"""Reads a ROS 1 bag with ROS 1's own Python library (Debian's python3-rosbag, which
decompresses lz4 chunks through roslz4 and builds a Python class from every stored definition)
and prints one line per message: topic, type, md5sum, the md5sum genpy computes from the
stored definition, latching, time in ns, and the bytes in hex. Run with Debian's python3."""
import sys

import rosbag

with rosbag.Bag(sys.argv[1]) as bag:
    for topic, raw, t, header in bag.read_messages(raw=True, return_connection_header=True):
        datatype, data, md5sum, _pos, pytype = raw
        latched = header.get('latching', '0')
        if isinstance(latched, bytes):
            latched = latched.decode()
        print(topic, datatype, md5sum, pytype._md5sum, latched or '0', t.to_nsec(), bytes(data).hex())
