//! Protobuf and JSON messages with their schemas from arbitrary bytes. The first byte selects:
//! even, a protobuf `FileDescriptorSet` (its length in the next two bytes, little-endian) whose
//! first message type is the root, then a message; odd, a JSON Schema text, a 0 byte, then a
//! JSON message. Compiling, decoding (to JSON, which must parse) and every numeric field path's
//! extractor must return, never panic; `validates` agrees with `decode`.
#![no_main]

use bagscope_reader::encoding::Plan;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let (plan, msg) = if sel % 2 == 0 {
        let Some(n) = rest
            .get(..2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
        else {
            return;
        };
        let Some(set) = rest.get(2..2 + n) else {
            return;
        };
        let msg = &rest[2 + n..];
        let Some(root) = bagscope_reader::encoding::protobuf::message_types(set)
            .into_iter()
            .next()
        else {
            return;
        };
        match Plan::protobuf(set, &root) {
            Ok(p) => (p, msg),
            Err(_) => return,
        }
    } else {
        let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let Ok(text) = std::str::from_utf8(&rest[..split]) else {
            return;
        };
        match Plan::json(text, "Fuzz") {
            Ok(p) => (p, rest.get(split + 1..).unwrap_or(&[])),
            Err(_) => return,
        }
    };
    common::check_plan(&plan, msg);
});
