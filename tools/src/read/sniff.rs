//! What a file is, judged from its first bytes: a supported image, binary data or text.

/// How many leading bytes decide whether a file is binary.
pub(super) const SNIFF_BYTES: usize = 8 * 1024;

/// Above this share of invalid UTF-8 bytes a file counts as binary. Random data without NULs
/// is roughly 45% invalid, while text in a legacy 8-bit encoding stays well below.
const MAX_INVALID_SHARE: f64 = 0.3;

/// The kind of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An image the model can see, with its MIME type.
    Image(&'static str),
    /// An animated PNG: pi does not send these as images (only the first frame would show).
    AnimatedPng,
    /// Not text.
    Binary,
    /// Text, possibly with some invalid UTF-8.
    Text,
}

/// Classify a file from its first (up to [`SNIFF_BYTES`]) bytes.
pub(super) fn classify(head: &[u8]) -> Kind {
    if let Some(kind) = image_kind(head) {
        return kind;
    }
    if head.contains(&0) {
        return Kind::Binary;
    }
    let invalid: usize = head.utf8_chunks().map(|c| c.invalid().len()).sum();
    if invalid as f64 > head.len() as f64 * MAX_INVALID_SHARE {
        Kind::Binary
    } else {
        Kind::Text
    }
}

/// The image formats pi sends to models, by magic bytes.
fn image_kind(head: &[u8]) -> Option<Kind> {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
    if head.starts_with(PNG) {
        return Some(if is_animated_png(&head[PNG.len()..]) {
            Kind::AnimatedPng
        } else {
            Kind::Image("image/png")
        });
    }
    // FF D8 FF F7 is JPEG-LS, which models do not accept.
    if head.starts_with(b"\xFF\xD8\xFF") && head.get(3) != Some(&0xF7) {
        return Some(Kind::Image("image/jpeg"));
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some(Kind::Image("image/gif"));
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        return Some(Kind::Image("image/webp"));
    }
    None
}

/// An APNG declares an `acTL` chunk before its first `IDAT`; walk the chunks that fit in the
/// sniffed bytes.
fn is_animated_png(chunks: &[u8]) -> bool {
    let mut rest = chunks;
    while rest.len() >= 8 {
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        match &rest[4..8] {
            b"acTL" => return true,
            b"IDAT" => return false,
            _ => {}
        }
        // Length, type, data and CRC.
        let Some(next) = len.checked_add(12) else {
            return false;
        };
        rest = rest.get(next..).unwrap_or_default();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
        let mut v = (data.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(kind);
        v.extend_from_slice(data);
        v.extend_from_slice(&[0; 4]);
        v
    }

    #[test]
    fn animation_counts_only_before_the_first_image_data() {
        let sig = b"\x89PNG\r\n\x1a\n".to_vec();
        let ihdr = chunk(b"IHDR", &[0; 13]);
        let actl = chunk(b"acTL", &[0; 8]);
        let idat = chunk(b"IDAT", &[0; 4]);
        let still = [sig.clone(), ihdr.clone(), idat.clone(), actl.clone()].concat();
        let anim = [sig.clone(), ihdr.clone(), actl, idat].concat();
        assert_eq!(classify(&still), Kind::Image("image/png"));
        assert_eq!(classify(&anim), Kind::AnimatedPng);
        // A chunk length pointing past the sniffed bytes ends the walk.
        let huge = [sig, chunk(b"IHDR", &[0; 13])[..4].to_vec(), vec![0xFF; 8]].concat();
        assert_eq!(classify(&huge), Kind::Image("image/png"));
    }

    #[test]
    fn magic_bytes_binary_and_text() {
        assert_eq!(classify(b"\xFF\xD8\xFF\xE0rest"), Kind::Image("image/jpeg"));
        assert_ne!(classify(b"\xFF\xD8\xFF\xF7rest"), Kind::Image("image/jpeg"));
        assert_eq!(classify(b"GIF87a\x01\0\x01\0"), Kind::Image("image/gif"));
        assert_eq!(classify(b"GIF90a"), Kind::Text);
        assert_eq!(classify(b"RIFF\0\0\0\0WEBPVP8 "), Kind::Image("image/webp"));
        assert_eq!(classify(b"RIFF\0\0\0\0WAVEfmt "), Kind::Binary);
        assert_eq!(classify(b""), Kind::Text);
        assert_eq!(classify("plain ascii and ünïcödé\n".as_bytes()), Kind::Text);
        assert_eq!(classify(b"a\0b"), Kind::Binary);
        // 3 of 10 bytes invalid is still text; 4 of 10 is binary.
        assert_eq!(classify(b"abcdefg\xff\xfe\xfd"), Kind::Text);
        assert_eq!(classify(b"abcdef\xff\xfe\xfd\xfc"), Kind::Binary);
    }
}
