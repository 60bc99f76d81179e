//! Pictures on the attached terminals. The canvas every client is made from holds a
//! picture's label and blank rows (see [`Placement`]); a client whose terminal answered the graphics query
//! gets the picture drawn over those rows in its own protocol (kitty, sixel, iTerm2), at
//! its own cell size. Encoding a picture is slow, so it is a job: until its result is back
//! the client shows the label, then it is kept per client (a kitty terminal is sent each
//! picture once).

use std::collections::HashMap;
use std::sync::Arc;

use march_panes::picture::{Graphics, GraphicsProtocol, Picture, Placement};
use march_wire::TermCaps;
use ratatui::buffer::Buffer;
use ratatui::widgets::Widget;
use ratatui_image::protocol::Protocol;

use crate::server::connection::ClientId;

/// Encodings kept per client; the least recently drawn go first.
const KEPT: usize = 32;
/// The cell size assumed when a terminal shows pictures but did not say its own.
const DEFAULT_CELL: (u16, u16) = (10, 20);

/// A picture one client needs in its protocol: the job's work.
pub(crate) struct EncodeRequest {
    client: ClientId,
    picture: Arc<Picture>,
    cells: (u16, u16),
    graphics: Graphics,
    kitty_id: u32,
}

impl EncodeRequest {
    /// Encodes the picture (slow: run it on a job thread).
    pub(crate) fn run(self) -> Encoded {
        let result = self
            .picture
            .encode(self.cells, self.graphics, self.kitty_id)
            .map_err(|e| e.to_string());
        Encoded {
            client: self.client,
            key: (self.picture.id(), self.cells),
            graphics: self.graphics,
            result,
        }
    }
}

/// A picture encoded for a client.
pub(crate) struct Encoded {
    /// For whom.
    pub client: ClientId,
    key: Key,
    graphics: Graphics,
    result: Result<Protocol, String>,
}

impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoded")
            .field("client", &self.client)
            .field("key", &self.key)
            .field("ok", &self.result.is_ok())
            .finish()
    }
}

/// A picture at a size in cells.
type Key = (u64, (u16, u16));

enum Encoding {
    /// Asked for, in the queue.
    Queued,
    /// Being encoded.
    Running,
    Ready(Box<Protocol>),
    Failed,
}

/// One client's pictures.
pub(crate) struct ClientPictures {
    graphics: Option<Graphics>,
    encodings: HashMap<Key, (Encoding, u64)>,
    /// Encodings asked for and not started, oldest first.
    queue: Vec<EncodeRequest>,
    /// Counts uses, for dropping the least recently used encoding.
    clock: u64,
    next_kitty_id: u32,
}

impl ClientPictures {
    /// For a terminal with `caps`.
    pub(crate) fn new(caps: &TermCaps) -> ClientPictures {
        let graphics = caps
            .graphics
            .as_deref()
            .and_then(GraphicsProtocol::from_name)
            // Sixel and iTerm2 images take the pixels they are given: drawn at a guessed
            // cell size they would spill out of their cells. Kitty scales into the cells.
            .filter(|p| *p == GraphicsProtocol::Kitty || caps.cell_pixels.is_some())
            .map(|protocol| Graphics {
                protocol,
                cell: caps.cell_pixels.unwrap_or(DEFAULT_CELL),
                tmux: false,
            });
        ClientPictures {
            graphics,
            encodings: HashMap::new(),
            queue: Vec::new(),
            clock: 0,
            // Random, so pictures of an earlier attach to the same terminal are not reused.
            next_kitty_id: fastrand::u32(1..u32::MAX / 2),
        }
    }

    /// Whether the terminal shows pictures.
    pub(crate) fn shows(&self) -> bool {
        self.graphics.is_some()
    }

    /// Draws `drawn` pictures uncovered on `canvas` over `buf` (the client's frame);
    /// those not encoded yet are queued (one size per picture: a newer size replaces a
    /// queued one, so resizing does not queue every size passed through).
    pub(crate) fn draw(
        &mut self,
        client: ClientId,
        drawn: &[Placement],
        canvas: &Buffer,
        buf: &mut Buffer,
    ) {
        let Some(graphics) = self.graphics else {
            return;
        };
        for placed in drawn {
            let area = placed.area;
            if !placed.uncovered(canvas) || area.intersection(buf.area) != area {
                continue;
            }
            self.clock += 1;
            let key = (placed.picture.id(), (area.width, area.height));
            match self.encodings.get_mut(&key) {
                Some((Encoding::Ready(protocol), used)) => {
                    *used = self.clock;
                    ratatui_image::Image::new(protocol).render(area, buf);
                }
                Some((_, used)) => *used = self.clock,
                None => {
                    let encodings = &mut self.encodings;
                    self.queue.retain(|r| {
                        let stale = r.picture.id() == key.0;
                        if stale {
                            encodings.remove(&(key.0, r.cells));
                        }
                        !stale
                    });
                    self.encodings.insert(key, (Encoding::Queued, self.clock));
                    self.next_kitty_id = self.next_kitty_id.wrapping_add(1).max(1);
                    self.queue.push(EncodeRequest {
                        client,
                        picture: placed.picture.clone(),
                        cells: key.1,
                        graphics,
                        kitty_id: self.next_kitty_id,
                    });
                }
            }
        }
        self.trim();
    }

    /// The next encoding to start, if one waits.
    pub(crate) fn next_request(&mut self) -> Option<EncodeRequest> {
        if self.queue.is_empty() {
            return None;
        }
        let request = self.queue.remove(0);
        if let Some((state, _)) = self
            .encodings
            .get_mut(&(request.picture.id(), request.cells))
        {
            *state = Encoding::Running;
        }
        Some(request)
    }

    /// An encoding came back; whether it is drawn from now on.
    pub(crate) fn encoded(&mut self, encoded: Encoded) -> bool {
        if Some(encoded.graphics) != self.graphics {
            return false;
        }
        let Some((slot, _)) = self.encodings.get_mut(&encoded.key) else {
            return false;
        };
        *slot = match encoded.result {
            Ok(protocol) => Encoding::Ready(Box::new(protocol)),
            Err(e) => {
                tracing::debug!("picture not drawn: {e}");
                Encoding::Failed
            }
        };
        matches!(slot, Encoding::Ready(_))
    }

    /// What the terminal shows is unknown (frames were dropped): pictures are encoded and
    /// sent again (a result still on its way finds no place and is dropped).
    pub(crate) fn forget(&mut self) {
        self.encodings.clear();
        self.queue.clear();
    }

    fn trim(&mut self) {
        while self.encodings.len() > KEPT {
            // Only finished ones go: a queued or running one is still to come back.
            let Some(oldest) = self
                .encodings
                .iter()
                .filter(|(_, (e, _))| matches!(e, Encoding::Ready(_) | Encoding::Failed))
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| *k)
            else {
                return;
            };
            self.encodings.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    /// A `w`×`h` PNG.
    fn png(w: u32, h: u32) -> Vec<u8> {
        march_panes::picture::solid_png(w, h, [200, 30, 30, 255])
    }

    fn kitty_caps() -> TermCaps {
        TermCaps {
            graphics: Some("kitty".to_string()),
            cell_pixels: Some((8, 16)),
            ..TermCaps::default()
        }
    }

    #[test]
    fn a_picture_is_encoded_once_then_drawn_until_covered() {
        let picture = Picture::from_bytes(png(32, 32)).unwrap();
        let area = Rect::new(2, 1, 4, 2);
        let canvas = Buffer::empty(Rect::new(0, 0, 20, 6));
        let drawn = vec![Placement::new(picture, area, &canvas)];
        let mut pictures = ClientPictures::new(&kitty_caps());
        let mut buf = canvas.clone();
        pictures.draw(7, &drawn, &canvas, &mut buf);
        assert_eq!(buf, canvas, "nothing drawn before the encoding is back");
        pictures.draw(7, &drawn, &canvas, &mut buf);
        let request = pictures.next_request().unwrap();
        assert!(pictures.next_request().is_none(), "asked for once");
        pictures.draw(7, &drawn, &canvas, &mut buf);
        assert!(
            pictures.next_request().is_none(),
            "not asked again while running"
        );
        assert!(pictures.encoded(request.run()));
        pictures.draw(7, &drawn, &canvas, &mut buf);
        assert!(
            buf[(2, 1)].symbol().contains("\x1b_G"),
            "kitty transmits it"
        );
        // A popup over it: the label's place shows what the popup drew instead.
        let mut covered = canvas.clone();
        covered[(3, 1)].set_symbol("x");
        let mut buf = covered.clone();
        pictures.draw(7, &drawn, &covered, &mut buf);
        assert_eq!(buf, covered);
        assert!(pictures.next_request().is_none());
    }

    #[test]
    fn a_terminal_without_graphics_gets_no_pictures() {
        let picture = Picture::from_bytes(png(8, 8)).unwrap();
        let canvas = Buffer::empty(Rect::new(0, 0, 10, 4));
        let drawn = vec![Placement::new(picture, Rect::new(0, 0, 2, 1), &canvas)];
        let mut pictures = ClientPictures::new(&TermCaps::default());
        let mut buf = canvas.clone();
        pictures.draw(1, &drawn, &canvas, &mut buf);
        assert!(pictures.next_request().is_none());
        assert_eq!(buf, canvas);
        // Sixel without a known cell size would draw out of its cells: not used.
        let sixel = TermCaps {
            graphics: Some("sixel".to_string()),
            ..TermCaps::default()
        };
        assert!(!ClientPictures::new(&sixel).shows());
    }
}
