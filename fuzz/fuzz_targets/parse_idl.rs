//! OMG IDL schemas from arbitrary bytes (`ros2idl`, `omgidl`): the input is the root type's
//! name, a newline, the IDL text, a 0 byte, then a CDR message. Parsing and compiling must
//! return (a definition or an error with a line), never panic or hang; a definition compiles
//! into a plan that decodes the message (to JSON, which must parse) and whose every field
//! path's extractor gives what decoding the whole message gives where that decodes.
#![no_main]

use bagscope_reader::encoding::Plan;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let Ok(text) = std::str::from_utf8(&data[..split]) else {
        return;
    };
    let msg = data.get(split + 1..).unwrap_or(&[]);
    let (name, idl) = text.split_once('\n').unwrap_or(("", text));
    let def = match bagscope_reader::definition::idl::parse(name, idl) {
        Ok(d) => d,
        Err(e) => {
            assert!(!e.reason.is_empty());
            return;
        }
    };
    common::check_plan(&Plan::new_cdr(def), msg);
});
