use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use super::*;
use crate::test_support::{dark, light};

fn render(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let hl = Highlighter::new();
    hl.set_theme(theme);
    render_markdown(text, width, theme.style(Slot::Agent), theme, &hl)
}

fn plain(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .map(|s| s.trim_end().to_string())
        .collect()
}

/// The lines drawn on a test terminal, for snapshots.
fn draw(lines: &[Line<'static>], width: u16) -> Terminal<TestBackend> {
    let height = u16::try_from(lines.len().max(1)).unwrap();
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    t.draw(|f| {
        for (i, line) in lines.iter().enumerate() {
            f.render_widget(line.clone(), Rect::new(0, i as u16, width, 1));
        }
    })
    .unwrap();
    t
}

const SAMPLE: &str = "\
# Title

Some *emphasis*, **strong**, ~~gone~~ and `code` in a paragraph that is long enough to wrap.

## Lists

- one
- two
  - nested item with enough words to wrap around
  - [x] done
1. first
2. second

> quoted text
> more

---

See [the docs](https://example.com/docs) or <https://example.com>.
";

#[test]
fn sample_document_dark() {
    let lines = render(SAMPLE, 40, &dark());
    insta::assert_snapshot!(draw(&lines, 40).backend());
}

#[test]
fn sample_document_light() {
    let lines = render(SAMPLE, 40, &light());
    insta::assert_snapshot!(draw(&lines, 40).backend());
}

#[test]
fn code_block_is_highlighted_and_cut_not_wrapped() {
    let text = "Code:\n\n```rust\nfn main() {\n    println!(\"a very long line that does not fit\");\n}\n```\n";
    let theme = dark();
    let lines = render(text, 30, &theme);
    insta::assert_snapshot!(draw(&lines, 30).backend());
    let code: Vec<&Line<'_>> = lines.iter().skip(2).collect();
    assert_eq!(code.len(), 3, "three code lines, none wrapped");
    let text = plain(&lines);
    assert!(text[3].ends_with(CUT_MARKER), "{:?}", text[3]);
    let colours: std::collections::HashSet<_> = code
        .iter()
        .flat_map(|l| l.spans.iter().map(|s| s.style.fg))
        .collect();
    assert!(colours.len() > 2, "highlighted: {colours:?}");
    // The code background reaches the edge.
    assert_eq!(wrap::line_width(code[0]), 30);
    let last = code[0].spans.last().unwrap();
    assert_eq!(last.style.bg, theme.style(Slot::CodeBlock).bg);
}

#[test]
fn inline_styles_come_from_the_theme() {
    let theme = dark();
    let lines = render("a **b** *c* `d` [e](http://x)", 40, &theme);
    let spans = &lines[0].spans;
    let find = |t: &str| spans.iter().find(|s| s.content == t).unwrap().style;
    let base = theme.style(Slot::Agent);
    assert_eq!(find("b"), base.patch(theme.style(Slot::Strong)));
    assert_eq!(find("c"), base.patch(theme.style(Slot::Emphasis)));
    assert_eq!(find("d"), base.patch(theme.style(Slot::InlineCode)));
    assert_eq!(find("e"), base.patch(theme.style(Slot::Link)));
    assert_eq!(find(" (http://x)"), theme.style(Slot::TextDim));
}

#[test]
fn links_show_their_address_once() {
    let t = plain(&render(
        "<https://a.example> and [x](https://b.example)",
        80,
        &dark(),
    ));
    assert_eq!(t, ["https://a.example and x (https://b.example)"]);
}

#[test]
fn nested_lists_hang_their_indent() {
    let t = plain(&render("- a\n  1. b c d e f\n- g", 10, &dark()));
    assert_eq!(t, ["• a", "  1. b c d", "     e f", "• g"]);
}

#[test]
fn tables_fit_or_fall_back() {
    let md = "| name | value |\n|:-----|------:|\n| a | 1 |\n| bbbb | 22 |\n";
    let t = plain(&render(md, 40, &dark()));
    assert_eq!(
        t,
        [
            "name │ value",
            "─────┼──────",
            "a    │     1",
            "bbbb │    22"
        ]
    );
    let narrow = plain(&render(md, 8, &dark()));
    assert!(narrow.iter().all(|l| wrap::width(l) <= 8), "{narrow:?}");
    assert!(narrow.concat().contains("bbbb"));
}

#[test]
fn wide_tables_cut_cells() {
    let md = "| a | b |\n|---|---|\n| short | a much longer cell than fits |\n";
    let t = plain(&render(md, 20, &dark()));
    assert!(t.iter().all(|l| wrap::width(l) <= 20), "{t:?}");
    assert!(t[2].contains('…'), "{t:?}");
}

#[test]
fn every_line_fits_the_width() {
    let doc = format!(
        "{SAMPLE}\n\n{}\n\n```\n{}\n```\n",
        "word ".repeat(200),
        "x".repeat(300)
    );
    for width in [1u16, 5, 13, 40, 100] {
        for line in render(&doc, width, &dark()) {
            let w = wrap::line_width(&line);
            // A prefix alone may be wider than a 1-column pane; nothing else may.
            assert!(
                w <= usize::from(width).max(6),
                "width {width}: {w} {line:?}"
            );
        }
    }
}

#[test]
fn code_blocks_are_extracted_verbatim() {
    let blocks = code_blocks("x\n```sh\nls -la\necho hi\n```\n\n    indented\n");
    assert_eq!(blocks, ["ls -la\necho hi\n", "indented\n"]);
}

#[test]
fn html_and_headings() {
    let t = plain(&render("### Three\n\n<b>raw</b>\n", 40, &dark()));
    assert_eq!(t, ["### Three", "", "<b>raw</b>"]);
}
