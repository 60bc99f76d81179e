//! Memory of syntax highlighting: VmRSS after loading syntect's defaults through
//! [`Highlighter`] and highlighting blocks in a few languages. Run: `cargo run --release -p
//! march-panes --example highlight_memory`.

use march_panes::highlight::Highlighter;
use march_panes::theme::Theme;

/// This process's resident set in KiB, 0 where `/proc` is missing.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn report(step: &str, start: u64) {
    let now = rss_kib();
    println!(
        "{step:<40} rss {:>6.1} MiB  (+{:.1} MiB)",
        now as f64 / 1024.0,
        now.saturating_sub(start) as f64 / 1024.0
    );
}

const RUST: &str = "use std::collections::HashMap;\n\n/// Docs.\n#[derive(Debug)]\npub struct Foo<'a> { name: &'a str, n: u64 }\n\nimpl<'a> Foo<'a> {\n    pub fn new(name: &'a str) -> Self {\n        let mut m: HashMap<String, Vec<u8>> = HashMap::new();\n        m.insert(\"x\".to_string(), vec![1, 2, 3]);\n        println!(\"{name} {}\", m.len());\n        Self { name, n: 0x1f }\n    }\n}\n";

const OTHERS: [(&str, &str); 6] = [
    ("py", "def f(x):\n    return {'a': [1, 2]}\n"),
    ("sh", "for f in *.rs; do echo \"$f\"; done\n"),
    (
        "ts",
        "const x: number = 1;\nexport function f() { return `a${x}`; }\n",
    ),
    ("json", "{\"a\": [1, true, null]}\n"),
    ("toml", "[package]\nname = \"x\"\n"),
    ("diff", "--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n"),
];

fn main() {
    let start = rss_kib();
    report("start", start);
    let theme = Theme::default();
    report("Theme::default", start);
    let hl = Highlighter::new();
    hl.set_theme(&theme);
    report("Highlighter::new + set_theme", start);
    hl.highlight(RUST, "rust");
    report("first rust block (loads the sets)", start);
    for (lang, code) in OTHERS {
        hl.highlight(code, lang);
    }
    report("+ py sh ts json toml diff", start);
    for i in 0..300 {
        hl.highlight(&format!("{RUST}// {i}\n"), "rust");
    }
    report("+ 300 distinct rust blocks (cache full)", start);
    for i in 300..600 {
        hl.highlight(&format!("{RUST}// {i}\n"), "rust");
    }
    report("+ 300 more (no growth expected)", start);
}
