"""`bagscope compare`'s numbers worked out independently: rosbags' AnyReader and
rosbags-dataframe's get_dataframe (pandas), on the same recordings.

python3 compare_pandas.py RUN... --topic T... --field /topic.path... [--align start|TOPIC]
prints one JSON object shaped like `bagscope compare --json`.
"""
import argparse
import json
from pathlib import Path

from rosbags.dataframe import get_dataframe
from rosbags.highlevel import AnyReader


def times_of(df):
    return df.index.to_numpy().astype("datetime64[ns]").astype("int64")


def topic_stats(df, zero):
    t = times_of(df)
    if len(t) == 0:
        return None
    span = int(t[-1] - t[0])
    gaps = (t[1:] - t[:-1]) if len(t) > 1 else []
    return {
        "count": int(len(t)),
        "rate_hz": (len(t) - 1) / (span / 1e9) if len(t) > 1 and span > 0 else None,
        "longest_gap_s": int(max(gaps)) / 1e9 if len(gaps) else None,
        "first_s": (int(t[0]) - zero) / 1e9,
        "last_s": (int(t[-1]) - zero) / 1e9,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="+")
    p.add_argument("--topic", action="append", default=[])
    p.add_argument("--field", action="append", default=[])
    p.add_argument("--align", default="start")
    a = p.parse_args()
    out = {"runs": a.runs, "zeros_ns": [], "topics": [], "fields": []}
    per_topic = {t: [] for t in a.topic}
    per_field = {f: [] for f in a.field}
    for run in a.runs:
        with AnyReader([Path(run)]) as reader:
            if a.align == "start":
                zero = reader.start_time
            else:
                zero = int(times_of(get_dataframe(reader, a.align, []))[0])
            out["zeros_ns"].append(zero)
            for t in a.topic:
                if t not in reader.topics:
                    per_topic[t].append(None)
                    continue
                per_topic[t].append(topic_stats(get_dataframe(reader, t, []), zero))
            for f in a.field:
                topic, key = f.split(".", 1)
                if topic not in reader.topics:
                    per_field[f].append(None)
                    continue
                col = get_dataframe(reader, topic, [key])[key]
                n = int(col.count())
                per_field[f].append(
                    {
                        "count": n,
                        "min": float(col.min()),
                        "mean": float(col.mean()),
                        "max": float(col.max()),
                        "std": float(col.std()) if n > 1 else None,
                    }
                )
    out["topics"] = [{"topic": t, "runs": v} for t, v in sorted(per_topic.items())]
    out["fields"] = [{"field": f, "runs": v} for f, v in per_field.items()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
