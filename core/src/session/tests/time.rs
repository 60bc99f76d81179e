use super::*;

#[test]
fn formats_like_to_iso_string() {
    assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
    // The bashExecution message of the fixture: its ms timestamp and its entry's ISO one.
    assert_eq!(format_iso_ms(1_765_238_302_057), "2025-12-08T23:58:22.057Z");
    assert_eq!(format_iso_ms(1_709_164_800_000), "2024-02-29T00:00:00.000Z");
    assert_eq!(format_iso_ms(-1), "1969-12-31T23:59:59.999Z");
}

#[test]
fn parses_what_it_formats() {
    for ms in [
        0,
        1,
        951_782_400_000,
        1_765_238_302_057,
        4_102_444_800_000,
        -86_400_001,
    ] {
        assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms), "{ms}");
    }
    assert!(parse_iso_ms(&now_iso()).is_some());
}

#[test]
fn parses_other_iso_forms() {
    assert_eq!(parse_iso_ms("1970-01-02"), Some(86_400_000));
    assert_eq!(parse_iso_ms("1970-01-01T01:00:00+01:00"), Some(0));
    assert_eq!(parse_iso_ms("1970-01-01T00:00:00.5Z"), Some(500));
    assert_eq!(parse_iso_ms("1970-01-01T00:00:00.123456Z"), Some(123));
    assert_eq!(parse_iso_ms("1970-01-01T00:01Z"), Some(60_000));
}

#[test]
fn rejects_garbage_without_panicking() {
    for bad in [
        "",
        "yesterday",
        "2025-13-01",
        "2025-01-01T25:00:00Z",
        "2025-01-01T00:00:00.Z",
        "2025-01-01T00:00:00Zjunk",
        "2025-01-01T",
        "é",
    ] {
        assert_eq!(parse_iso_ms(bad), None, "{bad}");
    }
}
