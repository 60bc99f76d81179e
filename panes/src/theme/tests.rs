//! Theme loading tests: built-ins complete and readable, user themes, inheritance, errors.

use std::path::Path;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::*;

fn user_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("themes")).unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join("themes").join(name), text).unwrap();
    }
    dir
}

fn load(dir: &Path, name: &str) -> (Theme, Vec<ThemeError>) {
    load_theme(Some(dir), name)
}

fn messages(errors: &[ThemeError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn builtins_load_cleanly_and_set_every_slot() {
    for name in builtin_names() {
        let (theme, errors) = load_theme(None, name);
        assert!(errors.is_empty(), "{name}: {:?}", messages(&errors));
        assert_eq!(theme.name, name);
        for &slot in Slot::ALL {
            assert!(
                theme.styles.contains_key(&slot),
                "{name} does not set `{}`",
                slot.key()
            );
        }
        assert_eq!(Theme::builtin(name), Some(theme));
    }
    assert_eq!(Theme::builtin("nope"), None);
    assert_eq!(Theme::default().name, "dark");
}

#[test]
fn light_and_dark_differ() {
    let dark = Theme::builtin("dark").unwrap();
    let light = Theme::builtin("light").unwrap();
    assert_ne!(dark.syntax, light.syntax);
    for slot in [
        Slot::Background,
        Slot::Text,
        Slot::Agent,
        Slot::DiffAdded,
        Slot::Heading,
    ] {
        assert_ne!(dark.style(slot), light.style(slot), "{}", slot.key());
    }
}

/// WCAG contrast ratio, so the built-in palettes stay readable when someone edits them.
fn contrast(a: Color, b: Color) -> f64 {
    fn luminance(color: Color) -> f64 {
        let Color::Rgb(r, g, b) = color else {
            panic!("built-ins use rgb, got {color:?}")
        };
        let channel = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.03928 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
    }
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[test]
fn builtin_text_has_readable_contrast() {
    for name in builtin_names() {
        let theme = Theme::builtin(name).unwrap();
        let background = theme.style(Slot::Background).bg.unwrap();
        for &slot in Slot::ALL {
            let style = theme.style(slot);
            let Some(fg) = style.fg else { continue };
            // The ANSI colours are the programs' to pair: black on the dark background is
            // meant to be dark.
            if slot.key().starts_with("terminal.ansi.") {
                continue;
            }
            let bg = style.bg.unwrap_or(background);
            // Borders and rules are lines, not text; faint text is meant to recede.
            let minimum = match slot {
                Slot::Border | Slot::Rule => 1.4,
                Slot::Thinking | Slot::PromptPlaceholder => 2.8,
                _ => 4.5,
            };
            let ratio = contrast(fg, bg);
            assert!(
                ratio >= minimum,
                "{name} `{}`: contrast {ratio:.2} < {minimum}",
                slot.key()
            );
        }
    }
}

#[test]
fn overriding_a_palette_colour_recolours_every_style_using_it() {
    let dir = user_dir(&[(
        "mine.toml",
        "inherits = \"dark\"\n[palette]\nblue = \"#ff0000\"\n",
    )]);
    let (mine, errors) = load(dir.path(), "mine");
    assert!(errors.is_empty(), "{:?}", messages(&errors));
    assert_eq!(mine.name, "mine");
    let dark = Theme::builtin("dark").unwrap();
    let old_blue = dark.style(Slot::Info).fg.unwrap();
    let red = Color::Rgb(0xff, 0, 0);
    let mut changed = 0;
    for &slot in Slot::ALL {
        let (before, after) = (dark.style(slot), mine.style(slot));
        let swap = |c: Option<Color>| c.map(|c| if c == old_blue { red } else { c });
        assert_eq!(after.fg, swap(before.fg), "{}", slot.key());
        assert_eq!(after.bg, swap(before.bg), "{}", slot.key());
        assert_eq!(after.add_modifier, before.add_modifier, "{}", slot.key());
        changed += usize::from(before != after);
    }
    assert!(changed >= 4, "only {changed} slots used blue");
    assert_eq!(mine.syntax, dark.syntax);
}

#[test]
fn child_styles_override_per_key() {
    let text = "inherits = \"light\"\nsyntax = \"Solarized (light)\"\n[styles]\n\
                \"ui.text\" = { fg = \"magenta\", modifiers = [\"bold\"] }\n\"ui.error\" = 196\n";
    let dir = user_dir(&[("mine.toml", text)]);
    let (mine, errors) = load(dir.path(), "mine");
    assert!(errors.is_empty(), "{:?}", messages(&errors));
    let light = Theme::builtin("light").unwrap();
    let magenta = light.style(Slot::ListMarker).fg;
    assert_eq!(
        mine.style(Slot::Text),
        Style::default().fg(magenta.unwrap()).bold()
    );
    assert_eq!(
        mine.style(Slot::Error),
        Style::default().fg(Color::Indexed(196))
    );
    assert_eq!(mine.style(Slot::Agent), light.style(Slot::Agent));
    assert_eq!(mine.syntax, "Solarized (light)");
}

#[test]
fn broken_toml_names_file_and_line_and_falls_back() {
    let dir = user_dir(&[(
        "mine.toml",
        "inherits = \"light\"\n[styles]\n\"ui.text\" = {\n",
    )]);
    let (theme, errors) = load(dir.path(), "mine");
    assert_eq!(theme, Theme::builtin("dark").unwrap());
    assert_eq!(errors.len(), 1, "{:?}", messages(&errors));
    let ThemeError::Syntax { file, line, .. } = &errors[0] else {
        panic!("{errors:?}")
    };
    assert!(file.ends_with("mine.toml"), "{file}");
    assert_eq!(*line, 3);
    assert!(
        errors[0]
            .to_string()
            .contains("mine.toml:3: TOML syntax error")
    );
}

#[test]
fn broken_user_copy_of_a_builtin_falls_back_to_that_builtin() {
    let dir = user_dir(&[("light.toml", "syntax = \n")]);
    let (theme, errors) = load(dir.path(), "light");
    assert_eq!(theme, Theme::builtin("light").unwrap());
    assert_eq!(errors.len(), 1);
}

#[test]
fn unknown_colour_names_key_and_line_and_keeps_the_inherited_style() {
    let text = "# mine\ninherits = \"dark\"\n\n[palette]\naccent = \"#00ff00\"\n\n[styles]\n\
                \"ui.text\" = \"blu\"\n\"ui.title\" = \"accent\"\n";
    let dir = user_dir(&[("mine.toml", text)]);
    let (theme, errors) = load(dir.path(), "mine");
    let message = messages(&errors).join("\n");
    let expected_file = dir.path().join("themes/mine.toml");
    assert_eq!(
        message,
        format!(
            "{}:8: unknown color `blu` in `ui.text`",
            expected_file.display()
        )
    );
    let dark = Theme::builtin("dark").unwrap();
    assert_eq!(theme.style(Slot::Text), dark.style(Slot::Text));
    assert_eq!(theme.style(Slot::Title).fg, Some(Color::Rgb(0, 0xff, 0)));
}

#[test]
fn bad_palette_colour_keeps_the_parent_colour() {
    let dir = user_dir(&[(
        "mine.toml",
        "inherits = \"dark\"\n[palette]\nblue = \"#12\"\n",
    )]);
    let (theme, errors) = load(dir.path(), "mine");
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .to_string()
            .ends_with(":3: unknown color `#12` in `palette.blue`")
    );
    assert_eq!(
        theme.style(Slot::Info),
        Theme::builtin("dark").unwrap().style(Slot::Info)
    );
}

#[test]
fn inherits_cycle_is_detected() {
    let dir = user_dir(&[
        (
            "a.toml",
            "inherits = \"b\"\n[styles]\n\"ui.text\" = \"#ff0000\"\n",
        ),
        ("b.toml", "# b\ninherits = \"a\"\n"),
    ]);
    let (theme, errors) = load(dir.path(), "a");
    assert_eq!(errors.len(), 1, "{:?}", messages(&errors));
    let message = errors[0].to_string();
    assert!(
        message.contains("b.toml:2: `inherits` makes a cycle: a -> b -> a"),
        "{message}"
    );
    // What could be resolved is kept; the rest comes from the fallback.
    assert_eq!(
        theme.style(Slot::Text),
        Style::default().fg(Color::Rgb(0xff, 0, 0))
    );
    assert!(Slot::ALL.iter().all(|slot| theme.styles.contains_key(slot)));
}

#[test]
fn self_inheritance_of_a_user_theme_is_a_cycle_but_a_shadowed_builtin_is_not() {
    let dir = user_dir(&[
        ("me.toml", "inherits = \"me\"\n"),
        (
            "dark.toml",
            "inherits = \"dark\"\n[palette]\nbg = \"#000000\"\n",
        ),
    ]);
    let (_, errors) = load(dir.path(), "me");
    assert!(matches!(
        errors.as_slice(),
        [ThemeError::UnknownParent { .. } | ThemeError::Cycle { .. }]
    ));
    let (dark, errors) = load(dir.path(), "dark");
    assert!(errors.is_empty(), "{:?}", messages(&errors));
    assert_eq!(dark.style(Slot::Background).bg, Some(Color::Rgb(0, 0, 0)));
    assert_eq!(
        dark.style(Slot::Text),
        Theme::builtin("dark").unwrap().style(Slot::Text)
    );
}

#[test]
fn missing_theme_falls_back_to_dark_with_an_error() {
    let dir = user_dir(&[]);
    let (theme, errors) = load(dir.path(), "solarized-ish");
    assert_eq!(theme, Theme::builtin("dark").unwrap());
    assert!(
        matches!(errors.as_slice(), [ThemeError::NotFound { name, .. }] if name == "solarized-ish")
    );
    let (theme, errors) = load_theme(None, "../etc/passwd");
    assert_eq!(theme.name, "dark");
    assert!(matches!(
        errors.as_slice(),
        [ThemeError::InvalidName { .. }]
    ));
}

#[test]
fn missing_parent_is_reported_and_the_fallback_fills_in() {
    let dir = user_dir(&[(
        "mine.toml",
        "\ninherits = \"nord\"\n[styles]\n\"ui.text\" = \"cyan\"\n",
    )]);
    let (theme, errors) = load(dir.path(), "mine");
    assert_eq!(messages(&errors).len(), 1);
    assert!(messages(&errors)[0].ends_with("mine.toml:2: inherits unknown theme `nord`"));
    // Palette names win over ANSI names: `cyan` is the fallback palette's cyan.
    let dark = Theme::builtin("dark").unwrap();
    assert_eq!(theme.style(Slot::Text).fg, dark.style(Slot::Tool).fg);
    assert_eq!(theme.style(Slot::Agent), dark.style(Slot::Agent));
}

#[test]
fn unknown_style_keys_are_warnings() {
    let dir = user_dir(&[(
        "mine.toml",
        "inherits = \"dark\"\n[styles]\n\"ui.sparkles\" = \"red\"\n",
    )]);
    let (_, errors) = load(dir.path(), "mine");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].is_warning());
    assert_eq!(errors[0].line(), Some(3));
}

#[test]
fn available_themes_lists_builtins_and_user_files() {
    let dir = user_dir(&[("mine.toml", ""), ("notes.txt", ""), ("dark.toml", "")]);
    assert_eq!(
        available_themes(Some(dir.path())),
        vec!["dark", "light", "mine"]
    );
    assert_eq!(available_themes(None), vec!["dark", "light"]);
}

/// A test-only swatch: each slot's key drawn in its style, on the theme's background.
struct Swatch<'a>(&'a Theme);

impl Widget for Swatch<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let lines: Vec<Line> = Slot::ALL
            .iter()
            .map(|&slot| Line::from(Span::styled(slot.key(), self.0.style(slot))))
            .collect();
        Paragraph::new(lines)
            .style(self.0.style(Slot::Background))
            .render(area, buf);
    }
}

fn swatch(theme: &Theme) -> Buffer {
    let height = u16::try_from(Slot::ALL.len()).unwrap();
    let mut terminal = Terminal::new(TestBackend::new(26, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(Swatch(theme), frame.area()))
        .unwrap();
    terminal.backend().buffer().clone()
}

#[test]
fn swatch_dark() {
    insta::assert_debug_snapshot!(swatch(&Theme::builtin("dark").unwrap()));
}

#[test]
fn swatch_light() {
    insta::assert_debug_snapshot!(swatch(&Theme::builtin("light").unwrap()));
}

/// Whether `line` spells out a colour: a named `Color::` variant, an `Rgb`/`Indexed` with a
/// number, or a ratatui `Stylize` colour shortcut. Converting a colour that came from data
/// (e.g. a syntect theme's `Color::Rgb(c.r, c.g, c.b)`) is not a literal.
fn names_a_colour(line: &str) -> bool {
    const NAMES: &[&str] = &[
        "Black",
        "Red",
        "Green",
        "Yellow",
        "Blue",
        "Magenta",
        "Cyan",
        "Gray",
        "DarkGray",
        "LightRed",
        "LightGreen",
        "LightYellow",
        "LightBlue",
        "LightMagenta",
        "LightCyan",
        "White",
    ];
    let variant = line.match_indices("Color::").any(|(at, _)| {
        let rest = &line[at + "Color::".len()..];
        let name: String = rest
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        let after = &rest[name.len()..];
        NAMES.contains(&name.as_str())
            || (matches!(name.as_str(), "Rgb" | "Indexed")
                && after
                    .trim_start_matches(['(', ' '])
                    .starts_with(|c: char| c.is_ascii_digit()))
    });
    let shortcut = NAMES.iter().any(|name| {
        let snake = name
            .replace("Dark", "dark_")
            .replace("Light", "light_")
            .to_lowercase();
        line.contains(&format!(".{snake}()")) || line.contains(&format!(".on_{snake}()"))
    });
    variant || shortcut
}

#[test]
fn colour_literal_detector() {
    assert!(names_a_colour("let c = Color::Red;"));
    assert!(names_a_colour("Color::Rgb(12, 0, 0)"));
    assert!(names_a_colour("style.fg(Color::Indexed( 7))"));
    assert!(names_a_colour("\"x\".light_blue()"));
    assert!(!names_a_colour("base.fg(Color::Rgb(fg.r, fg.g, fg.b))"));
    assert!(!names_a_colour("Color::Reset"));
}

/// "No colour literals outside theme code": the panes take every colour from a theme.
#[test]
fn no_colour_literals_outside_the_theme_module() {
    fn scan(dir: &Path, offenders: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                // `terminal` carries the colours a program wrote, as data; drawing them goes
                // through the theme like everything else.
                if !path.ends_with("theme") && !path.ends_with("terminal") {
                    scan(&path, offenders);
                }
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (number, line) in text.lines().enumerate() {
                    if names_a_colour(line) {
                        offenders.push(format!(
                            "{}:{}: {}",
                            path.display(),
                            number + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    let mut offenders = Vec::new();
    scan(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut offenders,
    );
    assert!(
        offenders.is_empty(),
        "colours belong in themes: {offenders:#?}"
    );
}
