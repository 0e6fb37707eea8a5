//! The packet-to-frame path of compressed video on arbitrary bytes: the first byte picks the
//! codec, the rest is an Annex B stream cut into access units as a recorder would, each
//! unit's headers read (codec, keyframe, sequence parameters) and decoded in turn, every
//! picture turned into RGB. Never a panic or a hang; a decoder error is an answer.
#![no_main]

use bagscope_ops::media::video::{decoder_for, nal, Codec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let codec = if first & 1 == 0 {
        Codec::H264
    } else {
        Codec::H265
    };
    let _ = nal::sniff(stream);
    let seq = nal::seq_info(codec, stream).unwrap_or_default();
    let mut dec = decoder_for(codec, seq);
    let mut out = Vec::new();
    for (i, au) in nal::access_units(codec, stream).into_iter().enumerate() {
        let _ = nal::kind(codec, au);
        if dec.push(au, i as i64, &mut out).is_err() {
            break;
        }
    }
    dec.flush(&mut out);
    for f in &out {
        let rgba = f.to_rgba();
        assert_eq!(rgba.len(), f.width * f.height * 4);
    }
});
