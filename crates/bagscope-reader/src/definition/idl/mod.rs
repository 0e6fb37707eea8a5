//! OMG IDL 4 schemas, as rosbag2 stores them (`ros2idl`: rosidl's generated `.idl` text, the
//! root type first and each dependency after a `====` line and an `IDL: pkg/msg/Type` line) and
//! as eProsima's DDS recorder and Foxglove's tools write them (`omgidl`: one text of modules
//! and structs, the root named by the schema).
//!
//! The text is compiled into the same [`MsgDef`] model as a `.msg` definition, so every
//! operation works on such channels; messages are CDR as for `ros2msg`. What is read:
//! modules (reopened freely), structs (forward declarations, nested use), typedefs (of arrays
//! and sequences too), enums (with `@value` and `@bit_bound`), constants (rosidl's
//! `Type_Constants` modules become the type's constants), sequences bounded or not, strings
//! bounded or not, fixed arrays of any rank, every integer and float spelling, and names
//! scoped from anywhere (`::pkg::msg::T`, `msg::T`, `T`). Comments, preprocessor lines
//! (`#include`, `#pragma`) and annotations are passed over; `@optional` and `@mutable` change
//! the wire format and are refused, as are unions, `wchar`/`wstring`, `fixed` and `any`.

use std::collections::HashMap;

mod compile;
mod lexer;
mod parser;

use compile::{type_name, Compiler, Scope};
use lexer::Lexer;
use parser::{Decl, Item, Parser};

use super::msg::{ArrayKind, Constant, Field, FieldType, MsgDef, MsgType, Primitive};
use crate::error::DefError;

/// Deepest nesting of modules and of typedefs resolving through each other.
const MAX_DEPTH: usize = 64;
/// Largest fixed array (elements) a schema may declare.
const MAX_FIXED: u64 = 1 << 28;

/// Parses an IDL schema and compiles the type named `datatype` (`pkg/msg/Type`,
/// `pkg::msg::Type` or `Type`) with every type it uses.
///
/// ```
/// let idl = "module geo { struct Point { double x; double y; }; \
///            struct Path { sequence<Point, 100> points; string<16> frame; }; };";
/// let def = bagscope_reader::definition::idl::parse("geo::Path", idl).unwrap();
/// let f: Vec<&str> = def.root().fields.iter().map(|f| f.type_text.as_str()).collect();
/// assert_eq!(f, ["geo/Point[<=100]", "string<=16"]);
/// // A definition like a `.msg` one: it compiles into a plan that decodes CDR.
/// let plan = bagscope_reader::encoding::Plan::new_cdr(def);
/// let cdr = [0, 1, 0, 0, /* no points */ 0, 0, 0, 0, /* "map" */ 4, 0, 0, 0, b'm', b'a', b'p', 0];
/// let mut json = String::new();
/// bagscope_reader::encoding::to_json(&plan.def, &plan.decode(&cdr).unwrap().value, &mut json);
/// assert_eq!(json, r#"{"points": [], "frame": "map"}"#);
/// ```
pub fn parse(datatype: &str, text: &str) -> Result<MsgDef, DefError> {
    let toks = Lexer::tokens(text).map_err(|e| e.of(datatype))?;
    let mut p = Parser {
        toks,
        pos: 0,
        scope: Vec::new(),
        items: Vec::new(),
    };
    p.definitions(0).map_err(|e| e.of(datatype))?;
    if p.peek().is_some() {
        let found = p.describe();
        return Err(DefError::invalid(format!("unexpected {found}"))
            .of(datatype)
            .on_line(p.line()));
    }
    let items = p.items;
    let mut by_path: HashMap<Vec<String>, &Item> = HashMap::new();
    for it in &items {
        // A struct reopened or repeated in two sections keeps its first definition.
        by_path.entry(it.path.clone()).or_insert(it);
    }
    let root = find_root(&items, datatype)?;
    let mut c = Compiler {
        datatype,
        scope: Scope { items: by_path },
        order: Vec::new(),
        index: HashMap::new(),
    };
    c.struct_index(&root.path);
    let mut types: Vec<MsgType> = Vec::new();
    // Structs are numbered as they are first reached: the loop compiles each once.
    let mut k = 0;
    while k < c.order.len() {
        let path = c.order[k].clone();
        let fields = c.struct_fields(&path)?;
        let mut constants = fields.1;
        constants.extend(c.type_constants(&items, &path)?);
        types.push(MsgType {
            name: type_name(&path),
            fields: fields.0,
            constants,
        });
        k += 1;
    }
    let def = MsgDef {
        types,
        chars_are_text: true,
    };
    def.check_recursion()?;
    Ok(def)
}

/// The struct `datatype` names: by its full path, else without `msg`, else a unique match on
/// its last parts, else the schema's only struct.
fn find_root<'i>(items: &'i [Item], datatype: &str) -> Result<&'i Item, DefError> {
    let structs: Vec<&Item> = items
        .iter()
        .filter(|i| matches!(i.decl, Decl::Struct { .. }))
        .collect();
    let want: Vec<String> = datatype
        .replace("::", "/")
        .replace('.', "/")
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let norm = |p: &[String]| -> Vec<String> {
        p.iter().filter(|s| s.as_str() != "msg").cloned().collect()
    };
    structs
        .iter()
        .find(|s| s.path == want)
        .or_else(|| structs.iter().find(|s| norm(&s.path) == norm(&want)))
        .or_else(|| {
            // A name without its package (or with another prefix, `fastdds/`): a unique match
            // on the last parts.
            let tail: Vec<&&Item> = structs
                .iter()
                .filter(|s| {
                    let n = norm(&s.path);
                    let w = norm(&want);
                    n.ends_with(&w) || w.ends_with(&n)
                })
                .collect();
            match tail[..] {
                [one] => Some(one),
                _ => None,
            }
        })
        .or_else(|| match structs[..] {
            [ref one] => Some(one),
            _ => None,
        })
        .copied()
        .ok_or_else(|| {
            let names: Vec<String> = structs.iter().map(|s| s.path.join("::")).collect();
            DefError::invalid(format!(
                "the schema defines no struct named {datatype} (structs: {})",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ))
            .of(datatype)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMU: &str = r#"// generated from rosidl_adapter/resource/msg.idl.em
// with input from sensor_msgs/msg/Imu.msg
// generated code does not contain a copyright notice

#include "geometry_msgs/msg/Quaternion.idl"
#include "std_msgs/msg/Header.idl"

module sensor_msgs {
  module msg {
    typedef double double__9[9];
    @verbatim (language="comment", text=
      "This is a message to hold data from an IMU")
    struct Imu {
      std_msgs::msg::Header header;

      geometry_msgs::msg::Quaternion orientation;

      double__9 orientation_covariance;
    };
  };
};

================================================================================
IDL: std_msgs/msg/Header
module std_msgs { module msg {
  struct Header {
    builtin_interfaces::msg::Time stamp;
    string frame_id;
  };
}; };
================================================================================
IDL: builtin_interfaces/msg/Time
module builtin_interfaces { module msg {
  struct Time { int32 sec; uint32 nanosec; };
}; };
================================================================================
IDL: geometry_msgs/msg/Quaternion
module geometry_msgs { module msg {
  struct Quaternion {
    @default (value=0.0)
    double x;
    @default (value=0.0)
    double y;
    double z;
    @default (value=1.0)
    double w;
  };
}; };
"#;

    #[test]
    fn rosidl_imu_with_dependencies() {
        let d = parse("sensor_msgs/msg/Imu", IMU).unwrap();
        let names: Vec<&str> = d.types.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sensor_msgs/msg/Imu",
                "std_msgs/msg/Header",
                "geometry_msgs/msg/Quaternion",
                "builtin_interfaces/msg/Time"
            ]
        );
        let f = &d.types[0].fields;
        assert_eq!(f[2].type_text, "float64[9]");
        assert_eq!(f[2].array, ArrayKind::Fixed(9));
        assert_eq!(f[1].ty, FieldType::Message(2));
        assert_eq!(
            d.types[3].fields[1].ty,
            FieldType::Primitive(Primitive::U32)
        );
    }

    #[test]
    fn omgidl_constructs() {
        let text = r#"
module fastdds { module demo {
  const long MAX = 4;
  const string GREETING = "hi";
  @bit_bound(8) enum Small { @value(3) A, B };
  enum Mode { OFF, ON = 5, AUTO };
  typedef sequence<double, MAX> Row;
  struct Inner { @key unsigned long id; char c; };
  struct Outer {
    Inner inner;
    sequence<Inner> many, more;
    string<10> name;
    Row row;
    long grid[2][3];
    Mode mode;
    Small small;
    unsigned long long big; long long neg; unsigned short us; short s;
    octet o; boolean b; float f; double d; int8 i8; uint64 u64;
  };
}; };
module Outer_Constants { const long X = 1; };
"#;
        let d = parse("fastdds/demo/Outer", text).unwrap();
        let t = &d.types[0];
        let tt: Vec<(&str, &str)> = t
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.type_text.as_str()))
            .collect();
        assert_eq!(
            tt[..7],
            [
                ("inner", "fastdds/demo/Inner"),
                ("many", "fastdds/demo/Inner[]"),
                ("more", "fastdds/demo/Inner[]"),
                ("name", "string<=10"),
                ("row", "float64[<=4]"),
                ("grid", "int32[6]"),
                ("mode", "enum Mode"),
            ]
        );
        assert_eq!(t.fields[7].ty, FieldType::Primitive(Primitive::U8));
        let c: Vec<(&str, &str, &str)> = t
            .constants
            .iter()
            .map(|c| (c.type_text.as_str(), c.name.as_str(), c.value.as_str()))
            .collect();
        assert_eq!(
            c,
            [
                ("enum Mode", "OFF", "0"),
                ("enum Mode", "ON", "5"),
                ("enum Mode", "AUTO", "6"),
                ("enum Small", "A", "3"),
                ("enum Small", "B", "4"),
            ]
        );
        // Without the prefix, and by the short name.
        assert!(parse("demo::Outer", text).is_ok());
        assert!(parse("Outer", text).is_ok());
    }

    #[test]
    fn rosidl_constants_and_bounded_types() {
        let text = r#"
module pkg { module msg {
  module State_Constants {
    const uint8 IDLE = 0;
    const uint8 BUSY = 1 + 1;
    const string NAME = "state";
    const double HALF = 0.5;
    const boolean YES = TRUE;
  };
  struct State {
    uint8 state;
    sequence<string<5>, 3> tags;
  };
  struct Empty { uint8 structure_needs_at_least_one_member; };
}; };
"#;
        let d = parse("pkg/msg/State", text).unwrap();
        let c: Vec<(&str, &str)> = d.types[0]
            .constants
            .iter()
            .map(|c| (c.name.as_str(), c.value.as_str()))
            .collect();
        assert_eq!(
            c,
            [
                ("IDLE", "0"),
                ("BUSY", "2"),
                ("NAME", "state"),
                ("HALF", "0.5"),
                ("YES", "1")
            ]
        );
        assert_eq!(d.types[0].fields[1].type_text, "string<=5[<=3]");
        assert_eq!(d.types.len(), 1);
        // Constant expressions bind as in C; `>>` closes two angle brackets.
        let t = parse(
            "m/T",
            "module m { const long A = 1 + 2 * 3; const long B = (1 << 2) | 1; const long C = A - B / 5;\n struct T { sequence<string<5>> s; sequence<long, A> x; long y[C]; }; };",
        )
        .unwrap();
        let f: Vec<&str> = t.types[0]
            .fields
            .iter()
            .map(|f| f.type_text.as_str())
            .collect();
        assert_eq!(f, ["string<=5[]", "int32[<=7]", "int32[6]"]);
        // rosidl's member of an empty message is no field.
        let e = parse("pkg/msg/Empty", text).unwrap();
        assert!(e.types[0].fields.is_empty());
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = parse("a/B", "module a { struct B { wstring w; }; };").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.reason.contains("wstring is not supported"), "{e}");
        let e = parse("a/B", "module a {\n struct B { long x };\n};").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.reason.contains("expected a name") || e.reason.contains("expected `;`"),
            "{e}"
        );
        let e = parse("a/B", "module a { struct B { C c; }; };").unwrap_err();
        assert!(e.reason.contains("type C is not defined"), "{e}");
        let e = parse(
            "a/B",
            "module a { union U switch (long) { case 1: long x; }; };",
        )
        .unwrap_err();
        assert!(e.reason.contains("unions are not supported"), "{e}");
        let e = parse("a/B", "module a { struct B { @optional long x; }; };").unwrap_err();
        assert!(e.reason.contains("@optional"), "{e}");
        let e = parse(
            "a/Z",
            "module a { struct B { long x; }; struct C { long y; }; };",
        )
        .unwrap_err();
        assert!(
            e.reason
                .contains("no struct named a/Z (structs: a::B, a::C)"),
            "{e}"
        );
        let e = parse("a/B", "module a { struct B { B b; }; };").unwrap_err();
        assert!(
            e.to_string().contains("recurs") || e.to_string().contains("itself"),
            "{e}"
        );
        // Deep nesting and garbage never panic.
        let deep = "module a {".repeat(200);
        assert!(parse("a/B", &deep).is_err());
        assert!(parse("a/B", "struct B { long x[99999999999]; };").is_err());
        assert!(parse("a/B", "\"unclosed").is_err());
    }
}
