//! What every decoder target checks of a compiled plan and a message: decoding returns (to
//! JSON, which must parse), `validates` agrees with it, and every field path's extractor
//! returns, giving what decoding the whole message gives where that decodes.

use bagscope_reader::encoding::{leaf_paths, to_json, Extractor, FieldPath, Plan};

pub fn check_plan(plan: &Plan, msg: &[u8]) {
    let decoded = plan.decode(msg);
    assert_eq!(plan.validates(msg), decoded.is_ok());
    if let Ok(node) = &decoded {
        let mut s = String::new();
        to_json(&plan.def, &node.value, &mut s);
        let _: serde_json::Value = serde_json::from_str(&s).expect("to_json writes JSON");
    }
    // Every primitive field (arrays at their last element), a few levels deep.
    for p in leaf_paths(&plan.def, "", -1, (4, 64), &|_| true) {
        if let Ok(fp) = FieldPath::parse(&p) {
            if let Ok(ex) = Extractor::new(plan, &fp.segments) {
                let v = ex.extract(msg);
                // Compared as printed: NaN is a value here.
                if decoded.is_ok() {
                    let w = ex.extract_decoded(msg);
                    assert_eq!(format!("{v:?}"), format!("{w:?}"), "{p}");
                }
            }
        }
    }
}
