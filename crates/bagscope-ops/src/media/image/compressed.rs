//! Compressed images: jpeg and png recognised from their bytes (the format string is often
//! wrong), `compressedDepth`, decoding with allocation limits; and the encoders the demo, the
//! fixtures and `bagscope image` write with.

use std::io::Cursor;

use super::{Image, ImageError, Pixels, MAX_DECODE_ALLOC, MAX_PIXELS};

/// What a compressed image's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compressed {
    /// JPEG (starts FF D8 FF).
    Jpeg,
    /// PNG.
    Png,
    /// `compressedDepth`: a 12-byte header (format, two depth quantisation floats), then PNG.
    CompressedDepth,
}

pub(super) const PNG_MAGIC: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Recognises a compressed image from its bytes (the format string is often wrong).
pub fn sniff(data: &[u8]) -> Option<Compressed> {
    if data.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Compressed::Jpeg)
    } else if data.starts_with(&PNG_MAGIC) {
        Some(Compressed::Png)
    } else if data.get(12..20) == Some(&PNG_MAGIC[..]) {
        Some(Compressed::CompressedDepth)
    } else {
        None
    }
}

pub(super) fn decode_image_bytes(
    data: &[u8],
    format: image::ImageFormat,
) -> Result<image::DynamicImage, ImageError> {
    let mut r = image::ImageReader::with_format(Cursor::new(data), format);
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    limits.max_image_width = Some(1 << 16);
    limits.max_image_height = Some(1 << 16);
    r.limits(limits);
    r.decode().map_err(|e| ImageError::Codec(e.to_string()))
}

pub(super) fn from_dynamic(d: image::DynamicImage, encoding: String) -> Result<Image, ImageError> {
    let (width, height) = (d.width(), d.height());
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError::Size(format!("{width} × {height} is too large")));
    }
    let pixels = match d {
        image::DynamicImage::ImageLuma8(b) => Pixels::Mono8(b.into_raw()),
        image::DynamicImage::ImageLuma16(b) => Pixels::U16(b.into_raw()),
        other => Pixels::Rgba(other.into_rgba8().into_raw()),
    };
    Ok(Image {
        width,
        height,
        encoding,
        pixels,
        map: None,
    })
}

/// Decodes a `CompressedImage`'s data; `format` (`jpeg`, `png`, `16UC1; compressedDepth png`,
/// `bgr8; jpeg compressed bgr8`) only says how to read a compressedDepth image's values.
pub fn decode_compressed(format: &str, data: &[u8]) -> Result<Image, ImageError> {
    match sniff(data) {
        Some(Compressed::Jpeg) => from_dynamic(
            decode_image_bytes(data, image::ImageFormat::Jpeg)?,
            "jpeg".into(),
        ),
        Some(Compressed::Png) => from_dynamic(
            decode_image_bytes(data, image::ImageFormat::Png)?,
            "png".into(),
        ),
        Some(Compressed::CompressedDepth) => {
            let f32_at = |o: usize| {
                let b = &data[o..o + 4];
                f32::from_le_bytes([b[0], b[1], b[2], b[3]])
            };
            let (qa, qb) = (f32_at(4), f32_at(8));
            let img = from_dynamic(
                decode_image_bytes(&data[12..], image::ImageFormat::Png)?,
                String::new(),
            )?;
            let Pixels::U16(raw) = img.pixels else {
                return Err(ImageError::Unsupported(
                    "compressedDepth png is not 16-bit grey".into(),
                ));
            };
            let depth_enc = format.split([';', ' ']).next().unwrap_or("").trim();
            let pixels = if depth_enc == "32FC1" {
                // Inverse depth quantisation, as compressed_depth_image_transport writes it.
                Pixels::F32(
                    raw.iter()
                        .map(|&v| {
                            if v == 0 {
                                f32::NAN
                            } else {
                                qa / (f32::from(v) - qb)
                            }
                        })
                        .collect(),
                )
            } else {
                Pixels::U16(raw)
            };
            let enc = if depth_enc.is_empty() {
                "16UC1"
            } else {
                depth_enc
            };
            Ok(Image {
                encoding: format!("{enc} compressedDepth png"),
                pixels,
                ..img
            })
        }
        None => {
            let head: Vec<String> = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
            Err(ImageError::Unsupported(format!(
                "format {format:?}: the data is neither jpeg nor png (starts {})",
                head.join(" ")
            )))
        }
    }
}

/// Writes RGBA pixels as a PNG file's bytes.
pub fn encode_png(w: u32, h: u32, rgba: &[u8]) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut out),
        rgba,
        w,
        h,
        image::ExtendedColorType::Rgba8,
    )
    .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}

/// Writes RGB pixels as JPEG bytes (the demo's compressed camera, test fixtures).
pub fn encode_jpeg(w: u32, h: u32, rgb: &[u8], quality: u8) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode(rgb, w, h, image::ExtendedColorType::Rgb8)
        .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}

/// Writes 16-bit grey pixels as PNG bytes (compressedDepth fixtures).
pub fn encode_png16(w: u32, h: u32, grey: &[u16]) -> Result<Vec<u8>, ImageError> {
    // The encoder takes 16-bit samples in native byte order.
    let mut be = Vec::with_capacity(grey.len() * 2);
    for v in grey {
        be.extend_from_slice(&v.to_ne_bytes());
    }
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut out),
        &be,
        w,
        h,
        image::ExtendedColorType::L16,
    )
    .map_err(|e| ImageError::Encode(e.to_string()))?;
    Ok(out)
}
