//! Session ids (time-ordered, UUIDv7 layout) and entry ids (8 hex chars), as pi makes them.

use crate::message::now_ms;

/// A new session id: a UUIDv7 (48-bit millisecond clock, then random bits), so ids sort by
/// creation time. No uuid crate is needed for this layout.
pub fn new_session_id() -> String {
    let ms = (now_ms().max(0) as u64) & 0xFFFF_FFFF_FFFF;
    uuid_v7(ms, fastrand::u16(..), fastrand::u64(..))
}

fn uuid_v7(ms: u64, rand_a: u16, rand_b: u64) -> String {
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        ms >> 16,
        ms & 0xFFFF,
        0x7000 | (rand_a & 0x0FFF),
        0x8000 | ((rand_b >> 48) & 0x3FFF),
        rand_b & 0xFFFF_FFFF_FFFF
    )
}

/// True when `id` may name a session: pi's `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
///
/// The id becomes part of a file name, so this also keeps path separators out of it.
pub fn is_valid_session_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A new entry id: 8 random hex chars not yet `taken`; after 100 collisions a full UUID.
pub(crate) fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = format!("{:08x}", fastrand::u32(..));
        if !taken(&id) {
            return id;
        }
    }
    new_session_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_v7_layout() {
        let id = uuid_v7(0x0123_4567_89AB, 0xFFFF, u64::MAX);
        assert_eq!(id, "01234567-89ab-7fff-bfff-ffffffffffff");
        let id = new_session_id();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
        assert!(is_valid_session_id(&id));
    }

    #[test]
    fn session_ids_sort_by_time() {
        let a = uuid_v7(1_700_000_000_000, 0xFFF, u64::MAX);
        let b = uuid_v7(1_700_000_000_001, 0, 0);
        assert!(a < b);
    }

    #[test]
    fn custom_id_rule() {
        for ok in ["a", "A1", "my-session_1.2", "0"] {
            assert!(is_valid_session_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", ".a", "a/b", "a b", "é", "../x"] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
    }

    #[test]
    fn entry_ids_avoid_taken() {
        let id = new_entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        // Everything 8 chars long is taken: falls back to a full UUID.
        let id = new_entry_id(|c| c.len() == 8);
        assert_eq!(id.len(), 36);
    }
}
