"""Writes an MCAP file whose channels carry OMG IDL schemas (`ros2idl` as rosbag2 stores them,
`omgidl` as eProsima's DDS recorder and Foxglove's tools write them), with messages built and
serialized by rosbags from the same IDL text, and the JSON of every message as rosbags holds
it: the independent expectation bagscope's decoding is held against.

usage: idl_fixture.py OUT.mcap EXPECTED.jsonl"""
import dataclasses
import json
import sys

import numpy as np
from mcap.writer import Writer
from rosbags.typesys import Stores, get_types_from_idl, get_typestore

SEP = '=' * 80

# rosidl's own output for a message with a header, constants, a typedef'd fixed array, bounded
# and unbounded sequences and strings; its dependencies after `====` / `IDL:` lines, as
# rosbag2's local message definition source writes them.
ROS2IDL = {
    'demo_msgs/msg/Reading': r'''// generated from rosidl_adapter/resource/msg.idl.em
// with input from demo_msgs/msg/Reading.msg
// generated code does not contain a copyright notice

#include "std_msgs/msg/Header.idl"

module demo_msgs {
  module msg {
    typedef double double__9[9];
    module Reading_Constants {
      const uint8 LOW = 0;
      const uint8 HIGH = 2;
      const string UNIT = "m/s";
    };
    @verbatim (language="comment", text=
      "A reading.")
    struct Reading {
      std_msgs::msg::Header header;

      @verbatim (language="comment", text=
        "The covariance, row major.")
      double__9 covariance;

      sequence<float, 5> samples;

      string<16> label;

      sequence<std_msgs::msg::Header> history;

      @default (value=2)
      uint8 level;

      int64 count;

      boolean valid;
    };
  };
};
''',
    'std_msgs/msg/Header': r'''// generated from rosidl_adapter/resource/msg.idl.em
#include "builtin_interfaces/msg/Time.idl"

module std_msgs {
  module msg {
    struct Header {
      builtin_interfaces::msg::Time stamp;

      string frame_id;
    };
  };
};
''',
    'builtin_interfaces/msg/Time': r'''module builtin_interfaces {
  module msg {
    struct Time {
      int32 sec;

      uint32 nanosec;
    };
  };
};
''',
}

# eProsima's DDS recorder: one text, the type's module path with a `fastdds` prefix, IDL
# spellings of the integers, @key, a typedef'd bounded sequence, a constant as a bound.
OMGIDL = r'''
module fastdds {
  module sensors {
    const unsigned long MAX_POINTS = 3;
    typedef sequence<double, MAX_POINTS> Values;
    struct Point {
      @key unsigned long id;
      double x;
      double y;
    };
    struct Scan {
      unsigned long long stamp;
      string frame;
      sequence<Point> points;
      Values values;
      short s; unsigned short us; long l; long long ll; octet o; char c;
      float f; int8 i8; uint16 u16;
      sequence<string<8>, 2> tags;
    };
  };
};
'''

# A type without a package.
BARE = 'struct Pose2D { double x; double y; double theta; };\n'


def for_rosbags(text):
    """rosbags' IDL parser takes no preprocessor lines; rosidl's text has `#include`s."""
    return '\n'.join(line for line in text.splitlines() if not line.startswith('#'))


def ros2idl_text(root):
    text = ROS2IDL[root]
    for name, dep in ROS2IDL.items():
        if name != root:
            text += f'{SEP}\nIDL: {name}\n{dep}'
    return text


def to_json(v, store):
    if dataclasses.is_dataclass(v):
        # The type's fields as rosbags defines them (its classes also carry the constants).
        _consts, fields = store.fielddefs[v.__msgtype__]
        return {name: to_json(getattr(v, name), store) for name, _ in fields}
    if isinstance(v, np.ndarray):
        return [to_json(x, store) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [to_json(x, store) for x in v]
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, bool):
        return v
    return v


def main():
    out, expected = sys.argv[1], sys.argv[2]
    store = get_typestore(Stores.EMPTY)
    for text in ROS2IDL.values():
        store.register(get_types_from_idl(for_rosbags(text)))
    store.register(get_types_from_idl(OMGIDL))
    store.register(get_types_from_idl(BARE))
    T = store.types
    Time = T['builtin_interfaces/msg/Time']
    Header = T['std_msgs/msg/Header']
    Reading = T['demo_msgs/msg/Reading']
    Point = T['fastdds/sensors/Point']
    Scan = T['fastdds/sensors/Scan']
    Pose2D = T['Pose2D']

    msgs = []
    for i in range(4):
        h = Header(stamp=Time(sec=1700000000 + i, nanosec=i * 1000), frame_id=f'frame_{i}')
        msgs.append(('/reading', 'demo_msgs/msg/Reading', Reading(
            header=h,
            covariance=np.array([i + k * 0.25 for k in range(9)], dtype=np.float64),
            samples=np.array([0.5 * k - i for k in range(i + 1)], dtype=np.float32),
            label='x' * (i * 4),
            history=[Header(stamp=Time(sec=-k, nanosec=k), frame_id='h' * k) for k in range(i)],
            level=i % 3,
            count=-(1 << 40) - i,
            valid=i % 2 == 0,
        )))
        msgs.append(('/scan', 'fastdds::sensors::Scan', Scan(
            stamp=(1 << 63) + i,
            frame='laser',
            points=[Point(id=k, x=k * 1.5, y=-k / 3) for k in range(i)],
            values=np.array([k * 0.1 for k in range(min(i, 3))], dtype=np.float64),
            s=-i, us=65535 - i, l=-(1 << 31) + i, ll=(1 << 62) + i, o=100 - i, c=65 + i,
            f=i / 7, i8=-128 + i, u16=i * 1000,
            tags=['ab' * k for k in range(min(i, 2))],
        )))
        msgs.append(('/pose', 'Pose2D', Pose2D(x=i * 0.1, y=-i * 0.2, theta=3.25 * i)))

    schemas = {
        'demo_msgs/msg/Reading': ('ros2idl', ros2idl_text('demo_msgs/msg/Reading')),
        'fastdds::sensors::Scan': ('omgidl', OMGIDL),
        'Pose2D': ('omgidl', BARE),
    }
    with open(out, 'wb') as f, open(expected, 'w') as e:
        w = Writer(f)
        w.start('ros2', 'bagscope idl fixture')
        channels = {}
        for name, (enc, text) in schemas.items():
            sid = w.register_schema(name=name, encoding=enc, data=text.encode())
            topic = {'demo_msgs/msg/Reading': '/reading', 'fastdds::sensors::Scan': '/scan',
                     'Pose2D': '/pose'}[name]
            channels[topic] = w.register_channel(topic=topic, message_encoding='cdr', schema_id=sid)
        for k, (topic, name, m) in enumerate(msgs):
            t = 1_700_000_000_000_000_000 + k * 1_000_000
            typename = {'/reading': 'demo_msgs/msg/Reading', '/scan': 'fastdds/sensors/Scan',
                        '/pose': 'Pose2D'}[topic]
            data = store.serialize_cdr(m, typename)
            # Held to rosbags' own reading of the bytes.
            back = store.deserialize_cdr(data, typename)
            w.add_message(channel_id=channels[topic], log_time=t, publish_time=t, data=bytes(data))
            e.write(json.dumps({'time_ns': t, 'topic': topic, 'message': to_json(back, store)}) + '\n')
        w.finish()


main()
