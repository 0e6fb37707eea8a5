"""Foxglove's map schemas written by their own writers: `foxglove.LocationFix` and
`foxglove.GeoJSON` in protobuf by Foxglove's SDK, and `foxglove.LocationFix` in JSON by the
`mcap` package (the encoding Foxglove's JSON schemas describe). The map's peer fixture
(tests/corpus/track.rs).

    python3 foxglove_geo.py PROTOBUF.mcap JSON.mcap

Prints the fixes written, one JSON list of [time_ns, lat, lon, alt, east_var, north_var].
"""
import json
import sys

import foxglove
from foxglove.messages import GeoJson, LocationFix, LocationFixPositionCovarianceType, Timestamp
from mcap.writer import Writer

T0 = 1_700_000_000 * 10**9


def fixes():
    out = []
    for k in range(6):
        t = T0 + k * 250_000_000
        out.append([t, 47.3769 + k * 1e-5, 8.5417 + k * 2e-5, 408.0 + k, 4.0 + k, 9.0])
    return out


def main(pb, js):
    fx = fixes()
    with foxglove.open_mcap(pb, allow_overwrite=True):
        for t, lat, lon, alt, e, n in fx:
            foxglove.log(
                "/loc",
                LocationFix(
                    timestamp=Timestamp(sec=t // 10**9, nsec=t % 10**9),
                    frame_id="gps",
                    latitude=lat,
                    longitude=lon,
                    altitude=alt,
                    position_covariance=[e, 0.0, 0.0, 0.0, n, 0.0, 0.0, 0.0, 1.0],
                    position_covariance_type=LocationFixPositionCovarianceType.DiagonalKnown,
                ),
                log_time=t,
            )
        shapes = {
            "type": "FeatureCollection",
            "features": [
                {
                    "type": "Feature",
                    "properties": {"name": "depot", "style": {"color": "#ff0000"}},
                    "geometry": {"type": "Point", "coordinates": [8.5417, 47.3769]},
                },
                {
                    "type": "Feature",
                    "properties": {},
                    "geometry": {"type": "LineString", "coordinates": [[8.5417, 47.3769], [8.5418, 47.3770]]},
                },
            ],
        }
        foxglove.log("/shapes", GeoJson(geojson=json.dumps(shapes)), log_time=T0)
        foxglove.log("/shapes", GeoJson(geojson='{"type": "Feature", "geometry": '), log_time=T0 + 10**9)
    schema = {
        "type": "object",
        "properties": {
            "latitude": {"type": "number"},
            "longitude": {"type": "number"},
            "altitude": {"type": "number"},
            "position_covariance": {"type": "array", "items": {"type": "number"}},
            "position_covariance_type": {"type": "integer"},
        },
    }
    with open(js, "wb") as f:
        w = Writer(f)
        w.start()
        sid = w.register_schema("foxglove.LocationFix", "jsonschema", json.dumps(schema).encode())
        cid = w.register_channel("/loc", "json", sid)
        for t, lat, lon, alt, e, n in fx:
            m = {
                "latitude": lat,
                "longitude": lon,
                "altitude": alt,
                "position_covariance": [e, 0, 0, 0, n, 0, 0, 0, 1],
                "position_covariance_type": 2,
            }
            w.add_message(cid, log_time=t, publish_time=t, data=json.dumps(m).encode())
        w.finish()
    print(json.dumps(fx))


main(sys.argv[1], sys.argv[2])
