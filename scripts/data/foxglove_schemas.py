#!/usr/bin/env python3
"""Writes crates/bagscope-ops/data/foxglove_schemas.json: Foxglove's message schemas
(`foxglove.SceneUpdate`, `foxglove.RawImage`, ...) as JSON Schemas, for message scripts whose
output type is one of them (docs/scripts.md). Their virtual topics are written as JSON messages
with these schemas (MCAP `json` / `jsonschema`), which Foxglove's and bagscope's readers decode.

The fields are those of the `foxglove-schemas-protobuf` package (MIT), read from its compiled
descriptors and written in the JSON form Foxglove uses for its schemas: times and durations as
`{sec, nsec}`, bytes as base64 strings, enums as integers with their named values, repeated
fields as arrays, nested messages inline.

    pip install foxglove-schemas-protobuf==0.4.0 && python3 scripts/data/foxglove_schemas.py
"""
import importlib
import json
import pathlib
import pkgutil

import foxglove_schemas_protobuf
from google.protobuf.descriptor import FieldDescriptor as F

VERSION = "0.4.0"
OUT = pathlib.Path(__file__).resolve().parents[2] / "crates" / "bagscope-ops" / "data" / "foxglove_schemas.json"

SCALARS = {
    F.TYPE_DOUBLE: {"type": "number"},
    F.TYPE_FLOAT: {"type": "number"},
    F.TYPE_BOOL: {"type": "boolean"},
    F.TYPE_STRING: {"type": "string"},
    F.TYPE_BYTES: {"type": "string", "contentEncoding": "base64"},
}
UNSIGNED = {F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_FIXED32, F.TYPE_FIXED64}
SIGNED = {F.TYPE_INT32, F.TYPE_INT64, F.TYPE_SFIXED32, F.TYPE_SFIXED64, F.TYPE_SINT32, F.TYPE_SINT64}


def time_schema(duration):
    sec = {"type": "integer"} if duration else {"type": "integer", "minimum": 0}
    return {
        "type": "object",
        "title": "duration" if duration else "time",
        "properties": {"sec": sec, "nsec": {"type": "integer", "minimum": 0, "maximum": 999999999}},
    }


def field_schema(f, depth):
    if f.type == F.TYPE_MESSAGE:
        name = f.message_type.full_name
        if name == "google.protobuf.Timestamp":
            s = time_schema(False)
        elif name == "google.protobuf.Duration":
            s = time_schema(True)
        else:
            s = message_schema(f.message_type, depth + 1)
    elif f.type == F.TYPE_ENUM:
        s = {
            "type": "integer",
            "title": f.enum_type.full_name,
            "oneOf": [{"title": v.name, "const": v.number} for v in f.enum_type.values],
        }
    elif f.type in SCALARS:
        s = dict(SCALARS[f.type])
    elif f.type in UNSIGNED:
        s = {"type": "integer", "minimum": 0}
    elif f.type in SIGNED:
        s = {"type": "integer"}
    else:
        raise ValueError(f"{f.full_name}: protobuf type {f.type}")
    if f.is_repeated:
        return {"type": "array", "items": s}
    return s


def message_schema(d, depth=0):
    if depth > 16:
        raise ValueError(f"{d.full_name}: nested too deep")
    return {
        "title": d.full_name,
        "type": "object",
        "properties": {f.name: field_schema(f, depth) for f in d.fields},
    }


def main():
    schemas = {}
    for m in pkgutil.iter_modules(foxglove_schemas_protobuf.__path__):
        if not m.name.endswith("_pb2"):
            continue
        mod = importlib.import_module(f"foxglove_schemas_protobuf.{m.name}")
        for d in mod.DESCRIPTOR.message_types_by_name.values():
            schemas[d.full_name] = message_schema(d)
    doc = {
        "source": f"foxglove-schemas-protobuf {VERSION} (MIT), written by scripts/data/foxglove_schemas.py",
        "schemas": dict(sorted(schemas.items())),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{OUT}: {len(schemas)} schemas")


if __name__ == "__main__":
    main()
