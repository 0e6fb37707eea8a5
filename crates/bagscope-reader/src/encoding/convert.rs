//! What the conversions share: [`ConvertError`], and the one definition matcher that pairs a
//! source type's fields with a target type's by name and says which pairs convert. ROS 2 → ROS 1
//! ([`super::to_ros1`]), ROS 1 → ROS 2 ([`super::to_ros2`]) and the migration to a newer
//! definition ([`super::migrate`]) each give it their rules.

use crate::definition::msg::{normalize_type, ArrayKind, Field, FieldType, MsgDef, MsgType};
use crate::error::ConvertError;

/// The field of `fields` named `name`, or else the one named so but for ASCII case (ROS 2
/// lowercased some field names: `sensor_msgs/CameraInfo`'s `D`, `K`, `R`, `P` are `d`, `k`,
/// `r`, `p`), if only one is.
pub(crate) fn field_named(fields: &[Field], name: &str) -> Option<usize> {
    if let Some(i) = fields.iter().position(|f| f.name == name) {
        return Some(i);
    }
    let mut it = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name.eq_ignore_ascii_case(name));
    match (it.next(), it.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

/// A `seq` field of a Header type that the other side's type lacks (ROS 1's `Header.seq`,
/// which ROS 2 does not have).
pub(crate) fn is_header_seq(t: &MsgType, other: &MsgType, f: &Field) -> bool {
    f.name == "seq"
        && normalize_type(&t.name).ends_with("Header")
        && !other.fields.iter().any(|g| g.name == "seq")
}

/// How a conversion pairs fields.
pub(crate) struct Rules<'a> {
    /// The two sides as the errors name them (`ROS 2`, `ROS 1`).
    pub sides: (&'static str, &'static str),
    /// Fields are paired by exact name only (else also but for ASCII case, see
    /// [`field_named`]).
    pub exact_names: bool,
    /// ROS 1's `Header.seq` is left out where the other side has none.
    pub header_seq: bool,
    /// A source field the target lacks is dropped (and named) instead of refused.
    pub drop_missing: bool,
    /// A target field the source lacks takes its default (and is named) instead of refused.
    pub default_missing: bool,
    /// Fields are named `Type.field` in errors (else by their path from the message).
    pub by_type: bool,
    /// Array kinds that convert (source, target).
    pub arrays: fn(ArrayKind, ArrayKind) -> bool,
    /// Whether a source field type converts to a target field type, for every pair but two
    /// messages (which are matched field by field).
    pub leaf: &'a dyn Fn(&FieldType, &FieldType) -> bool,
}

impl<'a> Rules<'a> {
    /// The rules between ROS 1 and ROS 2 (`sides` in the direction of the conversion): fields
    /// paired by name but for ASCII case, ROS 1's `Header.seq` left out, nothing dropped or
    /// defaulted, arrays as they are; `leaf` says which other field types convert.
    pub(crate) fn between_ros(
        sides: (&'static str, &'static str),
        leaf: &'a dyn Fn(&FieldType, &FieldType) -> bool,
    ) -> Rules<'a> {
        Rules {
            sides,
            exact_names: false,
            header_seq: true,
            drop_missing: false,
            default_missing: false,
            by_type: false,
            arrays: same_arrays,
            leaf,
        }
    }
}

/// What a match found to leave out or fill in: `Type.field` names.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// Source fields the target drops.
    pub dropped: Vec<String>,
    /// Target fields the source lacks, written with their defaults.
    pub added: Vec<String>,
}

/// Matches type `s` of `src` with type `d` of `dst` under `rules`.
pub(crate) fn match_types(
    src: &MsgDef,
    s: usize,
    dst: &MsgDef,
    d: usize,
    rules: &Rules,
) -> Result<Changes, ConvertError> {
    let mut c = Changes::default();
    walk(src, s, dst, d, "", rules, &mut c, 0)?;
    Ok(c)
}

/// Deeper than any real definition: a guard against a cycle.
const MAX_DEPTH: usize = 64;

#[allow(clippy::too_many_arguments)]
fn walk(
    src: &MsgDef,
    s: usize,
    dst: &MsgDef,
    d: usize,
    path: &str,
    rules: &Rules,
    out: &mut Changes,
    depth: usize,
) -> Result<(), ConvertError> {
    let (st, dt) = (&src.types[s], &dst.types[d]);
    let (a, b) = rules.sides;
    if depth > MAX_DEPTH {
        return Err(ConvertError::at(path, "types nest too deeply"));
    }
    let name = |f: &str| {
        if rules.by_type {
            format!("{}.{f}", dt.name)
        } else {
            format!("{path}{f}")
        }
    };
    let find = |fields: &[Field], n: &str| {
        if rules.exact_names {
            fields.iter().position(|f| f.name == n)
        } else {
            field_named(fields, n)
        }
    };
    for f in &st.fields {
        if rules.header_seq && is_header_seq(st, dt, f) {
            continue;
        }
        if find(&dt.fields, &f.name).is_none() {
            if rules.drop_missing {
                out.dropped.push(format!("{}.{}", dt.name, f.name));
                continue;
            }
            return Err(ConvertError::at(
                name(&f.name),
                format!(
                    "{a} field of {} has no counterpart in {b} {}",
                    st.name, dt.name
                ),
            ));
        }
    }
    for g in &dt.fields {
        let Some(f) = find(&st.fields, &g.name).map(|i| &st.fields[i]) else {
            if rules.header_seq && is_header_seq(dt, st, g) {
                continue;
            }
            if rules.default_missing {
                out.added.push(format!("{}.{}", dt.name, g.name));
                continue;
            }
            return Err(ConvertError::at(
                name(&g.name),
                format!(
                    "{b} field of {} has no counterpart in {a} {}",
                    dt.name, st.name
                ),
            ));
        };
        let differ = || {
            ConvertError::at(
                name(&g.name),
                format!("{} in {a}, {} in {b}", f.type_text, g.type_text),
            )
        };
        if !(rules.arrays)(f.array, g.array) {
            return Err(differ());
        }
        match (&f.ty, &g.ty) {
            (FieldType::Message(i), FieldType::Message(j)) => {
                let here = format!("{path}{}.", g.name);
                walk(src, *i, dst, *j, &here, rules, out, depth + 1)?;
            }
            (x, y) if (rules.leaf)(x, y) => {}
            _ => return Err(differ()),
        }
    }
    Ok(())
}

/// Array kinds that convert as they are: scalar to scalar, sequence to sequence, a fixed
/// array to one of the same length.
pub(crate) fn same_arrays(a: ArrayKind, b: ArrayKind) -> bool {
    match (a, b) {
        (ArrayKind::Scalar, ArrayKind::Scalar) | (ArrayKind::Variable, ArrayKind::Variable) => true,
        (ArrayKind::Fixed(x), ArrayKind::Fixed(y)) => x == y,
        _ => false,
    }
}
