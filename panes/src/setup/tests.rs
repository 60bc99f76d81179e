//! The setup view's navigation, events and snapshots.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::test_support::{dark, light, rows};
use crate::theme::{Slot, Theme};

const SECRET: &str = "sk-ant-api03-SECRETsecret0123456789";

fn provider(name: &str, env_var: Option<&str>, status: ProviderStatus) -> SetupProvider {
    SetupProvider {
        name: name.to_string(),
        env_var: env_var.map(str::to_string),
        status,
    }
}

/// One provider of every kind, listed out of order (the view sorts them).
fn providers() -> Vec<SetupProvider> {
    vec![
        provider(
            "anthropic",
            Some("ANTHROPIC_API_KEY"),
            ProviderStatus::NoKey,
        ),
        provider(
            "openai",
            Some("OPENAI_API_KEY"),
            ProviderStatus::KeyInEnv("OPENAI_API_KEY".to_string()),
        ),
        provider("ollama", None, ProviderStatus::LocalNotRunning),
        provider(
            "lmstudio",
            None,
            ProviderStatus::LocalRunning {
                models: vec!["qwen2.5-coder-7b".to_string(), "llama-3.1-8b".to_string()],
            },
        ),
        provider(
            "llamacpp",
            None,
            ProviderStatus::LocalRunning {
                models: vec!["gemma-3-4b".to_string()],
            },
        ),
        provider("openrouter", None, ProviderStatus::KeyStored),
        provider("gemini", Some("GEMINI_API_KEY"), ProviderStatus::NoKey),
    ]
}

fn view() -> SetupView {
    SetupView::new(
        "No model is configured: no API key was found and no local server answered.",
        providers(),
    )
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(v: &mut SetupView, code: KeyCode) -> SetupEvent {
    v.handle_key(key(code))
}

fn type_text(v: &mut SetupView, s: &str) {
    for c in s.chars() {
        v.handle_key(key(KeyCode::Char(c)));
    }
}

/// Moves the selection to the entry whose row mentions `name`.
fn select_named(v: &mut SetupView, name: &str) {
    for _ in 0..v.entries.len() {
        let current = v.entries.get(v.selected).copied();
        let hit = match current {
            Some(Entry::Provider(i)) => v.providers[i].name == name,
            Some(Entry::Custom) => name == "custom",
            None => false,
        };
        if hit {
            return;
        }
        press(v, KeyCode::Down);
    }
    panic!("{name} is not selectable");
}

fn draw(v: &mut SetupView, theme: &Theme, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    t.draw(|f| {
        let area = f.area();
        v.render(area, f.buffer_mut(), theme, true);
    })
    .unwrap();
    t
}

fn screen(buf: &Buffer) -> String {
    rows(buf).join("\n")
}

#[test]
fn lists_ready_providers_first_and_starts_on_the_first() {
    let v = view();
    let names: Vec<String> = v
        .entries
        .iter()
        .map(|e| match e {
            Entry::Provider(i) => v.providers[*i].name.clone(),
            Entry::Custom => "custom".to_string(),
        })
        .collect();
    assert_eq!(
        names,
        [
            "openai",
            "openrouter",
            "lmstudio",
            "llamacpp",
            "ollama",
            "anthropic",
            "gemini",
            "custom"
        ]
    );
    assert_eq!(v.selected, 0);
}

#[test]
fn env_and_stored_providers_retry() {
    let mut v = view();
    select_named(&mut v, "openai");
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Retry);
    select_named(&mut v, "openrouter");
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Retry);
    assert_eq!(press(&mut v, KeyCode::Char('r')), SetupEvent::Retry);
}

#[test]
fn navigation_skips_stopped_servers_and_wraps() {
    let mut v = view();
    assert_eq!(press(&mut v, KeyCode::Char('k')), SetupEvent::Redraw);
    assert_eq!(v.entries[v.selected], Entry::Custom);
    press(&mut v, KeyCode::Char('j'));
    assert_eq!(v.selected, 0);
    let mut seen = Vec::new();
    for _ in 0..v.entries.len() {
        seen.push(v.selected);
        press(&mut v, KeyCode::Down);
    }
    let stopped = v
        .entries
        .iter()
        .position(|e| matches!(e, Entry::Provider(i) if v.providers[*i].name == "ollama"))
        .unwrap();
    assert!(!seen.contains(&stopped), "{seen:?}");
    // Key releases are not presses.
    let release = KeyEvent {
        kind: KeyEventKind::Release,
        ..key(KeyCode::Down)
    };
    assert_eq!(v.handle_key(release), SetupEvent::None);
}

#[test]
fn local_servers_pick_a_model() {
    let mut v = view();
    select_named(&mut v, "llamacpp");
    assert_eq!(
        press(&mut v, KeyCode::Enter),
        SetupEvent::UseLocal {
            provider: "llamacpp".to_string(),
            model: "gemma-3-4b".to_string()
        }
    );
    select_named(&mut v, "lmstudio");
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Redraw);
    assert!(matches!(v.mode, Mode::Models { .. }));
    assert_eq!(press(&mut v, KeyCode::Esc), SetupEvent::Redraw);
    assert!(matches!(v.mode, Mode::List));
    press(&mut v, KeyCode::Enter);
    press(&mut v, KeyCode::Down);
    assert_eq!(
        press(&mut v, KeyCode::Enter),
        SetupEvent::UseLocal {
            provider: "lmstudio".to_string(),
            model: "llama-3.1-8b".to_string()
        }
    );
    assert!(matches!(v.mode, Mode::List));
}

#[test]
fn a_server_without_models_says_so() {
    let mut v = SetupView::new(
        "",
        vec![provider(
            "ollama",
            None,
            ProviderStatus::LocalRunning { models: vec![] },
        )],
    );
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Redraw);
    assert!(matches!(v.mode, Mode::List));
    assert!(
        v.message
            .as_ref()
            .is_some_and(|(m, err)| *err && m.contains("no models"))
    );
}

#[test]
fn typed_and_pasted_keys_are_saved_exactly_and_never_drawn() {
    let mut v = view();
    select_named(&mut v, "anthropic");
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Redraw);
    // Enter on an empty field asks for the key.
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Redraw);
    assert!(matches!(&v.mode, Mode::Key { error: Some(_), .. }));
    type_text(&mut v, "sk-ant-");
    assert_eq!(
        v.paste("api03-SECRETsecret0123456789\r\n"),
        SetupEvent::Redraw
    );
    // `r`, `j` and `k` are typed, not commands, while a form is open.
    type_text(&mut v, "rjk");
    for _ in 0..3 {
        press(&mut v, KeyCode::Backspace);
    }
    let t = draw(&mut v, &dark(), 80, 24);
    let shown = screen(t.backend().buffer());
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(!shown.contains("sk-ant"), "{shown}");
    assert!(!shown.contains("6789"), "{shown}");
    assert!(shown.contains(&"•".repeat(SECRET.len())), "{shown}");
    assert!(shown.contains(&format!("{} characters", SECRET.len())));
    assert!(v.cursor_position().is_some());
    assert_eq!(
        press(&mut v, KeyCode::Enter),
        SetupEvent::SaveKey {
            provider: "anthropic".to_string(),
            key: SECRET.to_string()
        }
    );
    assert!(matches!(v.mode, Mode::List));
}

#[test]
fn debug_output_redacts_keys() {
    let event = SetupEvent::SaveKey {
        provider: "openai".to_string(),
        key: SECRET.to_string(),
    };
    let shown = format!("{event:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    let event = SetupEvent::SaveBaseUrl {
        url: "http://x".to_string(),
        api_key: Some(SECRET.to_string()),
        model: None,
    };
    assert!(!format!("{event:?}").contains("SECRET"));
}

#[test]
fn escape_leaves_the_key_form() {
    let mut v = view();
    select_named(&mut v, "gemini");
    press(&mut v, KeyCode::Enter);
    type_text(&mut v, "abc");
    assert_eq!(press(&mut v, KeyCode::Esc), SetupEvent::Redraw);
    assert!(matches!(v.mode, Mode::List));
    // Opening the form again starts empty.
    press(&mut v, KeyCode::Enter);
    assert!(matches!(&v.mode, Mode::Key { field, .. } if field.len() == 0));
    assert_eq!(v.paste(""), SetupEvent::None);
}

#[test]
fn custom_server_validates_the_url() {
    let mut v = view();
    select_named(&mut v, "custom");
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Redraw);
    type_text(&mut v, "localhost:8000");
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Redraw);
    assert!(
        matches!(&v.mode, Mode::Custom(f) if f.focus == CustomFocus::Url
            && f.error.as_deref().is_some_and(|e| e.contains("http://")))
    );
    press(&mut v, KeyCode::Home);
    type_text(&mut v, "http://");
    // Enter on the URL moves to the key field.
    assert_eq!(press(&mut v, KeyCode::Enter), SetupEvent::Redraw);
    assert!(matches!(
        &v.mode,
        Mode::Custom(f) if f.error.is_none() && f.focus == CustomFocus::Key
    ));
    // No model typed: the server is asked, and the form waits for its answer.
    assert_eq!(
        press(&mut v, KeyCode::Enter),
        SetupEvent::SaveBaseUrl {
            url: "http://localhost:8000".to_string(),
            api_key: None,
            model: None,
        }
    );
    assert!(matches!(&v.mode, Mode::Custom(f) if f.checking));
    let shown = screen(draw(&mut v, &dark(), 80, 24).backend().buffer());
    assert!(
        shown.contains("nothing is saved until one is chosen"),
        "{shown}"
    );
    // A server without a model list: the form asks for the id, everything typed kept.
    assert_eq!(
        v.custom_models(Err("HTTP 404".to_string())),
        SetupEvent::Redraw
    );
    assert!(matches!(&v.mode, Mode::Custom(f) if !f.checking && f.focus == CustomFocus::Model));
    let shown = screen(draw(&mut v, &dark(), 80, 24).backend().buffer());
    assert!(
        shown.contains("did not list its models (HTTP 404): type the model id"),
        "{shown}"
    );
    type_text(&mut v, "qwen3-coder");
    assert_eq!(
        press(&mut v, KeyCode::Enter),
        SetupEvent::SaveBaseUrl {
            url: "http://localhost:8000".to_string(),
            api_key: None,
            model: Some("qwen3-coder".to_string()),
        }
    );
    assert!(matches!(v.mode, Mode::List));

    let mut v = view();
    select_named(&mut v, "custom");
    press(&mut v, KeyCode::Enter);
    v.paste("  HTTPS://llm.internal/v1\n");
    press(&mut v, KeyCode::Tab);
    v.paste("token-123");
    let t = draw(&mut v, &dark(), 80, 24);
    assert!(!screen(t.backend().buffer()).contains("token-123"));
    assert_eq!(
        press(&mut v, KeyCode::Enter),
        SetupEvent::SaveBaseUrl {
            url: "HTTPS://llm.internal/v1".to_string(),
            api_key: Some("token-123".to_string()),
            model: None,
        }
    );
    // Several models: the user picks one; Esc goes back to the form.
    assert_eq!(
        v.custom_models(Ok(vec!["a".to_string(), "b".to_string()])),
        SetupEvent::Redraw
    );
    assert!(matches!(&v.mode, Mode::Models { models, .. } if models.len() == 2));
    press(&mut v, KeyCode::Esc);
    assert!(matches!(&v.mode, Mode::Custom(_)));
    press(&mut v, KeyCode::Enter);
    v.custom_models(Ok(vec!["a".to_string(), "b".to_string()]));
    press(&mut v, KeyCode::Down);
    assert_eq!(
        press(&mut v, KeyCode::Enter),
        SetupEvent::SaveBaseUrl {
            url: "HTTPS://llm.internal/v1".to_string(),
            api_key: Some("token-123".to_string()),
            model: Some("b".to_string()),
        }
    );
    // One model is used at once.
    let mut v = view();
    select_named(&mut v, "custom");
    press(&mut v, KeyCode::Enter);
    v.paste("http://one/v1");
    press(&mut v, KeyCode::Enter);
    press(&mut v, KeyCode::Enter);
    assert_eq!(
        v.custom_models(Ok(vec!["only".to_string()])),
        SetupEvent::SaveBaseUrl {
            url: "http://one/v1".to_string(),
            api_key: None,
            model: Some("only".to_string()),
        }
    );
}

#[test]
fn url_rules() {
    assert!(validate_url("http://127.0.0.1:8000/v1").is_ok());
    assert!(validate_url("https://api.example.com").is_ok());
    assert!(validate_url("").is_err());
    assert!(validate_url("ftp://x").is_err());
    assert!(validate_url("http://").is_err());
    assert!(validate_url("http:///v1").is_err());
    assert!(validate_url("http://a b").is_err());
}

#[test]
fn new_providers_keep_the_selection() {
    let mut v = view();
    select_named(&mut v, "anthropic");
    let selected_name = |v: &SetupView| match v.entries[v.selected] {
        Entry::Provider(i) => v.providers[i].name.clone(),
        Entry::Custom => "custom".to_string(),
    };
    v.set_providers(providers().into_iter().rev().collect());
    assert_eq!(selected_name(&v), "anthropic");
    v.set_providers(providers());
    assert_eq!(selected_name(&v), "anthropic");
    // Only stopped servers: nothing but the custom entry is selectable.
    v.set_providers(vec![provider(
        "ollama",
        None,
        ProviderStatus::LocalNotRunning,
    )]);
    assert_eq!(v.entries[v.selected], Entry::Custom);
    v.set_providers(Vec::new());
    assert_eq!(v.entries, [Entry::Custom]);
}

#[test]
fn huge_pastes_are_capped() {
    let mut v = view();
    select_named(&mut v, "anthropic");
    press(&mut v, KeyCode::Enter);
    let huge = "k\n".repeat(1_000_000);
    assert_eq!(v.paste(&huge), SetupEvent::Redraw);
    let Mode::Key { field, error, .. } = &v.mode else {
        panic!("the key form is open");
    };
    assert_eq!(field.len(), field::MAX_INPUT);
    assert!(error.is_some());
    draw(&mut v, &dark(), 80, 24);
}

#[test]
fn tiny_areas_do_not_panic() {
    let theme = dark();
    for mode in 0..4 {
        let mut v = view();
        v.set_probing(true);
        v.set_message("x".repeat(500), true);
        match mode {
            1 => {
                select_named(&mut v, "anthropic");
                press(&mut v, KeyCode::Enter);
                v.paste(SECRET);
            }
            2 => {
                select_named(&mut v, "custom");
                press(&mut v, KeyCode::Enter);
                press(&mut v, KeyCode::Tab);
            }
            3 => {
                select_named(&mut v, "lmstudio");
                press(&mut v, KeyCode::Enter);
            }
            _ => {}
        }
        for (w, h) in [
            (1, 1),
            (2, 2),
            (3, 3),
            (4, 4),
            (5, 2),
            (10, 5),
            (1, 40),
            (200, 3),
        ] {
            draw(&mut v, &theme, w, h);
            if let Some((x, y)) = v.cursor_position() {
                assert!(x < w && y < h, "cursor {x},{y} outside {w}x{h}");
            }
        }
        // An area partly outside the buffer is clipped, not indexed.
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 10));
        v.render(Rect::new(5, 5, 50, 50), &mut buf, &theme, true);
    }
}

#[test]
fn unfocused_views_have_no_cursor() {
    let mut v = view();
    select_named(&mut v, "custom");
    press(&mut v, KeyCode::Enter);
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| {
        let area = f.area();
        v.render(area, f.buffer_mut(), &dark(), false);
    })
    .unwrap();
    assert_eq!(v.cursor_position(), None);
}

#[test]
fn snapshot_list() {
    let mut v = view();
    let theme = dark();
    let t = draw(&mut v, &theme, 80, 24);
    insta::assert_snapshot!(t.backend());
    let buf = t.backend().buffer();
    let row = rows(buf).iter().position(|r| r.contains("ollama")).unwrap();
    let x = rows(buf)[row].find("ollama").unwrap();
    let x = rows(buf)[row][..x].chars().count() as u16;
    assert_eq!(
        buf[(x, row as u16)].style().fg,
        theme.style(Slot::TextDim).fg
    );
}

#[test]
fn snapshot_key_form_masked() {
    let mut v = view();
    select_named(&mut v, "anthropic");
    press(&mut v, KeyCode::Enter);
    v.paste(SECRET);
    let t = draw(&mut v, &dark(), 80, 24);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn snapshot_custom_url_error() {
    let mut v = view();
    select_named(&mut v, "custom");
    press(&mut v, KeyCode::Enter);
    type_text(&mut v, "localhost:8000/v1");
    press(&mut v, KeyCode::Enter);
    let t = draw(&mut v, &dark(), 80, 24);
    insta::assert_snapshot!(t.backend());
    let (x, y) = v.cursor_position().unwrap();
    assert_eq!(
        y,
        t.backend().buffer().area.y
            + rows(t.backend().buffer())
                .iter()
                .position(|r| r.contains("localhost:8000/v1"))
                .unwrap() as u16
    );
    assert_eq!(x, 4 + "localhost:8000/v1".len() as u16);
}

#[test]
fn snapshot_probing() {
    let mut v = SetupView::new(
        "No model is configured.",
        vec![
            provider("openai", Some("OPENAI_API_KEY"), ProviderStatus::NoKey),
            provider(
                "anthropic",
                Some("ANTHROPIC_API_KEY"),
                ProviderStatus::NoKey,
            ),
        ],
    );
    v.set_probing(true);
    let t = draw(&mut v, &dark(), 80, 24);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn snapshot_saved_message() {
    let mut v = view();
    v.set_message(
        "Saved the key for anthropic in /home/me/.config/march/auth.json (mode 0600)",
        false,
    );
    let t = draw(&mut v, &dark(), 80, 24);
    insta::assert_snapshot!(t.backend());
}

#[test]
fn snapshot_light_theme() {
    let mut v = view();
    v.set_message("could not write auth.json: permission denied", true);
    let t = draw(&mut v, &light(), 80, 24);
    // Debug output lists each cell's style, so the theme shows in the snapshot.
    insta::assert_snapshot!(format!("{:?}", t.backend().buffer()));
}

#[test]
fn reason_is_sanitised() {
    let mut v = SetupView::new("bad \x1b[2J\x1b]52;c;eA==\x07 error", Vec::new());
    let t = draw(&mut v, &dark(), 80, 24);
    let shown = screen(t.backend().buffer());
    assert!(shown.contains("bad ␛[2J␛]52;c;eA==␇ error"), "{shown}");
}
