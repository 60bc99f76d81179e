//! The terminals attached to the workspace, as the loop draws for them. The workspace is
//! drawn once, into a canvas of its size (that of the client that typed last, as tmux's
//! `window-size latest`); each client's [`Screen`] is made from the canvas, clipped to a
//! smaller terminal or with the unused part of a larger one marked, and in the colours its
//! terminal shows. What the screen writes goes to the client's [`Outbox`] as one message.

use std::time::{SystemTime, UNIX_EPOCH};

use crossterm::cursor::SetCursorStyle;
use crossterm::event::KeyEvent;
use march_panes::terminal::CursorShape;
use march_wire::TermCaps;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use super::frame::Drawn;
use super::pictures::{ClientPictures, EncodeRequest, Encoded};

/// Pictures encoded at once, for all clients (each takes a core for a while).
const ENCODING_AT_ONCE: usize = 2;
use super::compose::{compose, mark_unused};
use super::damage::Damage;
use super::screen::{Captured, Screen, Scroll};
use crate::keymap::{Command, Dispatch, KeyContext, KeyDispatcher, Keymap};
use crate::server::connection::{ClientId, Finished, Hello, Outbox};

/// The most bytes of bells and notifications kept while nobody is attached: a workspace
/// left alone for days keeps the newest, not all of them.
const HELD_LIMIT: usize = 64 << 10;

/// One attached terminal.
struct Client {
    id: ClientId,
    size: (u16, u16),
    caps: TermCaps,
    read_only: bool,
    screen: Screen<Captured>,
    /// What its screen wrote.
    written: Captured,
    outbox: Outbox,
    /// Frames were dropped: nothing more is sent until it has read what was queued.
    behind: bool,
    /// The cursor shape last set on it (`None` inside: the user's own).
    shape: Option<Option<CursorShape>>,
    /// A read-only client's own prefix state: its keys reach nothing but its detach.
    watcher_keys: KeyDispatcher,
    /// The pictures its terminal shows.
    pictures: ClientPictures,
}

/// The attached terminals.
pub(super) struct Clients {
    list: Vec<Client>,
    /// Whose size the workspace takes.
    latest: Option<ClientId>,
    /// The client whose input is being handled.
    current: Option<ClientId>,
    /// The workspace as last drawn, patches included.
    canvas: Buffer,
    /// The drawing before it (what the clients showed before the last frame).
    before: Buffer,
    /// Where the cursor is on the canvas.
    cursor: Option<Position>,
    /// The pictures on the canvas.
    pictures: Vec<march_panes::picture::Placement>,
    /// Encodings started and not back yet.
    encoding: usize,
    /// Bells and notifications made while nobody was attached, for the next client.
    held: Vec<u8>,
    /// When a client last attached or typed.
    last_active: SystemTime,
}

impl Clients {
    pub(super) fn new() -> Clients {
        Clients {
            list: Vec::new(),
            latest: None,
            current: None,
            canvas: Buffer::empty(Rect::default()),
            before: Buffer::empty(Rect::default()),
            cursor: None,
            pictures: Vec::new(),
            encoding: 0,
            held: Vec::new(),
            last_active: SystemTime::now(),
        }
    }

    /// Whether no terminal is attached.
    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// How many are attached.
    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// When a client last attached or typed, in milliseconds since the epoch.
    pub(super) fn last_active_ms(&self) -> u64 {
        let since = self
            .last_active
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    }

    /// The workspace's size: that of the client that typed or attached last.
    pub(super) fn size(&self) -> (u16, u16) {
        self.latest
            .and_then(|id| self.get(id))
            .map_or((80, 24), |c| c.size)
    }

    fn get(&self, id: ClientId) -> Option<&Client> {
        self.list.iter().find(|c| c.id == id)
    }

    fn get_mut(&mut self, id: ClientId) -> Option<&mut Client> {
        self.list.iter_mut().find(|c| c.id == id)
    }

    /// A terminal attached: the workspace takes its size, and what was held for nobody is
    /// written to it.
    pub(super) fn attach(&mut self, id: ClientId, hello: Hello, outbox: Outbox) {
        let written = Captured::default();
        let client = Client {
            id,
            size: (hello.cols, hello.rows),
            pictures: ClientPictures::new(&hello.caps),
            caps: hello.caps,
            read_only: hello.read_only,
            screen: Screen::new(written.clone()),
            written,
            outbox,
            behind: false,
            shape: None,
            watcher_keys: KeyDispatcher::new(),
        };
        if !self.held.is_empty() {
            client.outbox.output(std::mem::take(&mut self.held));
        }
        self.list.push(client);
        if !hello.read_only || self.latest.is_none() {
            self.latest = Some(id);
        }
        self.last_active = SystemTime::now();
    }

    /// Client `id` is gone (it detached or its connection ended): told `why` when it can
    /// still read. Whether the workspace's size changed.
    pub(super) fn remove(&mut self, id: ClientId, why: &str) -> bool {
        let before = self.size();
        let Some(at) = self.list.iter().position(|c| c.id == id) else {
            return false;
        };
        // Nothing waits for its last words: the loop goes on and the writer sends them.
        drop(self.list.remove(at).outbox.exit(why));
        if self.latest == Some(id) {
            // The one attached last of those left (they are in attach order).
            self.latest = self
                .list
                .iter()
                .rev()
                .find(|c| !c.read_only)
                .or(self.list.last())
                .map(|c| c.id);
        }
        if self.current == Some(id) {
            self.current = None;
        }
        !self.list.is_empty() && self.size() != before
    }

    /// Ends every client, telling it `why`; done when each has been told.
    pub(super) fn exit_all(&mut self, why: &str) -> Vec<Finished> {
        self.latest = None;
        self.current = None;
        self.list.drain(..).map(|c| c.outbox.exit(why)).collect()
    }

    /// Whether client `id` only watches (or is not attached).
    pub(super) fn read_only(&self, id: ClientId) -> bool {
        self.get(id).is_none_or(|c| c.read_only)
    }

    /// What `key` from read-only client `id` asks for, in its own prefix state.
    pub(super) fn watcher_key(
        &mut self,
        id: ClientId,
        keymap: &Keymap,
        key: KeyEvent,
    ) -> Option<Command> {
        let client = self.get_mut(id)?;
        match client
            .watcher_keys
            .dispatch(keymap, KeyContext::Direct, key)
        {
            Dispatch::Command(command) => Some(command),
            _ => None,
        }
    }

    /// Input from client `id` is being handled: it becomes the one whose size the
    /// workspace takes. Whether that size changed.
    pub(super) fn typed(&mut self, id: ClientId) -> bool {
        let before = self.size();
        self.current = Some(id);
        self.latest = Some(id);
        self.last_active = SystemTime::now();
        self.size() != before
    }

    /// The client whose input is being handled.
    pub(super) fn current(&self) -> Option<ClientId> {
        self.current
    }

    /// Client `id`'s terminal is now `cols`×`rows`. Whether the workspace's size changed.
    pub(super) fn resize(&mut self, id: ClientId, cols: u16, rows: u16) -> bool {
        let before = self.size();
        if let Some(client) = self.get_mut(id) {
            client.size = (cols, rows);
        }
        self.size() != before
    }

    /// Client `id` has read what was queued after falling behind: it is drawn whole again.
    pub(super) fn drained(&mut self, id: ClientId) {
        let (canvas, cursor) = (&self.canvas, self.cursor);
        let pictures = &self.pictures;
        if let Some(client) = self.list.iter_mut().find(|c| c.id == id) {
            client.behind = false;
            client.screen.forget();
            client.pictures.forget();
            if !canvas.area.is_empty() {
                client.show_whole(canvas, cursor, pictures);
            }
        }
    }

    /// Whether an attached terminal shows pictures.
    pub(super) fn show_pictures(&self) -> bool {
        self.list.iter().any(|c| c.pictures.shows())
    }

    /// Encodings to start now, as jobs: at most [`ENCODING_AT_ONCE`] run, taken from the
    /// clients in turn.
    pub(super) fn take_wanted(&mut self) -> Vec<EncodeRequest> {
        let mut out = Vec::new();
        while self.encoding < ENCODING_AT_ONCE {
            let before = out.len();
            for client in &mut self.list {
                if self.encoding >= ENCODING_AT_ONCE {
                    break;
                }
                if let Some(request) = client.pictures.next_request() {
                    self.encoding += 1;
                    out.push(request);
                }
            }
            if out.len() == before {
                break;
            }
        }
        out
    }

    /// A picture came back encoded; whether a frame should show it.
    pub(super) fn encoded(&mut self, encoded: Encoded) -> bool {
        self.encoding = self.encoding.saturating_sub(1);
        self.get_mut(encoded.client)
            .is_some_and(|c| c.pictures.encoded(encoded))
    }

    /// Bytes for every terminal outside frames (bells, notifications: sequences that each
    /// end in BEL), kept for the next one to attach when none is, the newest
    /// [`HELD_LIMIT`] bytes of them.
    pub(super) fn send_all(&mut self, bytes: &[u8]) {
        if self.list.is_empty() {
            self.held.extend_from_slice(bytes);
            if self.held.len() > HELD_LIMIT {
                // Cut after a BEL, so what is kept starts with a whole sequence.
                let over = self.held.len() - HELD_LIMIT;
                let cut = self.held[over - 1..]
                    .iter()
                    .position(|&b| b == 0x07)
                    .map_or(self.held.len(), |at| over + at);
                self.held.drain(..cut);
            }
            return;
        }
        for client in &self.list {
            client.outbox.output(bytes.to_vec());
        }
    }

    /// A clipboard write (OSC 52) for the terminal whose input is being handled, when that
    /// terminal takes them; whether it was sent.
    pub(super) fn send_clipboard(&mut self, bytes: &[u8]) -> bool {
        // One whose caps say it has no OSC 52 would drop it: the user is told instead.
        match self.current.and_then(|id| self.get(id)) {
            Some(client) if client.caps.osc52 => {
                client.outbox.output(bytes.to_vec());
                true
            }
            _ => false,
        }
    }

    /// Draws a whole frame of `size`: `draw` fills the canvas and says where the cursor
    /// goes; each client is shown what of it differs from what it shows. A client of the
    /// canvas's size gets the rows that changed alone, after a scroll region moved those
    /// that only moved, when its terminal takes them.
    pub(super) fn frame(&mut self, size: Rect, draw: impl FnOnce(&mut Buffer) -> Drawn) {
        std::mem::swap(&mut self.canvas, &mut self.before);
        if self.canvas.area == size {
            self.canvas.reset();
        } else {
            self.canvas = Buffer::empty(size);
        }
        let drawn = draw(&mut self.canvas);
        self.cursor = drawn.cursor;
        // Pictures are drawn over whole frames (and a terminal's own picture layer does
        // not move with a scroll region).
        let pictures = !self.pictures.is_empty() || !drawn.pictures.is_empty();
        self.pictures = drawn.pictures;
        let damage = (!pictures && self.before.area == size)
            .then(|| Damage::between(&self.before, &self.canvas));
        for client in &mut self.list {
            match &damage {
                Some(damage) if client.area() == size => {
                    let (scrolls, areas) = match &damage.moved {
                        Some((scrolls, areas)) if client.caps.scroll_regions => {
                            (scrolls.as_slice(), areas)
                        }
                        _ => (&[][..], &damage.changed),
                    };
                    client.show_patch(&self.canvas, areas, scrolls, self.cursor, &self.pictures);
                }
                _ => client.show_whole(&self.canvas, self.cursor, &self.pictures),
            }
        }
    }

    /// Draws again some rows only: `draw` fills them on the canvas and returns their
    /// areas and the cursor, or `None` when a whole frame is needed instead (then `false`
    /// is returned and nothing sent).
    pub(super) fn patch(
        &mut self,
        draw: impl FnOnce(&mut Buffer) -> Option<(Vec<Rect>, Option<Position>)>,
    ) -> bool {
        if self.canvas.area.is_empty() {
            return false;
        }
        let Some((areas, cursor)) = draw(&mut self.canvas) else {
            return false;
        };
        self.cursor = cursor;
        for client in &mut self.list {
            client.show_patch(&self.canvas, &areas, &[], cursor, &self.pictures);
        }
        true
    }

    /// Where the cursor was left on the canvas.
    pub(super) fn cursor(&self) -> Option<Position> {
        self.cursor
    }

    /// Sets the cursor's shape on every client that has another.
    pub(super) fn set_cursor_shape(&mut self, shape: Option<CursorShape>) {
        for client in &mut self.list {
            if client.shape == Some(shape) {
                continue;
            }
            client.shape = Some(shape);
            let style = match shape {
                None => SetCursorStyle::DefaultUserShape,
                Some(CursorShape::Block) => SetCursorStyle::SteadyBlock,
                Some(CursorShape::Underline) => SetCursorStyle::SteadyUnderScore,
                Some(CursorShape::Bar) => SetCursorStyle::SteadyBar,
            };
            let mut bytes = Vec::new();
            if crossterm::execute!(bytes, style).is_ok() {
                client.outbox.output(bytes);
            }
        }
    }
}

impl Client {
    fn area(&self) -> Rect {
        Rect::new(0, 0, self.size.0, self.size.1)
    }

    /// Shows the whole canvas, with its pictures when the terminal shows them.
    fn show_whole(
        &mut self,
        canvas: &Buffer,
        cursor: Option<Position>,
        pictures: &[march_panes::picture::Placement],
    ) {
        if self.behind {
            return;
        }
        let area = self.area();
        let (caps, id, shown) = (&self.caps, self.id, &mut self.pictures);
        let drawn = self.screen.frame(area, |buf| {
            compose(canvas, canvas.area, buf, caps);
            mark_unused(canvas.area, buf);
            shown.draw(id, pictures, canvas, buf);
            cursor.filter(|p| area.contains(*p))
        });
        self.send(drawn);
    }

    /// Shows `areas` of the canvas, after moving bands by `scrolls` (or all of it, when
    /// this client has no frame yet).
    fn show_patch(
        &mut self,
        canvas: &Buffer,
        areas: &[Rect],
        scrolls: &[Scroll],
        cursor: Option<Position>,
        pictures: &[march_panes::picture::Placement],
    ) {
        if self.behind {
            return;
        }
        let area = self.area();
        let caps = &self.caps;
        let patched = self.screen.patch(scrolls, |buf| {
            if buf.area != area {
                return None;
            }
            let mut shown = Vec::with_capacity(areas.len());
            for a in areas {
                let a = a.intersection(area).intersection(canvas.area);
                compose(canvas, a, buf, caps);
                shown.push(a);
            }
            Some((shown, cursor.filter(|p| area.contains(*p))))
        });
        match patched {
            Ok(true) => self.send(Ok(())),
            Ok(false) => self.show_whole(canvas, cursor, pictures),
            Err(e) => self.send(Err(e)),
        }
    }

    /// Sends what the screen wrote; falls behind when its queue is full.
    fn send(&mut self, drawn: std::io::Result<()>) {
        let bytes = self.written.take();
        if let Err(e) = drawn {
            // Writing into memory does not fail; if it did, the next frame starts over.
            tracing::warn!("client {}: frame not made: {e}", self.id);
            self.screen.forget();
            return;
        }
        if !bytes.is_empty() && !self.outbox.output(bytes) {
            self.behind = true;
            self.screen.forget();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::compose::{UNUSED, indexed};
    use super::*;
    use crate::server::connection::BEHIND_AT;
    use march_wire::ServerMessage;
    use ratatui::style::{Color, Style};
    use tokio::sync::mpsc::UnboundedReceiver;

    fn hello(cols: u16, rows: u16) -> Hello {
        Hello {
            cols,
            rows,
            caps: TermCaps {
                truecolor: true,
                ..TermCaps::default()
            },
            read_only: false,
        }
    }

    /// The terminal output queued in `rx`, as one string.
    fn output(rx: &mut UnboundedReceiver<ServerMessage>) -> String {
        let mut out = Vec::new();
        while let Ok(message) = rx.try_recv() {
            if let ServerMessage::Output(bytes) = message {
                out.extend(bytes);
            }
        }
        String::from_utf8(out).unwrap()
    }

    fn rows(bytes: &str, cols: u16, rows: u16) -> Vec<String> {
        let mut parser = vt100::Parser::new(rows, cols, 0);
        parser.process(bytes.as_bytes());
        parser.screen().rows(0, cols).collect()
    }

    /// A pane's text streaming: the title, `rows` rows of text ending at line `last`, and
    /// a status row that changes each time.
    fn streaming(b: &mut Buffer, last: usize, rows: u16) {
        b.set_string(
            0,
            0,
            "┌ agent",
            Style::default().fg(Color::Rgb(95, 135, 175)),
        );
        for y in 0..rows {
            let line = (last + 1 + usize::from(y)).saturating_sub(usize::from(rows));
            // Neighbouring lines share few cells, as prose does.
            let words = [
                "parser", "tokens", "an", "error", "spans", "of", "the", "lexer",
            ];
            let text: Vec<&str> = (0..4).map(|i| words[(line * 5 + i * 3) % 8]).collect();
            let text = format!("│ {line} {}", text.join(" "));
            b.set_string(0, 1 + y, text, Style::default());
        }
        b.set_string(0, rows + 1, format!("working {last} s"), Style::default());
    }

    #[test]
    fn streamed_text_is_moved_by_the_terminal_and_ends_as_a_full_repaint_would() {
        let mut clients = Clients::new();
        let with_caps = |scroll_regions| Hello {
            caps: TermCaps {
                scroll_regions,
                ..TermCaps::default()
            },
            ..hello(30, 10)
        };
        let (scrolls, mut scrolls_rx) = Outbox::unread();
        let (repaints, mut repaints_rx) = Outbox::unread();
        clients.attach(1, with_caps(true), scrolls);
        clients.attach(2, with_caps(false), repaints);
        let size = Rect::new(0, 0, 30, 10);
        let (mut scrolled, mut repainted) = (String::new(), String::new());
        for last in 0..40 {
            clients.frame(size, |b| {
                streaming(b, last, 8);
                Drawn::default()
            });
            scrolled.push_str(&output(&mut scrolls_rx));
            repainted.push_str(&output(&mut repaints_rx));
        }
        let mut whole = Buffer::empty(size);
        streaming(&mut whole, 39, 8);
        let expected: Vec<String> = (0..10)
            .map(|y| {
                (0..30)
                    .map(|x| whole[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect();
        let trimmed = |bytes: &str| -> Vec<String> {
            rows(bytes, 30, 10)
                .iter()
                .map(|r| r.trim_end().to_string())
                .collect()
        };
        assert_eq!(trimmed(&scrolled), expected);
        assert_eq!(trimmed(&repainted), expected);
        // The colours came through the moves too.
        let mut parser = vt100::Parser::new(10, 30, 0);
        parser.process(scrolled.as_bytes());
        assert_eq!(
            parser.screen().cell(0, 0).unwrap().fgcolor(),
            vt100::Color::Idx(67)
        );
        assert!(
            scrolled.len() * 2 < repainted.len(),
            "moving sends half of repainting at most: {} against {}",
            scrolled.len(),
            repainted.len()
        );
    }

    #[test]
    fn each_client_is_drawn_at_its_size_and_one_that_falls_behind_is_drawn_whole_later() {
        let mut clients = Clients::new();
        let (big, mut big_rx) = Outbox::unread();
        let (small, mut small_rx) = Outbox::unread();
        clients.attach(1, hello(12, 3), big);
        clients.attach(2, hello(6, 2), small);
        // The one attached last gives the workspace its size; typing takes it back.
        assert_eq!(clients.size(), (6, 2));
        assert!(clients.typed(1));
        assert_eq!(clients.size(), (12, 3));
        clients.frame(Rect::new(0, 0, 12, 3), |b| {
            b.set_string(0, 0, "hello world!", Style::default());
            Drawn::default()
        });
        let mut shown_big = output(&mut big_rx);
        let shown_small = output(&mut small_rx);
        assert_eq!(rows(&shown_big, 12, 3)[0], "hello world!");
        assert_eq!(rows(&shown_small, 6, 2)[0].trim_end(), "hello");
        // A patch reaches both; the small one sees what falls in its area.
        assert!(clients.patch(|b| {
            b.set_string(0, 0, "HELLO", Style::default());
            Some((vec![Rect::new(0, 0, 12, 1)], None))
        }));
        shown_big.push_str(&output(&mut big_rx));
        assert_eq!(rows(&shown_big, 12, 3)[0], "HELLO world!");
        let mut all_small = shown_small.clone();
        all_small.push_str(&output(&mut small_rx));
        assert_eq!(rows(&all_small, 6, 2)[0].trim_end(), "HELLO");

        // The small one stops reading: its queue is full, so frames are dropped for it
        // while the other goes on.
        {
            let client = clients.get_mut(2).unwrap();
            let filler = vec![b'.'; BEHIND_AT];
            client.outbox.output(filler);
        }
        let _ = small_rx.try_recv();
        clients.frame(Rect::new(0, 0, 12, 3), |b| {
            b.set_string(0, 0, "third frame", Style::default());
            Drawn::default()
        });
        assert!(output(&mut small_rx).is_empty(), "dropped while behind");
        shown_big.push_str(&output(&mut big_rx));
        assert_eq!(rows(&shown_big, 12, 3)[0].trim_end(), "third frame");
        // It reads again: drawn whole from the canvas, as if it had seen nothing.
        assert!(clients.get(2).unwrap().outbox.read_all());
        clients.drained(2);
        let whole = output(&mut small_rx);
        assert!(whole.contains("\x1b[2J"), "{whole:?}");
        assert_eq!(rows(&whole, 6, 2)[0].trim_end(), "third");
        // Gone: nothing more for it, and the workspace keeps the other's size.
        assert!(!clients.remove(2, "detached"));
        assert_eq!(clients.len(), 1);
    }

    #[test]
    fn a_clipboard_write_goes_only_to_the_typing_terminal_and_only_when_it_takes_them() {
        let mut clients = Clients::new();
        let (with, mut with_rx) = Outbox::unread();
        let (without, mut without_rx) = Outbox::unread();
        let mut takes_them = hello(80, 24);
        takes_them.caps.osc52 = true;
        clients.attach(1, takes_them, with);
        clients.attach(2, hello(80, 24), without);
        let copy = b"\x1b]52;c;aGk=\x07";
        clients.typed(2);
        assert!(!clients.send_clipboard(copy), "its caps say no OSC 52");
        clients.typed(1);
        assert!(clients.send_clipboard(copy));
        assert_eq!(output(&mut with_rx).as_bytes(), copy);
        assert_eq!(output(&mut without_rx), "");
    }

    #[test]
    fn what_rings_while_nobody_is_attached_is_kept_for_the_next_the_newest_only() {
        let mut clients = Clients::new();
        let note = |n: usize| format!("\x1b]9;March: session {n} needs you\x07\x07");
        let mut n = 0;
        while clients.held.len() < HELD_LIMIT {
            clients.send_all(note(n).as_bytes());
            n += 1;
        }
        clients.send_all(note(n).as_bytes());
        let held = String::from_utf8(clients.held.clone()).unwrap();
        assert!(held.len() <= HELD_LIMIT, "{}", held.len());
        assert!(
            held.starts_with("\x1b]9;") || held.starts_with('\x07'),
            "{held:?}"
        );
        assert!(!held.contains(&note(0)), "the oldest went first");
        let (outbox, mut rx) = Outbox::unread();
        clients.attach(1, hello(80, 24), outbox);
        let given = output(&mut rx);
        assert!(given.ends_with(&note(n)), "the newest is given on attach");
        assert_eq!(given, held);
        // Attached, nothing more is held.
        clients.send_all(b"\x07");
        assert!(clients.held.is_empty());
        assert_eq!(output(&mut rx), "\x07");
    }

    #[test]
    fn colours_come_down_to_the_nearest_indexed_one() {
        assert_eq!(indexed(Color::Rgb(0, 0, 0)), Color::Indexed(16));
        assert_eq!(indexed(Color::Rgb(255, 0, 0)), Color::Indexed(196));
        assert_eq!(indexed(Color::Rgb(255, 255, 255)), Color::Indexed(231));
        assert_eq!(indexed(Color::Rgb(128, 128, 128)), Color::Indexed(244));
        assert_eq!(indexed(Color::Rgb(95, 135, 175)), Color::Indexed(67));
        // Other colours stay as they are.
        assert_eq!(indexed(Color::Red), Color::Red);
        assert_eq!(indexed(Color::Indexed(3)), Color::Indexed(3));
    }

    #[test]
    fn a_larger_terminal_marks_what_the_workspace_does_not_use() {
        let mut canvas = Buffer::empty(Rect::new(0, 0, 4, 2));
        canvas.set_string(0, 0, "abcd", Style::default().fg(Color::Rgb(255, 0, 0)));
        let mut buf = Buffer::empty(Rect::new(0, 0, 6, 3));
        compose(&canvas, canvas.area, &mut buf, &TermCaps::default());
        mark_unused(canvas.area, &mut buf);
        assert_eq!(buf[(0, 0)].symbol(), "a");
        assert_eq!(buf[(0, 0)].fg, Color::Indexed(196));
        assert_eq!(buf[(4, 0)].symbol(), UNUSED);
        assert_eq!(buf[(0, 2)].symbol(), UNUSED);
        assert_eq!(buf[(3, 1)].symbol(), " ");
        // A smaller one is clipped: nothing to mark.
        let mut small = Buffer::empty(Rect::new(0, 0, 3, 1));
        compose(
            &canvas,
            canvas.area,
            &mut small,
            &TermCaps {
                truecolor: true,
                ..TermCaps::default()
            },
        );
        mark_unused(canvas.area, &mut small);
        assert_eq!(small[(2, 0)].symbol(), "c");
        assert_eq!(small[(2, 0)].fg, Color::Rgb(255, 0, 0));
    }
}
