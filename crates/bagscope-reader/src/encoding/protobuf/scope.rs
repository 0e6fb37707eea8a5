//! Protobuf's scoping of type names.

use std::collections::HashMap;

use super::{EnumDesc, MessageDesc};

/// Field type names written relative to their message (`Pose`, `google.protobuf.Timestamp`,
/// as protobufjs writes them), which `descriptor.proto` allows, made full (`.pkg.Pose`) by
/// protobuf's scoping: the innermost enclosing scope that has a type of that name wins. A name
/// that no scope has stays as written (and is reported as unknown where it is used).
pub(super) fn resolve_relative(msgs: &mut HashMap<String, MessageDesc>, enums: &[EnumDesc]) {
    let known = |n: &str, msgs: &HashMap<String, MessageDesc>| {
        msgs.contains_key(n) || enums.iter().any(|e| e.0 == n)
    };
    let names: Vec<String> = msgs.keys().cloned().collect();
    for me in names {
        let mut resolved = Vec::new();
        if let Some(desc) = msgs.get(&me) {
            for (i, f) in desc.fields.iter().enumerate() {
                if f.type_name.is_empty() || f.type_name.starts_with('.') {
                    continue;
                }
                // From the message's own scope outwards: `.a.b.M.N`, `.a.b.N`, `.a.N`, `.N`.
                let mut scope = me.as_str();
                loop {
                    let candidate = format!("{scope}.{}", f.type_name);
                    if known(&candidate, msgs) {
                        resolved.push((i, candidate));
                        break;
                    }
                    match scope.rfind('.') {
                        Some(k) => scope = &scope[..k],
                        None => break,
                    }
                }
            }
        }
        if let Some(desc) = msgs.get_mut(&me) {
            for (i, full) in resolved {
                desc.fields[i].type_name = full;
            }
        }
    }
}
