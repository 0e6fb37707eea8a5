//! ROS 2 definitions and CDR messages from arbitrary bytes: the input is a `ros2msg` text, a 0
//! byte, then a CDR message (with its encapsulation header). Parsing, compiling, decoding (to
//! JSON, which must parse), `validates` and every numeric field path's extractor must return,
//! never panic; where the message decodes, each extractor gives the value decoding gives.
#![no_main]

use bagscope_reader::definition::msg::{Dialect, MsgDef};
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
    let Ok(def) = MsgDef::parse_dialect("fuzz/msg/Msg", text, Dialect::Ros2) else {
        return;
    };
    common::check_plan(&Plan::new_cdr(def), msg);
});
