//! Definitions and messages from arbitrary bytes: the input is a definition text, a 0 byte,
//! then message bytes. Parsing, md5, compiling, decoding (to JSON and YAML) and every numeric
//! field path's extractor must return, never panic, hang or allocate without bound.
#![no_main]

use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{to_json, to_yaml, Extractor, FieldPath, Plan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let Ok(text) = std::str::from_utf8(&data[..split]) else {
        return;
    };
    let msg = data.get(split + 1..).unwrap_or(&[]);
    let Ok(def) = MsgDef::parse("fuzz/Msg", text) else {
        return;
    };
    let plan = Plan::new(def);
    if let Ok(node) = plan.decode(msg) {
        let mut s = String::new();
        to_json(&plan.def, &node.value, &mut s);
        let _: serde_json::Value = serde_json::from_str(&s).expect("to_json writes JSON");
        s.clear();
        to_yaml(&plan.def, &node.value, 0, &mut s);
    }
    // Every primitive field (arrays at their last element), a few levels deep.
    for p in bagscope_reader::encoding::leaf_paths(&plan.def, "", -1, (4, 64), &|_| true) {
        if let Ok(fp) = FieldPath::parse(&p) {
            if let Ok(ex) = Extractor::new(&plan, &fp.segments) {
                let _ = ex.extract(msg);
            }
        }
    }
});
