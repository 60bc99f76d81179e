//! Writing laid-out text into a buffer's cells, as ratatui's `Buffer::set_line` does, with a
//! fast path for the common case: a span of printable ASCII is one cell per byte, so it
//! needs neither grapheme segmentation nor a width lookup (most of the cost of drawing a
//! transcript, which is drawn again at every streamed delta).

use ratatui::buffer::Buffer;
use ratatui::text::Line;

/// Writes `line` at (`x`, `y`), at most `max_width` cells; returns where it ended.
pub fn put_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) -> (u16, u16) {
    let area = buf.area;
    if y < area.top() || y >= area.bottom() {
        return (x, y);
    }
    let mut remaining = max_width;
    let mut x = x;
    for span in line {
        if remaining == 0 {
            break;
        }
        let text = span.content.as_ref();
        if text.is_empty() {
            continue;
        }
        let style = line.style.patch(span.style);
        if x >= area.left() && text.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            let room = area.right().saturating_sub(x).min(remaining);
            let n = text.len().min(usize::from(room));
            if n == 0 {
                // At the right edge: nothing more fits on this row.
                break;
            }
            let start = buf.index_of(x, y);
            for (i, cell) in buf.content[start..start + n].iter_mut().enumerate() {
                cell.set_symbol(&text[i..=i]).set_style(style);
            }
            let n = u16::try_from(n).unwrap_or(u16::MAX);
            x += n;
            remaining -= n;
        } else {
            let (end, _) = buf.set_stringn(x, y, text, usize::from(remaining), style);
            remaining = remaining.saturating_sub(end.saturating_sub(x));
            x = end;
        }
    }
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::{Modifier, Style};
    use ratatui::text::Span;

    /// `put_line` and ratatui's `set_line` write the same cells.
    fn same_as_ratatui(line: &Line<'_>, x: u16, max_width: u16) {
        let area = Rect::new(2, 1, 12, 3);
        let mut ours = Buffer::empty(area);
        let mut theirs = Buffer::empty(area);
        // What was there is kept where the line does not write, and styles merge.
        for buf in [&mut ours, &mut theirs] {
            buf.set_string(
                2,
                2,
                "0123456789ab",
                Style::default().add_modifier(Modifier::DIM),
            );
        }
        let a = put_line(&mut ours, x, 2, line, max_width);
        let b = theirs.set_line(x, 2, line, max_width);
        assert_eq!(ours, theirs, "{line:?} at {x}, {max_width} wide");
        assert_eq!(a, b);
    }

    #[test]
    fn it_writes_what_ratatui_writes() {
        let plain = Line::from("hello world");
        let styled = Line::from(vec![
            Span::styled("fn ", Style::default().add_modifier(Modifier::ITALIC)),
            Span::styled("main", Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(""),
            Span::raw("() {}"),
        ])
        .style(Style::default().add_modifier(Modifier::UNDERLINED));
        let wide = Line::from(vec![
            Span::raw("a "),
            Span::raw("日本語 ok"),
            Span::raw("!"),
        ]);
        let mixed = Line::from(vec![Span::raw("tab\there"), Span::raw("é")]);
        for line in [&plain, &styled, &wide, &mixed] {
            for (x, width) in [(2, 12), (2, 5), (7, 12), (13, 12), (2, 0), (4, 3)] {
                same_as_ratatui(line, x, width);
            }
        }
    }

    #[test]
    fn a_row_outside_the_buffer_is_left_alone() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        assert_eq!(put_line(&mut buf, 0, 3, &Line::from("abc"), 4), (0, 3));
        assert_eq!(buf, Buffer::empty(Rect::new(0, 0, 4, 1)));
    }
}
