//! Pictures: an image the user attached or an agent sent, known at once by its format and
//! size (read from its header), and decoded and encoded for a terminal's graphics protocol
//! only when a terminal that shows pictures draws it, off the UI loop. The transcript lays a
//! picture out as a label row (`[image 1024×768 png]`, all a terminal without graphics
//! shows) and, when some attached terminal shows pictures, the rows the picture covers.

use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use image::{ImageFormat, ImageReader, Limits};
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui_image::protocol::Protocol;
use ratatui_image::protocol::iterm2::Iterm2;
use ratatui_image::protocol::kitty::Kitty;
use ratatui_image::protocol::sixel::Sixel;
use ratatui_image::{FontSize, Resize};

/// Rows a picture covers at most in the transcript.
pub const MAX_ROWS: u16 = 12;
/// The cell size pictures are laid out for (the layout is shared by every terminal; each
/// scales the picture into the same cells at its own font size).
const LAYOUT_CELL: (u32, u32) = (8, 16);
/// The largest picture decoded, a side in pixels.
const MAX_SIDE: u32 = 8000;
/// The most memory one decoding may take.
const MAX_DECODE_BYTES: u64 = 256 << 20;

/// Why a picture cannot be made or drawn.
#[derive(Debug, thiserror::Error)]
pub enum PictureError {
    /// The data is not base64.
    #[error("the image data is not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// The bytes are not an image of a format March reads.
    #[error("not a PNG, JPEG, GIF or WebP image")]
    UnknownFormat,
    /// The image could not be read or decoded.
    #[error("the image cannot be read: {0}")]
    Decode(String),
    /// The terminal's protocol could not encode it.
    #[error("the image cannot be encoded for the terminal: {0}")]
    Encode(String),
}

/// An image, as sent: its bytes, format and size.
#[derive(Debug)]
pub struct Picture {
    id: u64,
    bytes: Arc<[u8]>,
    format: ImageFormat,
    width: u32,
    height: u32,
}

impl PartialEq for Picture {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Picture {
    /// A picture of `bytes`, when they are a PNG, JPEG, GIF or WebP image (read from
    /// their header only).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Arc<Picture>, PictureError> {
        let format = image::guess_format(&bytes).map_err(|_| PictureError::UnknownFormat)?;
        if !matches!(
            format,
            ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
        ) {
            return Err(PictureError::UnknownFormat);
        }
        let (width, height) = ImageReader::with_format(Cursor::new(&bytes), format)
            .into_dimensions()
            .map_err(|e| PictureError::Decode(e.to_string()))?;
        Ok(Arc::new(Picture {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            bytes: bytes.into(),
            format,
            width,
            height,
        }))
    }

    /// A picture of base64 `data` (as ACP carries images).
    pub fn from_base64(data: &str) -> Result<Arc<Picture>, PictureError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim())?;
        Picture::from_bytes(bytes)
    }

    /// This picture's number, unique in the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Its bytes, as sent.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its bytes as base64.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }

    /// Its MIME type (`image/png`).
    pub fn mime(&self) -> &'static str {
        self.format.to_mime_type()
    }

    /// Its format's short name (`png`).
    pub fn format_name(&self) -> &'static str {
        match self.format {
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Gif => "gif",
            ImageFormat::WebP => "webp",
            _ => "png",
        }
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// What a terminal without graphics shows: `[image 1024×768 png]`.
    pub fn label(&self) -> String {
        format!(
            "[image {}×{} {}]",
            self.width,
            self.height,
            self.format_name()
        )
    }

    /// The cells (columns, rows) the picture covers at most `max_width` columns wide: its
    /// size at the layout's cell size, scaled down to fit the width and [`MAX_ROWS`].
    pub fn cells(&self, max_width: u16) -> (u16, u16) {
        let cols = f64::from(self.width.div_ceil(LAYOUT_CELL.0).max(1));
        let rows = f64::from(self.height.div_ceil(LAYOUT_CELL.1).max(1));
        let scale = (f64::from(max_width.max(1)) / cols)
            .min(f64::from(MAX_ROWS) / rows)
            .min(1.0);
        let fit = |v: f64| (v * scale).round().clamp(1.0, f64::from(u16::MAX)) as u16;
        (fit(cols).min(max_width.max(1)), fit(rows).min(MAX_ROWS))
    }

    /// Its pixels, decoded within March's limits on size and memory (slow for a large
    /// picture: never on the UI loop).
    pub fn decode(&self) -> Result<image::DynamicImage, PictureError> {
        let mut reader = ImageReader::with_format(Cursor::new(&self.bytes[..]), self.format);
        let mut limits = Limits::default();
        limits.max_image_width = Some(MAX_SIDE);
        limits.max_image_height = Some(MAX_SIDE);
        limits.max_alloc = Some(MAX_DECODE_BYTES);
        reader.limits(limits);
        reader
            .decode()
            .map_err(|e| PictureError::Decode(e.to_string()))
    }

    /// The picture drawn into `cells` with `graphics` (decoding, scaling and encoding:
    /// slow for a large picture, so never on the UI loop). `kitty_id` names the image to a
    /// kitty terminal.
    pub fn encode(
        &self,
        cells: (u16, u16),
        graphics: Graphics,
        kitty_id: u32,
    ) -> Result<Protocol, PictureError> {
        let image = self.decode()?;
        let size = Size::new(cells.0, cells.1);
        let font = FontSize::new(graphics.cell.0.max(1), graphics.cell.1.max(1));
        let image = Resize::Fit(None).resize(&image, font, size, None);
        let encode = |e: ratatui_image::errors::Errors| PictureError::Encode(e.to_string());
        Ok(match graphics.protocol {
            GraphicsProtocol::Kitty => Protocol::Kitty(
                Kitty::new(image, size, kitty_id, graphics.tmux, false).map_err(encode)?,
            ),
            GraphicsProtocol::Sixel => {
                Protocol::Sixel(Sixel::new(image, size, graphics.tmux).map_err(encode)?)
            }
            GraphicsProtocol::Iterm2 => {
                Protocol::ITerm2(Iterm2::new(image, size, graphics.tmux).map_err(encode)?)
            }
        })
    }
}

/// A `w`×`h` PNG of one colour: a stand-in picture for tests and examples.
pub fn solid_png(w: u32, h: u32, rgba: [u8; 4]) -> Vec<u8> {
    let image = image::RgbaImage::from_pixel(w, h, image::Rgba(rgba));
    let mut out = Cursor::new(Vec::new());
    // Writing to memory fails only on a dimension PNG cannot hold: no picture then.
    match image.write_to(&mut out, ImageFormat::Png) {
        Ok(()) => out.into_inner(),
        Err(_) => Vec::new(),
    }
}

/// A terminal's graphics protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphicsProtocol {
    /// kitty's graphics protocol (unicode placeholders).
    Kitty,
    /// DEC sixel.
    Sixel,
    /// iTerm2's inline images.
    Iterm2,
}

impl GraphicsProtocol {
    /// The protocol a terminal's caps name (`kitty`, `sixel`, `iterm2`).
    pub fn from_name(name: &str) -> Option<GraphicsProtocol> {
        match name {
            "kitty" => Some(GraphicsProtocol::Kitty),
            "sixel" => Some(GraphicsProtocol::Sixel),
            "iterm2" => Some(GraphicsProtocol::Iterm2),
            _ => None,
        }
    }
}

/// How a terminal shows pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Graphics {
    /// Its protocol.
    pub protocol: GraphicsProtocol,
    /// Its cell size in pixels (width, height).
    pub cell: (u16, u16),
    /// It is inside tmux: sequences are wrapped for tmux to pass through.
    pub tmux: bool,
}

/// A picture drawn in the last frame: its cells on screen, blank as its pane left them; a
/// terminal that shows pictures draws the picture over them, unless something was drawn
/// over them since (a popup, a dialog).
#[derive(Debug, Clone)]
pub struct Placement {
    /// The picture.
    pub picture: Arc<Picture>,
    /// Its cells on screen.
    pub area: Rect,
    /// A hash of those cells as the transcript left them.
    cells: u64,
}

impl Placement {
    /// `picture` drawn at `area` of `buf`, as the cells are now.
    pub fn new(picture: Arc<Picture>, area: Rect, buf: &Buffer) -> Placement {
        let cells = fingerprint(buf, area);
        Placement {
            picture,
            area,
            cells,
        }
    }

    /// Whether its cells on `buf` are as they were left: nothing covers the picture.
    pub fn uncovered(&self, buf: &Buffer) -> bool {
        self.area.intersection(buf.area) == self.area && fingerprint(buf, self.area) == self.cells
    }
}

/// A hash of the cells of `area` on `buf`.
fn fingerprint(buf: &Buffer, area: Rect) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let area = area.intersection(buf.area);
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let cell = &buf[(x, y)];
            cell.symbol().hash(&mut hasher);
            cell.fg.hash(&mut hasher);
            cell.bg.hash(&mut hasher);
            cell.modifier.hash(&mut hasher);
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w`×`h` PNG.
    pub(crate) fn png(w: u32, h: u32) -> Vec<u8> {
        solid_png(w, h, [200, 30, 30, 255])
    }

    #[test]
    fn a_picture_knows_its_format_and_size_from_its_header() {
        let picture = Picture::from_bytes(png(1024, 768)).unwrap();
        assert_eq!(picture.size(), (1024, 768));
        assert_eq!(picture.mime(), "image/png");
        assert_eq!(picture.label(), "[image 1024×768 png]");
        let again = Picture::from_base64(&picture.base64()).unwrap();
        assert_eq!(again.size(), (1024, 768));
        assert_ne!(again.id(), picture.id());
    }

    #[test]
    fn what_is_not_an_image_is_refused() {
        assert!(matches!(
            Picture::from_bytes(b"hello, world".to_vec()),
            Err(PictureError::UnknownFormat)
        ));
        assert!(matches!(
            Picture::from_base64("not base64!"),
            Err(PictureError::Base64(_))
        ));
        // A PNG cut after its signature.
        let cut = png(4, 4)[..12].to_vec();
        assert!(Picture::from_bytes(cut).is_err());
    }

    #[test]
    fn cells_keep_the_aspect_within_the_width_and_the_row_cap() {
        let wide = Picture::from_bytes(png(1600, 400)).unwrap();
        // 200×25 cells natural, scaled to 60 columns.
        assert_eq!(wide.cells(60), (60, 8));
        let tall = Picture::from_bytes(png(200, 2000)).unwrap();
        assert_eq!(tall.cells(80).1, MAX_ROWS);
        let tiny = Picture::from_bytes(png(2, 2)).unwrap();
        assert_eq!(tiny.cells(80), (1, 1));
    }

    /// The first cell's symbol of `protocol` drawn at 8×2 cells.
    fn first_cell(protocol: &Protocol) -> String {
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 3));
        ratatui::widgets::Widget::render(
            ratatui_image::Image::new(protocol),
            Rect::new(0, 0, 8, 2),
            &mut buf,
        );
        buf[(0, 0)].symbol().to_string()
    }

    #[test]
    fn encoding_for_kitty_or_sixel_writes_the_picture_in_its_protocol() {
        let picture = Picture::from_bytes(png(64, 32)).unwrap();
        let kitty = Graphics {
            protocol: GraphicsProtocol::Kitty,
            cell: (8, 16),
            tmux: false,
        };
        let drawn = first_cell(&picture.encode((8, 2), kitty, 42).unwrap());
        assert!(
            drawn.contains("\x1b_G") && drawn.contains("i=42"),
            "{drawn:?}"
        );
        let sixel = Graphics {
            protocol: GraphicsProtocol::Sixel,
            ..kitty
        };
        let drawn = first_cell(&picture.encode((8, 2), sixel, 0).unwrap());
        assert!(drawn.contains("\x1bP9;1;0q"), "{drawn:?}");
    }
}
