//! Avatars: the face of an agent in its pane's header, the switcher and the supervisor view,
//! which also tells at a glance what the session wants. A terminal that shows pictures gets
//! the agent's image, cut round and ringed in the colour of the session's attention state;
//! any other gets the agent's initial in that colour. Both take the same two cells, so a
//! layout does not depend on who is attached.

use std::io::Cursor;
use std::sync::Arc;

use image::imageops::FilterType;
use image::{ImageFormat, Rgba, RgbaImage};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use crate::attention::Attention;
use crate::picture::{Picture, PictureError, Placement};
use crate::theme::Theme;

/// Cells an avatar takes: two columns of one row (about square at the usual cell shape).
pub const WIDTH: u16 = 2;
/// The side, in pixels, of the pictures made from an avatar's image.
const SIDE: u32 = 64;
/// The ring's width in pixels.
const RING: f32 = 7.0;

/// An agent's avatar: its initial and, when it has an image, that image in every
/// attention state.
#[derive(Debug)]
pub struct Avatar {
    glyph: String,
    pictures: Option<Vec<Arc<Picture>>>,
}

impl Avatar {
    /// The avatar of `agent` without an image: its initial.
    pub fn initial(agent: &str) -> Avatar {
        Avatar {
            glyph: initial(agent),
            pictures: None,
        }
    }

    /// The avatar of `agent` made from the image `bytes`, ringed in each state's colour
    /// of `theme` (decoding and scaling: slow, never on the UI loop).
    pub fn from_image(agent: &str, bytes: Vec<u8>, theme: &Theme) -> Result<Avatar, PictureError> {
        let source = Picture::from_bytes(bytes)?.decode()?;
        let (w, h) = (source.width(), source.height());
        let side = w.min(h).max(1);
        // The middle square, scaled to the pictures' side.
        let square = source
            .crop_imm((w - side) / 2, (h - side) / 2, side, side)
            .resize_exact(SIDE, SIDE, FilterType::Triangle)
            .to_rgba8();
        let pictures = Attention::ALL
            .iter()
            .map(|state| {
                let ring = theme.rgb(state.slot());
                Picture::from_bytes(png(&ringed(&square, ring, *state == Attention::Idle))?)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Avatar {
            glyph: initial(agent),
            pictures: Some(pictures),
        })
    }

    /// Whether it has an image.
    pub fn has_image(&self) -> bool {
        self.pictures.is_some()
    }

    /// The glyph terminals without pictures show.
    pub fn glyph(&self) -> &str {
        &self.glyph
    }

    /// The picture for `state`, when it has an image.
    pub fn picture(&self, state: Attention) -> Option<&Arc<Picture>> {
        self.pictures.as_ref()?.get(state.index())
    }

    /// Draws it in `state` at `(x, y)` of `buf` over `base`: the initial in the state's
    /// colour and a space, where a terminal that shows pictures draws the picture instead
    /// (the placement returned, when `pictures` and it has an image).
    pub fn draw(
        &self,
        state: Attention,
        (x, y): (u16, u16),
        buf: &mut Buffer,
        theme: &Theme,
        base: Style,
        pictures: bool,
    ) -> Option<Placement> {
        let area = Rect::new(x, y, WIDTH, 1).intersection(buf.area);
        if area.width < WIDTH {
            return None;
        }
        let style = base
            .patch(theme.style(state.slot()))
            .add_modifier(Modifier::BOLD);
        buf.set_string(x, y, &self.glyph, style);
        buf.set_string(x + 1, y, " ", base);
        if !pictures {
            return None;
        }
        let picture = self.picture(state)?;
        Some(Placement::new(picture.clone(), area, buf))
    }
}

/// An avatar and the state to show it in: what a view draws for one session.
#[derive(Debug, Clone)]
pub struct AvatarBadge {
    /// The avatar.
    pub avatar: Arc<Avatar>,
    /// The session's attention state.
    pub state: Attention,
}

impl PartialEq for AvatarBadge {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.avatar, &other.avatar) && self.state == other.state
    }
}

impl AvatarBadge {
    /// Draws it at `(x, y)`: see [`Avatar::draw`].
    pub fn draw(
        &self,
        at: (u16, u16),
        buf: &mut Buffer,
        theme: &Theme,
        base: Style,
        pictures: bool,
    ) -> Option<Placement> {
        self.avatar.draw(self.state, at, buf, theme, base, pictures)
    }
}

/// The first letter or digit of `agent`, upper-cased (`?` for a name without one).
fn initial(agent: &str) -> String {
    agent
        .chars()
        .find(|c| c.is_alphanumeric())
        .map_or_else(|| "?".to_string(), |c| c.to_uppercase().collect())
}

/// `square` cut round, with a ring of `ring` at its edge; `dim`: faded, for a session
/// that wants nothing.
fn ringed(square: &RgbaImage, ring: [u8; 3], dim: bool) -> RgbaImage {
    let mut out = square.clone();
    let centre = SIDE as f32 / 2.0;
    for (x, y, pixel) in out.enumerate_pixels_mut() {
        let (dx, dy) = (x as f32 + 0.5 - centre, y as f32 + 0.5 - centre);
        let r = (dx * dx + dy * dy).sqrt();
        if r > centre {
            *pixel = Rgba([0, 0, 0, 0]);
        } else if r > centre - RING {
            *pixel = Rgba([ring[0], ring[1], ring[2], 255]);
        } else if dim {
            pixel.0[3] = (u16::from(pixel.0[3]) * 3 / 5) as u8;
        }
    }
    out
}

/// `image` as PNG bytes.
fn png(image: &RgbaImage) -> Result<Vec<u8>, PictureError> {
    let mut out = Cursor::new(Vec::new());
    image
        .write_to(&mut out, ImageFormat::Png)
        .map_err(|e| PictureError::Encode(e.to_string()))?;
    Ok(out.into_inner())
}

/// Helpers for tests of the views that show avatars (here and in the app).
pub mod testing {
    use super::*;

    /// The avatar of agent `march` made from a plain green image, in `theme`'s colours.
    pub fn avatar(theme: &Theme) -> Arc<Avatar> {
        let bytes = crate::picture::solid_png(120, 80, [10, 200, 30, 255]);
        let made = Avatar::from_image("march", bytes, theme);
        Arc::new(made.unwrap_or_else(|_| Avatar::initial("march")))
    }

    /// Row `y` of `buf` as a terminal shows it, and how its avatars show: each picture
    /// `placed` as `▛▜` in the text and named by its state after it; each initial of
    /// `avatar` drawn without a picture named with its colour.
    pub fn shown_row(buf: &Buffer, y: u16, placed: &[Placement], avatar: &Avatar) -> String {
        let area = buf.area;
        let mut text = String::new();
        let mut notes = Vec::new();
        for x in area.left()..area.right() {
            if let Some(p) = placed
                .iter()
                .find(|p| p.area.y == y && p.area.x <= x && x < p.area.right())
            {
                text.push(if x == p.area.x { '▛' } else { '▜' });
                if x == p.area.x {
                    let state = Attention::ALL
                        .into_iter()
                        .find(|s| avatar.picture(*s).is_some_and(|a| a.id() == p.picture.id()));
                    notes.push(format!("picture {state:?} at {x}"));
                }
                continue;
            }
            let cell = &buf[(x, y)];
            text.push_str(cell.symbol());
            if cell.symbol() == avatar.glyph() && cell.modifier.contains(Modifier::BOLD) {
                notes.push(format!("initial {:?} at {x}", cell.fg));
            }
        }
        format!("{text}   {}", notes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::dark;
    use crate::theme::Slot;

    fn avatar() -> Arc<Avatar> {
        testing::avatar(&dark())
    }

    #[test]
    fn an_image_becomes_a_round_picture_ringed_in_each_states_colour() {
        let avatar = avatar();
        assert_eq!(avatar.glyph(), "M");
        let theme = dark();
        for state in Attention::ALL {
            let picture = avatar.picture(state).unwrap();
            assert_eq!(picture.size(), (SIDE, SIDE));
            let pixels = picture.decode().unwrap().to_rgba8();
            // Outside the circle: clear; on the ring: the state's colour; inside: the image.
            assert_eq!(pixels.get_pixel(0, 0).0[3], 0);
            let ring = theme.rgb(state.slot());
            assert_eq!(
                pixels.get_pixel(SIDE / 2, 2).0,
                [ring[0], ring[1], ring[2], 255]
            );
            let middle = pixels.get_pixel(SIDE / 2, SIDE / 2).0;
            assert_eq!(&middle[..3], &[10, 200, 30]);
            let alpha = if state == Attention::Idle { 153 } else { 255 };
            assert_eq!(middle[3], alpha, "{state:?}");
        }
        // Each state's picture is its own, so terminals redraw it when the state changes.
        assert_ne!(
            avatar.picture(Attention::Working).unwrap().id(),
            avatar.picture(Attention::NeedsYou).unwrap().id()
        );
    }

    #[test]
    fn what_is_not_an_image_makes_no_avatar() {
        assert!(Avatar::from_image("march", b"not an image".to_vec(), &dark()).is_err());
    }

    #[test]
    fn the_initial_is_the_first_letter_or_digit() {
        assert_eq!(initial("claude"), "C");
        assert_eq!(initial("--9lives"), "9");
        assert_eq!(initial("ñandú"), "Ñ");
        assert_eq!(initial("--"), "?");
    }

    #[test]
    fn drawn_it_is_the_initial_in_the_states_colour_and_a_picture_where_shown() {
        let theme = dark();
        let avatar = avatar();
        let mut buf = Buffer::empty(Rect::new(0, 0, 6, 1));
        let placed = avatar.draw(
            Attention::NeedsYou,
            (1, 0),
            &mut buf,
            &theme,
            Style::default(),
            true,
        );
        assert_eq!(buf[(1, 0)].symbol(), "M");
        assert_eq!(buf[(1, 0)].fg, theme.style(Slot::Warning).fg.unwrap());
        let placed = placed.unwrap();
        assert_eq!(placed.area, Rect::new(1, 0, 2, 1));
        assert_eq!(
            placed.picture.id(),
            avatar.picture(Attention::NeedsYou).unwrap().id()
        );
        // Without pictures, or without an image, the initial alone.
        assert!(
            avatar
                .draw(
                    Attention::Done,
                    (1, 0),
                    &mut buf,
                    &theme,
                    Style::default(),
                    false
                )
                .is_none()
        );
        let plain = Avatar::initial("claude");
        assert!(
            plain
                .draw(
                    Attention::Done,
                    (1, 0),
                    &mut buf,
                    &theme,
                    Style::default(),
                    true
                )
                .is_none()
        );
        assert_eq!(buf[(1, 0)].symbol(), "C");
        // No room: nothing drawn.
        assert!(
            avatar
                .draw(
                    Attention::Done,
                    (5, 0),
                    &mut buf,
                    &theme,
                    Style::default(),
                    true
                )
                .is_none()
        );
    }
}
