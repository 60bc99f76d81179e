use super::*;

use std::io::Write as _;
use std::os::unix::ffi::OsStrExt as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::test_support::{cancelled, chmod, permissions_enforced, run_tool, run_tool_with};

fn tool(dir: &Path) -> ReadTool {
    ReadTool::new(ToolContext::local(dir))
}

async fn run(dir: &Path, args: Value) -> Result<ToolOutcome, ToolError> {
    run_tool(&tool(dir), args).await
}

async fn text(dir: &Path, args: Value) -> String {
    run(dir, args).await.unwrap().text_content()
}

async fn error(dir: &Path, args: Value) -> String {
    run(dir, args).await.unwrap_err().0
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn lines(from: usize, to: usize) -> String {
    (from..=to)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn write(dir: &Path, name: &str, data: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

#[tokio::test]
async fn a_small_file_comes_back_whole_without_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "alpha\nbeta\n");
    write(dir.path(), "b.txt", "alpha\nbeta");
    write(dir.path(), "empty.txt", "");
    let out = run(dir.path(), json!({"path": "a.txt"})).await.unwrap();
    assert_eq!(out.text_content(), "alpha\nbeta\n");
    assert_eq!(out.details, Value::Null);
    assert_eq!(
        text(dir.path(), json!({"path": "b.txt"})).await,
        "alpha\nbeta"
    );
    assert_eq!(text(dir.path(), json!({"path": "empty.txt"})).await, "");
    assert_eq!(
        text(dir.path(), json!({"path": "empty.txt", "offset": 1})).await,
        ""
    );
}

#[tokio::test]
async fn line_limit_boundary_2000_and_2001() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "2000.txt", numbered(2000));
    write(dir.path(), "2001.txt", numbered(2001));
    assert_eq!(
        text(dir.path(), json!({"path": "2000.txt"})).await,
        numbered(2000)
    );
    let out = run(dir.path(), json!({"path": "2001.txt"})).await.unwrap();
    assert_eq!(
        out.text_content(),
        format!(
            "{}\n\n[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]",
            lines(1, 2000)
        )
    );
    let t = &out.details["truncation"];
    assert_eq!(t["truncated"], true);
    assert_eq!(t["truncatedBy"], "lines");
    assert_eq!(t["totalLines"], 2001);
    assert_eq!(t["outputLines"], 2000);
    assert_eq!(t["maxLines"], 2000);
    assert_eq!(t["maxBytes"], 51200);
    assert_eq!(
        text(dir.path(), json!({"path": "2001.txt", "offset": 2001})).await,
        "line 2001\n"
    );
}

/// 511 lines of 100 bytes plus a last line of `last` bytes: 51200 bytes when `last` is 100.
fn bytes_file(last: usize) -> String {
    let mut s: String = (0..511).map(|_| format!("{}\n", "x".repeat(99))).collect();
    s.push_str(&"y".repeat(last));
    s
}

#[tokio::test]
async fn byte_limit_boundary_50kb_and_one_more() {
    let dir = tempfile::tempdir().unwrap();
    let exact = bytes_file(100);
    assert_eq!(exact.len(), MAX_BYTES);
    write(dir.path(), "exact.txt", &exact);
    write(dir.path(), "exact_nl.txt", format!("{exact}\n"));
    write(dir.path(), "over.txt", bytes_file(101));
    assert_eq!(text(dir.path(), json!({"path": "exact.txt"})).await, exact);
    assert_eq!(
        text(dir.path(), json!({"path": "exact_nl.txt"})).await,
        format!("{exact}\n")
    );
    let out = run(dir.path(), json!({"path": "over.txt"})).await.unwrap();
    let body = exact[..exact.len() - 101].to_string();
    assert_eq!(
        out.text_content(),
        format!(
            "{body}\n\n[Showing lines 1-511 of 512 (50.0KB limit). Use offset=512 to continue.]"
        )
    );
    assert_eq!(out.details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(out.details["truncation"]["totalBytes"], MAX_BYTES + 1);
    assert_eq!(
        text(dir.path(), json!({"path": "over.txt", "offset": 512})).await,
        "y".repeat(101)
    );
}

#[tokio::test]
async fn a_first_line_over_50kb_points_to_sed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "long.txt",
        format!("{}\nshort\n", "z".repeat(MAX_BYTES + 1)),
    );
    write(dir.path(), "fits.txt", "z".repeat(MAX_BYTES));
    write(
        dir.path(),
        "my file.txt",
        format!("a\n{}\n", "é".repeat(MAX_BYTES)),
    );
    let out = run(dir.path(), json!({"path": "long.txt"})).await.unwrap();
    assert_eq!(
        out.text_content(),
        "[Line 1 is 50.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' long.txt | head -c 51200]"
    );
    assert_eq!(out.details["truncation"]["firstLineExceedsLimit"], true);
    assert_eq!(
        text(dir.path(), json!({"path": "long.txt", "offset": 2})).await,
        "short\n"
    );
    assert_eq!(
        text(dir.path(), json!({"path": "fits.txt"})).await.len(),
        MAX_BYTES
    );
    assert_eq!(
        text(dir.path(), json!({"path": "my file.txt", "offset": 2})).await,
        "[Line 2 is 100.0KB, exceeds 50.0KB limit. Use bash: sed -n '2p' 'my file.txt' | head -c 51200]"
    );
}

#[tokio::test]
async fn offset_and_limit_page_through_a_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "100.txt", numbered(100));
    write(dir.path(), "5000.txt", numbered(5000));
    let read = |args: Value| {
        let dir = dir.path().to_path_buf();
        async move { text(&dir, args).await }
    };
    assert_eq!(
        read(json!({"path": "100.txt", "limit": 10})).await,
        format!(
            "{}\n\n[90 more lines in file. Use offset=11 to continue.]",
            lines(1, 10)
        )
    );
    assert_eq!(
        read(json!({"path": "100.txt", "offset": 41, "limit": 10})).await,
        format!(
            "{}\n\n[50 more lines in file. Use offset=51 to continue.]",
            lines(41, 50)
        )
    );
    // Exactly to the last line: nothing more to announce, and (as in pi, whose lines include
    // an empty one after the final newline) the final newline only shows past the last line.
    assert_eq!(
        read(json!({"path": "100.txt", "offset": 91, "limit": 10})).await,
        lines(91, 100)
    );
    assert_eq!(
        read(json!({"path": "100.txt", "offset": 95, "limit": 10})).await,
        format!("{}\n", lines(95, 100))
    );
    assert_eq!(
        read(json!({"path": "100.txt", "offset": 100})).await,
        "line 100\n"
    );
    assert_eq!(
        read(json!({"path": "100.txt", "limit": 100})).await,
        lines(1, 100)
    );
    // A user limit above 2000 still stops at 2000 lines.
    assert_eq!(
        read(json!({"path": "5000.txt", "limit": 3000})).await,
        format!(
            "{}\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]",
            lines(1, 2000)
        )
    );
    assert_eq!(
        read(json!({"path": "5000.txt", "offset": 2001, "limit": 2000})).await,
        format!(
            "{}\n\n[1000 more lines in file. Use offset=4001 to continue.]",
            lines(2001, 4000)
        )
    );
    assert_eq!(
        read(json!({"path": "5000.txt", "offset": 4001})).await,
        format!("{}\n", lines(4001, 5000))
    );
    // Models sometimes send integral floats.
    assert_eq!(
        read(json!({"path": "100.txt", "offset": 100.0})).await,
        "line 100\n"
    );
}

#[tokio::test]
async fn offsets_past_the_end_and_bad_numbers_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "100.txt", numbered(100));
    write(dir.path(), "empty.txt", "");
    assert_eq!(
        error(dir.path(), json!({"path": "100.txt", "offset": 101})).await,
        "Offset 101 is beyond end of file (100 lines total)"
    );
    assert_eq!(
        error(dir.path(), json!({"path": "empty.txt", "offset": 2})).await,
        "Offset 2 is beyond end of file (0 lines total)"
    );
    for bad in [json!(0), json!(-3), json!(1.5), json!("x")] {
        let e = error(dir.path(), json!({"path": "100.txt", "offset": bad})).await;
        assert!(e.contains("\"offset\" must be a whole number"), "{e}");
        let e = error(dir.path(), json!({"path": "100.txt", "limit": bad})).await;
        assert!(e.contains("\"limit\" must be a whole number"), "{e}");
    }
    assert_eq!(
        error(dir.path(), json!({})).await,
        "Missing required argument \"path\""
    );
    // A huge limit does not overflow.
    assert_eq!(
        text(
            dir.path(),
            json!({"path": "100.txt", "offset": 100, "limit": u64::MAX})
        )
        .await,
        "line 100\n"
    );
}

// Minimal, valid headers for each image format.

fn png(width: u32, height: u32, animated: bool) -> Vec<u8> {
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    let chunk = |v: &mut Vec<u8>, kind: &[u8], data: &[u8]| {
        v.extend_from_slice(&(data.len() as u32).to_be_bytes());
        v.extend_from_slice(kind);
        v.extend_from_slice(data);
        v.extend_from_slice(&[0, 0, 0, 0]); // CRC (not checked)
    };
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    chunk(&mut v, b"IHDR", &ihdr);
    if animated {
        chunk(&mut v, b"acTL", &[0, 0, 0, 2, 0, 0, 0, 0]);
    }
    chunk(&mut v, b"IDAT", &[0x78, 0x9c, 0x63, 0, 0, 0, 2, 0, 1]);
    chunk(&mut v, b"IEND", &[]);
    v
}

fn jpeg(width: u16, height: u16) -> Vec<u8> {
    let mut v = vec![0xFF, 0xD8];
    // APP0 (JFIF) segment.
    v.extend_from_slice(&[0xFF, 0xE0, 0, 16]);
    v.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    // SOF0: length, precision, height, width, one component.
    v.extend_from_slice(&[0xFF, 0xC0, 0, 11, 8]);
    v.extend_from_slice(&height.to_be_bytes());
    v.extend_from_slice(&width.to_be_bytes());
    v.extend_from_slice(&[1, 1, 0x11, 0]);
    v.extend_from_slice(&[0xFF, 0xD9]);
    v
}

fn gif(width: u16, height: u16) -> Vec<u8> {
    let mut v = b"GIF89a".to_vec();
    v.extend_from_slice(&width.to_le_bytes());
    v.extend_from_slice(&height.to_le_bytes());
    v.extend_from_slice(&[0, 0, 0, 0x3B]);
    v
}

fn webp(width: u32, height: u32) -> Vec<u8> {
    // VP8L: signature byte 0x2F, then 14-bit width-1 and height-1.
    let dims = (width - 1) | ((height - 1) << 14);
    let mut body = b"WEBPVP8L".to_vec();
    body.extend_from_slice(&5u32.to_le_bytes());
    body.push(0x2F);
    body.extend_from_slice(&dims.to_le_bytes());
    let mut v = b"RIFF".to_vec();
    v.extend_from_slice(&(body.len() as u32).to_le_bytes());
    v.extend_from_slice(&body);
    v
}

#[tokio::test]
async fn images_are_sniffed_by_magic_bytes_and_attached() {
    let dir = tempfile::tempdir().unwrap();
    // Names lie on purpose: only the bytes count.
    let cases = [
        ("a.dat", png(3, 2, false), "image/png"),
        ("b.png", jpeg(3, 2), "image/jpeg"),
        ("c", gif(3, 2), "image/gif"),
        ("d.txt", webp(3, 2), "image/webp"),
    ];
    for (name, bytes, mime) in cases {
        write(dir.path(), name, &bytes);
        let out = run(dir.path(), json!({"path": name})).await.unwrap();
        assert_eq!(out.content.len(), 2, "{name}");
        assert_eq!(out.text_content(), format!("Read image file [{mime}]"));
        let UserContent::Image(img) = &out.content[1] else {
            panic!("{name}: no image block");
        };
        assert_eq!(img.mime_type, mime);
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(&img.data)
            .unwrap();
        assert_eq!(decoded, bytes);
    }
}

#[tokio::test]
async fn animated_png_is_not_an_image_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "anim.png", png(3, 2, true));
    let e = error(dir.path(), json!({"path": "anim.png"})).await;
    assert!(
        e.starts_with(&format!("{} is an animated PNG", p.display())),
        "{e}"
    );
}

#[tokio::test]
async fn images_over_the_limits_are_described_not_attached() {
    let dir = tempfile::tempdir().unwrap();
    // Largest file whose base64 fits 4.5MB, and one byte more.
    let fits = MAX_IMAGE_BASE64 / 4 * 3;
    for (name, len) in [("fits.png", fits), ("over.png", fits + 1)] {
        let p = write(dir.path(), name, png(10, 10, false));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(len as u64)
            .unwrap();
    }
    let out = run(dir.path(), json!({"path": "fits.png"})).await.unwrap();
    assert_eq!(out.content.len(), 2);
    let UserContent::Image(img) = &out.content[1] else {
        panic!("no image");
    };
    assert_eq!(img.data.len(), MAX_IMAGE_BASE64);
    let out = run(dir.path(), json!({"path": "over.png"})).await.unwrap();
    assert_eq!(out.content.len(), 1);
    assert_eq!(
        out.text_content(),
        "Image over.png (image/png) was not attached: the file is 3.4MB (4.5MB as base64), \
         over the 4.5MB limit for images. Make a smaller copy (scale it down or recompress it, \
         e.g. with ImageMagick through bash) and read that instead."
    );

    write(dir.path(), "wide.png", png(8001, 10, false));
    write(dir.path(), "tall.gif", gif(10, 8001));
    write(dir.path(), "max.webp", webp(8000, 8000));
    let t = text(dir.path(), json!({"path": "wide.png"})).await;
    assert!(
        t.starts_with("Image wide.png (image/png) was not attached: it is 8001x10 pixels"),
        "{t}"
    );
    assert!(t.contains("scaled-down copy"), "{t}");
    let t = text(dir.path(), json!({"path": "tall.gif"})).await;
    assert!(t.contains("it is 10x8001 pixels"), "{t}");
    let out = run(dir.path(), json!({"path": "max.webp"})).await.unwrap();
    assert_eq!(out.content.len(), 2, "8000x8000 is allowed");

    write(dir.path(), "cut.png", &png(1, 1, false)[..12]);
    let t = text(dir.path(), json!({"path": "cut.png"})).await;
    assert!(t.contains("dimensions could not be read"), "{t}");
}

#[tokio::test]
async fn binary_files_are_refused_and_bad_utf8_text_is_shown_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "nul.bin", b"ELF\0\x01\x02text");
    assert_eq!(
        error(dir.path(), json!({"path": "nul.bin"})).await,
        format!(
            "{} is a binary file (10B), not text or a supported image (PNG, JPEG, GIF, WebP). \
             Use bash tools such as file, xxd or strings to inspect it.",
            p.display()
        )
    );
    let noise: Vec<u8> = (0..4096u32).map(|i| 0x80 + (i * 7 % 0x7F) as u8).collect();
    write(dir.path(), "noise.bin", &noise);
    assert!(
        error(dir.path(), json!({"path": "noise.bin"}))
            .await
            .contains("is a binary file (4.0KB)")
    );
    // Latin-1 text: a few invalid bytes are replaced, the rest is kept.
    write(dir.path(), "latin1.txt", b"caf\xe9 au lait\nna\xefve\n");
    assert_eq!(
        text(dir.path(), json!({"path": "latin1.txt"})).await,
        "caf\u{FFFD} au lait\nna\u{FFFD}ve\n"
    );
}

#[tokio::test]
async fn multibyte_characters_across_buffer_boundaries_stay_intact() {
    let dir = tempfile::tempdir().unwrap();
    // "é" straddles the 8 KB sniff boundary; "ü" straddles the next 64 KB read.
    let boundary = SNIFF_BYTES + READ_BUFFER;
    let mut s = "a".repeat(SNIFF_BYTES - 1);
    s.push_str("é\n");
    while s.len() < boundary - 100 {
        s.push_str(&format!("{}\n", "b".repeat(99)));
    }
    let pad = boundary - 1 - s.len();
    s.push_str(&"c".repeat(pad));
    s.push_str("ü\nend\n");
    assert_eq!(s.find('ü'), Some(boundary - 1));
    let u_line = s.matches('\n').count() - 1;
    write(dir.path(), "mb.txt", &s);
    let first = text(dir.path(), json!({"path": "mb.txt", "limit": 1})).await;
    assert!(first.starts_with(&format!("{}é\n\n[", "a".repeat(SNIFF_BYTES - 1))));
    let out = text(dir.path(), json!({"path": "mb.txt", "offset": u_line})).await;
    assert_eq!(out, format!("{}ü\nend\n", "c".repeat(pad)));
}

/// Counts the bytes pulled through a reader.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::SeqCst);
        Ok(n)
    }
}

#[tokio::test]
async fn a_2gb_sparse_file_is_refused_after_8kb() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sparse.img");
    let size = 2u64 << 30;
    File::create(&p).unwrap().set_len(size).unwrap();
    let read = Arc::new(AtomicU64::new(0));
    let file = Counting {
        inner: File::open(&p).unwrap(),
        read: read.clone(),
    };
    let window = Window {
        start: 0,
        end: None,
    };
    let result = load_from(file, size, window, &CancellationToken::new());
    assert!(matches!(result, Err(LoadError::Binary { size: s }) if s == size));
    assert_eq!(read.load(Ordering::SeqCst), SNIFF_BYTES as u64);
    let e = error(dir.path(), json!({"path": "sparse.img"})).await;
    assert!(e.contains("is a binary file (2048.0MB)"), "{e}");
}

/// Yields `len` bytes of `line` repeated, without holding them.
struct Endless {
    line: &'static [u8],
    left: u64,
    at: usize,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() && self.left > 0 {
            buf[n] = self.line[self.at];
            self.at = (self.at + 1) % self.line.len();
            self.left -= 1;
            n += 1;
        }
        Ok(n)
    }
}

#[tokio::test]
async fn a_20mb_file_pages_by_streaming() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.log");
    let mut f = io::BufWriter::new(File::create(&p).unwrap());
    let total = 400_000;
    for i in 1..=total {
        writeln!(f, "{i:>8} the quick brown fox jumps over the lazy dog").unwrap();
    }
    f.flush().unwrap();
    drop(f);
    assert!(std::fs::metadata(&p).unwrap().len() > 20_000_000);
    let out = text(
        dir.path(),
        json!({"path": "big.log", "offset": 200_000, "limit": 2}),
    )
    .await;
    assert_eq!(
        out,
        "  200000 the quick brown fox jumps over the lazy dog\n  \
         200001 the quick brown fox jumps over the lazy dog\n\n\
         [199999 more lines in file. Use offset=200002 to continue.]"
    );
    let out = text(dir.path(), json!({"path": "big.log"})).await;
    // 53-byte lines: the byte limit hits before the line limit.
    assert!(out.ends_with(
        "     966 the quick brown fox jumps over the lazy dog\n\n\
         [Showing lines 1-966 of 400000 (50.0KB limit). Use offset=967 to continue.]"
    ));
    let out = text(dir.path(), json!({"path": "big.log", "offset": total})).await;
    assert_eq!(
        out,
        "  400000 the quick brown fox jumps over the lazy dog\n"
    );
}

#[test]
fn a_64mb_line_is_never_held_in_memory() {
    // One 64 MB line with no newline, generated on the fly.
    let stream = Endless {
        line: b"abcdefgh",
        left: 64 << 20,
        at: 0,
    };
    let reader = BufReader::with_capacity(READ_BUFFER, stream);
    let window = Window {
        start: 0,
        end: None,
    };
    let page = read_page(reader, window, &CancellationToken::new()).unwrap();
    assert!(page.truncation.first_line_exceeds_limit);
    assert_eq!(page.first_line_bytes, 64 << 20);
    assert_eq!(page.total_lines, 1);
    assert_eq!(page.content, "");
}

#[tokio::test]
async fn missing_directories_special_files_and_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let abs = dir.path().join("nope.txt");
    assert_eq!(
        error(dir.path(), json!({"path": "nope.txt"})).await,
        format!("File not found: {}", abs.display())
    );
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    assert_eq!(
        error(dir.path(), json!({"path": "sub"})).await,
        format!(
            "{} is a directory; use ls to list it",
            dir.path().join("sub").display()
        )
    );
    let fifo = dir.path().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let e = error(dir.path(), json!({"path": "pipe"})).await;
    assert!(e.contains("is not a regular file"), "{e}");

    let secret = write(dir.path(), "secret.txt", "hidden\n");
    chmod(&secret, 0o000);
    let result = run(dir.path(), json!({"path": "secret.txt"})).await;
    if permissions_enforced() {
        assert_eq!(
            result.unwrap_err().0,
            format!("Permission denied: cannot read {}", secret.display())
        );
    }
}

#[tokio::test]
async fn non_utf8_names_on_disk_do_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"bad\xff.txt");
    std::fs::write(dir.path().join(name), "x").unwrap();
    let e = error(dir.path(), json!({"path": "bad\u{FFFD}.txt"})).await;
    assert!(e.starts_with("File not found: "), "{e}");
    assert!(e.contains("U+FFFD"), "{e}");
}

#[tokio::test]
async fn cancellation_and_declarations() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a\n");
    let t = tool(dir.path());
    let e = run_tool_with(&t, json!({"path": "a.txt"}), cancelled())
        .await
        .unwrap_err();
    assert_eq!(e.0, "Operation aborted");
    // A token cancelled mid-scan stops the scan.
    let cancel = cancelled();
    let stream = BufReader::new(Cursor::new(numbered(10)));
    let window = Window {
        start: 0,
        end: None,
    };
    assert!(matches!(
        read_page(stream, window, &cancel),
        Err(PageError::Cancelled)
    ));

    assert_eq!(t.name(), "read");
    assert_eq!(t.annotations(), ToolAnnotations::READ_ONLY);
    assert_eq!(t.parameters()["required"], json!(["path"]));
    assert_eq!(t.parameters()["properties"]["offset"]["minimum"], 1);
    assert_eq!(
        t.target_paths(&json!({"path": "sub/../a.txt"})),
        vec![dir.path().join("a.txt")]
    );
    assert!(t.target_paths(&json!({})).is_empty());
}

#[test]
fn shell_words_are_quoted_only_when_needed() {
    assert_eq!(shell_quote("src/a-b_c.rs"), "src/a-b_c.rs");
    assert_eq!(shell_quote("it's here.txt"), r"'it'\''s here.txt'");
    assert_eq!(shell_quote("$HOME"), "'$HOME'");
}
