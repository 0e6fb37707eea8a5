//! ROS 2 definitions and CDR messages from arbitrary bytes: the input is a `ros2msg` text, a 0
//! byte, then a CDR message (with its encapsulation header). Parsing, compiling, decoding (to
//! JSON, which must parse) and every numeric field path's extractor must return, never panic;
//! where the message decodes, each extractor gives the value decoding gives.
#![no_main]

use bagscope::encoding::{to_json, Extractor, FieldPath, Plan};
use bagscope::definition::msg::{Dialect, MsgDef};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let Ok(text) = std::str::from_utf8(&data[..split]) else {
        return;
    };
    let msg = data.get(split + 1..).unwrap_or(&[]);
    let Ok(def) = MsgDef::parse_dialect("fuzz/msg/Msg", text, Dialect::Ros2) else {
        return;
    };
    let plan = Plan::new_cdr(def);
    let decodes = plan.decode(msg).is_ok();
    if let Ok(node) = plan.decode(msg) {
        let mut s = String::new();
        to_json(&plan.def, &node.value, &mut s);
        let _: serde_json::Value = serde_json::from_str(&s).expect("to_json writes JSON");
    }
    // Every primitive field (arrays at their last element), a few levels deep.
    for p in bagscope::encoding::leaf_paths(&plan.def, "", -1, (4, 64), &|_| true) {
        if let Ok(fp) = FieldPath::parse(&p) {
            if let Ok(ex) = Extractor::new(&plan, &fp.segments) {
                let v = ex.extract(msg);
                // The walk to the field agrees with decoding the whole message where that
                // decodes (compared as printed: NaN is a value here).
                if decodes {
                    let w = ex.extract_decoded(msg);
                    assert_eq!(format!("{v:?}"), format!("{w:?}"), "{p}");
                }
            }
        }
    }
});
