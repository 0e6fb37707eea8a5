//! Pictures into AV1 ([`bagscope_av1enc`]), and the sequence header the MP4's `av1C` repeats.

pub use bagscope_av1enc::{rgb_to_yuv420, Av1Encoder, Av1Unit};

/// The sequence header OBU of the first unit that has one.
pub fn sequence_header(units: &[Av1Unit]) -> Option<Vec<u8>> {
    units
        .iter()
        .find_map(|u| super::obu::sequence_header(&u.data).map(<[u8]>::to_vec))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The encoder crate's own checks (its library is not built a second time as a test: see
    // crates/bagscope-av1enc/Cargo.toml).
    #[test]
    fn grey_and_primaries_are_bt601_limited_range() {
        let (y, u, v) = rgb_to_yuv420(&[0, 0, 0, 255, 255, 255], 2, 1);
        assert_eq!((y, u, v), (vec![16, 235], vec![128], vec![128]));
        let (y, u, v) = rgb_to_yuv420(&[255, 0, 0], 1, 1);
        assert_eq!((y[0], u[0], v[0]), (81, 90, 240));
    }

    #[test]
    fn sizes_and_lengths_are_checked() {
        assert!(Av1Encoder::new(8, 16, 10, 1, 100).is_err());
        let mut e = Av1Encoder::new(16, 16, 10, 1, 100).expect("encoder");
        assert!(e.push(&[0; 5]).unwrap_err().contains("768 expected"));
    }

    #[test]
    fn encoded_pictures_decode_to_what_was_encoded() {
        let (w, h) = (64, 48);
        let mut enc = Av1Encoder::new(w, h, 10, 1, 40).expect("encoder");
        let pics: Vec<Vec<u8>> = (0..4)
            .map(|k| {
                (0..w * h)
                    .flat_map(|i| {
                        let (x, y) = (i % w, i / w);
                        [(x * 4) as u8, (y * 5) as u8, (k * 40 + 20) as u8]
                    })
                    .collect()
            })
            .collect();
        for p in &pics {
            enc.push(p).expect("push");
        }
        let units = enc.finish().expect("finish");
        assert_eq!(units.len(), 4);
        assert!(units[0].key);
        let header = sequence_header(&units).expect("a sequence header");
        let sh =
            super::super::obu::parse_sequence_header(super::super::obu::obus(&header)[0].payload)
                .expect("a sequence header");
        assert_eq!(sh.profile, 0);
        let mut dec = super::super::decoder_for(super::super::Codec::Av1, Default::default());
        let mut shown = Vec::new();
        for (i, u) in units.iter().enumerate() {
            dec.push(&u.data, i as i64, &mut shown).expect("decodes");
        }
        dec.flush(&mut shown);
        assert_eq!(shown.len(), 4);
        for (f, p) in shown.iter().zip(&pics) {
            let rgba = f.to_rgba();
            let err: f64 = (0..w * h)
                .flat_map(|i| (0..3).map(move |c| (i, c)))
                .map(|(i, c)| (f64::from(rgba[i * 4 + c]) - f64::from(p[i * 3 + c])).abs())
                .sum::<f64>()
                / (w * h * 3) as f64;
            assert!(err < 4.0, "mean error {err} grey levels");
        }
    }
}
