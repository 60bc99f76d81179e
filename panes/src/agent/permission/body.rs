//! What a permission request asks about, whole: the diff, the command, the text or every
//! argument, and whether it leaves the sandbox and why. Built once and sanitized, then
//! wrapped (never cut) to the dialog's width, and given as one text to every other channel.

use std::cell::RefCell;

use agent_client_protocol::v1::schema::{ContentBlock, RequestPermissionRequest, ToolCallContent};
use unicode_width::UnicodeWidthChar;

use super::super::diff::{self, DiffLineKind};
use crate::picture::Picture;
use crate::sanitize::sanitize_line;

/// What a line of the request's body is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// A file's path and whether it is new.
    Heading,
    Hunk,
    Added,
    Removed,
    Context,
    /// A command, text to append, pretty-printed arguments.
    Text,
}

/// A request to run outside the sandbox, as the agent marks it (`_meta.march.sandbox`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeavesSandbox {
    /// Why, in the agent's words.
    pub reason: Option<String>,
}

impl LeavesSandbox {
    /// Its line in the dialog and in every other channel.
    pub(crate) fn line(&self) -> String {
        match &self.reason {
            Some(reason) => format!("⚠ runs outside the sandbox: {reason}"),
            None => "⚠ runs outside the sandbox (the agent gave no reason)".to_string(),
        }
    }
}

/// Whether `request` asks to leave the sandbox.
pub(crate) fn leaves_sandbox(request: &RequestPermissionRequest) -> Option<LeavesSandbox> {
    let sandbox = request.meta.as_ref()?.get("march")?.get("sandbox")?;
    (sandbox.get("outside")?.as_bool() == Some(true)).then(|| LeavesSandbox {
        reason: sandbox
            .get("reason")
            .and_then(|r| r.as_str())
            .map(|r| sanitize_line(r).into_owned()),
    })
}

/// Whether the agent takes a rejection's words as the call's result
/// (`_meta.march.rejectMessage`).
pub(crate) fn takes_reject_message(request: &RequestPermissionRequest) -> bool {
    request
        .meta
        .as_ref()
        .and_then(|m| m.get("march")?.get("rejectMessage")?.as_bool())
        == Some(true)
}

/// The body of a request: each diff (path, new or not, the unified diff), each text block,
/// each picture's label, else the raw arguments pretty-printed; and the first picture.
pub(crate) fn body_of(
    request: &RequestPermissionRequest,
) -> (Vec<(BodyKind, String)>, Option<std::sync::Arc<Picture>>) {
    let mut out = Vec::new();
    let mut picture = None;
    let fields = &request.tool_call.fields;
    for content in fields.content.iter().flatten() {
        match content {
            ToolCallContent::Diff(d) => {
                let path = sanitize_line(&d.path.to_string_lossy()).into_owned();
                let heading = if d.old_text.is_none() {
                    format!("{path} (new file)")
                } else {
                    path
                };
                if !out.is_empty() {
                    out.push((BodyKind::Text, String::new()));
                }
                out.push((BodyKind::Heading, heading));
                let diff = diff::unified(d.old_text.as_deref(), &d.new_text);
                for (kind, text) in diff.lines {
                    let (kind, sign) = match kind {
                        DiffLineKind::Hunk => (BodyKind::Hunk, ""),
                        DiffLineKind::Added => (BodyKind::Added, "+"),
                        DiffLineKind::Removed => (BodyKind::Removed, "-"),
                        DiffLineKind::Context => (BodyKind::Context, " "),
                    };
                    out.push((kind, format!("{sign}{}", sanitize_line(&text))));
                }
            }
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(t) => {
                    for line in t.text.lines() {
                        out.push((BodyKind::Text, sanitize_line(line).into_owned()));
                    }
                }
                ContentBlock::Image(image) => match Picture::from_base64(&image.data) {
                    Ok(p) => {
                        out.push((BodyKind::Text, p.label()));
                        picture.get_or_insert(p);
                    }
                    Err(e) => out.push((BodyKind::Text, format!("[image: {e}]"))),
                },
                _ => {}
            },
            _ => {}
        }
    }
    // A call with nothing to preview shows every argument; one whose preview leaves
    // arguments out (an MCP or browser call never has one) is not shown in part.
    if out.is_empty()
        && let Some(input) = &fields.raw_input
        && let Ok(pretty) = serde_json::to_string_pretty(input)
    {
        for line in pretty.lines() {
            out.push((BodyKind::Text, sanitize_line(line).into_owned()));
        }
    }
    (out, picture)
}

/// Rows of a body: each with its kind.
type Rows = std::rc::Rc<Vec<(BodyKind, String)>>;

/// The body wrapped to a width, kept until the width changes (a long diff is wrapped once,
/// not at every frame).
#[derive(Debug, Default)]
pub(crate) struct Wrapped {
    cache: RefCell<Option<(usize, Rows)>>,
}

impl Clone for Wrapped {
    fn clone(&self) -> Self {
        Wrapped::default()
    }
}

impl Wrapped {
    /// `body`'s rows at `width` columns: every character kept, long lines broken where the
    /// width ends (a command's spaces and quotes are shown exactly, so no word wrapping).
    pub(crate) fn rows(&self, body: &[(BodyKind, String)], width: usize) -> Rows {
        let width = width.max(2);
        if let Some((w, rows)) = &*self.cache.borrow()
            && *w == width
        {
            return rows.clone();
        }
        let mut rows = Vec::with_capacity(body.len());
        for (kind, text) in body {
            hard_wrap(text, width, |row| rows.push((*kind, row)));
        }
        let rows = std::rc::Rc::new(rows);
        *self.cache.borrow_mut() = Some((width, rows.clone()));
        rows
    }
}

/// `text` broken into rows of at most `width` columns; an empty text is one empty row.
fn hard_wrap(text: &str, width: usize, mut push: impl FnMut(String)) {
    let mut row = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width && !row.is_empty() {
            push(std::mem::take(&mut row));
            used = 0;
        }
        row.push(c);
        used += w;
    }
    push(row);
}

/// The whole question as one text: what the call is, whether it leaves the sandbox and why,
/// then everything the dialog's body shows. What `march status --json`, `march answer` and
/// the gateway give.
pub(crate) fn question_text(
    heading: &str,
    sandbox: Option<&LeavesSandbox>,
    body: &[(BodyKind, String)],
) -> String {
    let mut text = heading.to_string();
    if let Some(sandbox) = sandbox {
        text.push('\n');
        text.push_str(&sandbox.line());
    }
    for (_, line) in body {
        text.push('\n');
        text.push_str(line);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_every_character() {
        let w = Wrapped::default();
        let command = "cargo test | sed -e 's/x/y/' ; echo HIDDEN-TAIL > hidden-tail.txt";
        let body = vec![(BodyKind::Text, command.to_string())];
        let rows = w.rows(&body, 20);
        assert!(rows.iter().all(|(_, r)| r.chars().count() <= 20));
        let joined: String = rows.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(joined, command);
        // Wide characters never straddle the edge.
        let rows = Wrapped::default().rows(&[(BodyKind::Text, "日本語のテキスト".into())], 5);
        assert_eq!(rows[0].1, "日本");
        let rows = Wrapped::default().rows(&[(BodyKind::Text, String::new())], 5);
        assert_eq!(rows.len(), 1);
    }
}
