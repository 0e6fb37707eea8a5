"""A GPS track as bagscope exports it, against the fixes rosbags decodes, read back by the
readers a user would meet: gpxpy (GPX), fastkml (KML) and shapely + the geojson package
(GeoJSON). Used by tests/corpus/track.rs.

    python3 track_peers.py BAGSCOPE RECORDING TOPIC OUTDIR

Prints one JSON line: fixes rosbags decoded, fixes kept, left out without a fix, and each
format's result; exits 1 with the first difference.
"""

import json
import math
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from rosbags.highlevel import AnyReader


def fixes(recording, topic):
    """(time ns, lat, lon, alt) of the topic's fixes as rosbags decodes them, the no-fix ones
    (status < 0) and not-a-position ones (NaN, out of range, 0/0) left out and counted."""
    kept, no_fix, bad = [], 0, 0
    with AnyReader([Path(recording)]) as r:
        conns = [c for c in r.connections if c.topic == topic]
        for conn, t, raw in r.messages(connections=conns):
            m = r.deserialize(raw, conn.msgtype)
            st = getattr(getattr(m, "status", None), "status", 0)
            if st < 0:
                no_fix += 1
                continue
            lat, lon = m.latitude, m.longitude
            if (
                math.isnan(lat)
                or math.isnan(lon)
                or not -90 <= lat <= 90
                or not -180 <= lon <= 180
                or (lat == 0 and lon == 0)
            ):
                bad += 1
                continue
            kept.append((t, lat, lon, m.altitude))
    kept.sort(key=lambda f: f[0])
    return kept, no_fix, bad


def us(t_ns):
    """Microseconds since the epoch (the files carry microseconds)."""
    return t_ns // 1000


def epoch_us(dt):
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    d = dt - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def same(kind, want, got):
    """got: [(time us, lat, lon, alt or None)]."""
    if len(got) != len(want):
        sys.exit(f"{kind}: {len(got)} points, rosbags decoded {len(want)} fixes")
    for i, ((t, la, lo, al), (gt, gla, glo, gal)) in enumerate(zip(want, got)):
        if gt != us(t):
            sys.exit(f"{kind}: point {i} at {gt} us, rosbags {us(t)}")
        if abs(gla - la) > 1e-9 or abs(glo - lo) > 1e-9:
            sys.exit(f"{kind}: point {i} at {gla}, {glo}, rosbags {la}, {lo}")
        if gal is not None and not math.isnan(al) and abs(gal - al) > 1e-6:
            sys.exit(f"{kind}: point {i} altitude {gal}, rosbags {al}")


def main():
    bagscope, recording, topic, outdir = sys.argv[1:5]
    want, no_fix, bad = fixes(recording, topic)
    out = Path(outdir)
    result = {"decoded": len(want) + no_fix + bad, "kept": len(want), "no_fix": no_fix, "bad": bad}
    for ext in ("gpx", "kml", "geojson"):
        f = out / f"track.{ext}"
        p = subprocess.run(
            [bagscope, "export", recording, "-t", topic, "-o", str(f)], capture_output=True, text=True
        )
        if p.returncode != 0:
            sys.exit(f"export {ext}: {p.stderr}")
        result[ext + "_stdout"] = p.stdout.strip()
        if ext == "gpx":
            import gpxpy

            g = gpxpy.parse(f.read_text())
            pts = [pt for trk in g.tracks for seg in trk.segments for pt in seg.points]
            got = [(epoch_us(p.time), p.latitude, p.longitude, p.elevation) for p in pts]
        elif ext == "kml":
            from fastkml import kml
            from fastkml.gx import Track

            k = kml.KML.parse(str(f))
            doc = k.features[0]
            pm = doc.features[0]
            track = pm.kml_geometry if isinstance(pm.kml_geometry, Track) else pm.geometry
            items = track.track_items
            got = [(epoch_us(it.when.dt), it.coord.y, it.coord.x, it.coord.z) for it in items]
        else:
            import geojson
            import shapely.geometry

            text = f.read_text()
            gj = geojson.loads(text)
            if not gj.is_valid:
                sys.exit(f"geojson: not valid: {gj.errors()}")
            # The package rounds coordinates to 6 places when it builds its objects: the
            # positions are read as written.
            feat = json.loads(text)["features"][0]
            shape = shapely.geometry.shape(feat["geometry"])
            coords = list(shape.coords)
            times = [epoch_us(datetime.fromisoformat(s.replace("Z", "+00:00"))) for s in feat["properties"]["times"]]
            got = [(t, c[1], c[0], c[2] if len(c) > 2 else None) for t, c in zip(times, coords)]
            if len(times) != len(coords):
                sys.exit(f"geojson: {len(times)} times for {len(coords)} positions")
        same(ext, want, got)
        result[ext] = len(got)
    print(json.dumps(result))


main()
