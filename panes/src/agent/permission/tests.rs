use agent_client_protocol::v1::schema::{
    ContentBlock, TextContent, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
};
use crossterm::event::KeyModifiers;

use super::*;

fn scoped(id: &str, name: &str, kind: PermissionOptionKind, scope: &str) -> PermissionOption {
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::json!({ "scope": scope }));
    PermissionOption::new(id.to_string(), name.to_string(), kind).meta(meta)
}

/// A request as March's runner makes it, for `command`.
fn request(command: &str) -> RequestPermissionRequest {
    use PermissionOptionKind::*;
    let mut meta = serde_json::Map::new();
    meta.insert("march".into(), serde_json::json!({ "rejectMessage": true }));
    RequestPermissionRequest::new(
        "s1",
        ToolCallUpdate::new(
            "call-9",
            ToolCallUpdateFields::new()
                .title(format!("bash {command}"))
                .kind(ToolKind::Execute)
                .content(vec![ToolCallContent::from(ContentBlock::Text(
                    TextContent::new(format!("$ {command}\n\nin /p")),
                ))]),
        ),
        vec![
            scoped("allow-once", "Allow once", AllowOnce, "once"),
            scoped(
                "allow-always",
                "Allow bash in this session",
                AllowAlways,
                "session",
            ),
            scoped(
                "allow-project",
                "Always allow bash in this project",
                AllowAlways,
                "project",
            ),
            scoped("reject-once", "Reject", RejectOnce, "once"),
            scoped(
                "reject-always",
                "Always reject bash in this session",
                RejectAlways,
                "session",
            ),
        ],
    )
    .meta(meta)
}

fn press(m: &mut PermissionModal, code: KeyCode) -> ModalKey {
    m.key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn selected(id: &str) -> ModalKey {
    ModalKey::Answered(RequestPermissionOutcome::Selected(
        SelectedPermissionOutcome::new(id.to_string()),
    ))
}

fn drawn(m: &PermissionModal, w: u16, h: u16) -> String {
    let theme = crate::test_support::dark();
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    m.render(area, &mut buf, &theme, 0, false, false);
    crate::test_support::rows(&buf).join("\n")
}

#[test]
fn digits_keep_one_meaning_and_letters_answer_nothing() {
    let mut m = PermissionModal::new(PermissionId(1), request("ls"), None);
    drawn(&m, 80, 24);
    for c in ['y', 'Y', 'n', 'N', 'a', 'r', 'x'] {
        assert_eq!(press(&mut m, KeyCode::Char(c)), ModalKey::Ignored, "{c}");
    }
    assert_eq!(press(&mut m, KeyCode::Char('2')), selected("allow-always"));
    assert_eq!(press(&mut m, KeyCode::Char('3')), selected("allow-project"));
    assert_eq!(press(&mut m, KeyCode::Char('5')), selected("reject-once"));
    assert_eq!(press(&mut m, KeyCode::Char('7')), selected("reject-always"));
    assert_eq!(press(&mut m, KeyCode::Char('1')), selected("allow-once"));
    // Not offered here: outside the sandbox.
    assert_eq!(press(&mut m, KeyCode::Char('4')), ModalKey::Ignored);
}

#[test]
fn arrows_enter_and_escape() {
    let mut m = PermissionModal::new(PermissionId(1), request("ls"), None);
    drawn(&m, 80, 24);
    assert_eq!(press(&mut m, KeyCode::Down), ModalKey::Moved);
    assert_eq!(press(&mut m, KeyCode::Down), ModalKey::Moved);
    assert_eq!(press(&mut m, KeyCode::Enter), selected("allow-project"));
    assert_eq!(
        press(&mut m, KeyCode::Esc),
        ModalKey::Answered(RequestPermissionOutcome::Cancelled)
    );
}

#[test]
fn reject_with_a_message_carries_the_words() {
    let mut m = PermissionModal::new(PermissionId(1), request("ls"), None);
    drawn(&m, 80, 24);
    assert_eq!(press(&mut m, KeyCode::Char('6')), ModalKey::Moved);
    // Digits are words now, not answers.
    for c in "use 2 jobs".chars() {
        assert_eq!(press(&mut m, KeyCode::Char(c)), ModalKey::Moved);
    }
    assert!(drawn(&m, 80, 24).contains("why: use 2 jobs"));
    let ModalKey::Answered(RequestPermissionOutcome::Selected(s)) = press(&mut m, KeyCode::Enter)
    else {
        panic!("no answer");
    };
    assert_eq!(s.option_id.0.as_ref(), "reject-once");
    let meta = serde_json::Value::Object(s.meta.unwrap_or_default());
    assert_eq!(meta["march"]["message"], "use 2 jobs");
    // An agent that does not take the words is not offered them.
    let mut plain = request("ls");
    plain.meta = None;
    let mut m = PermissionModal::new(PermissionId(2), plain, None);
    drawn(&m, 80, 24);
    assert_eq!(press(&mut m, KeyCode::Char('6')), ModalKey::Ignored);
}

#[test]
fn a_long_command_is_shown_whole_and_must_be_read_to_its_end() {
    let tail = "echo HIDDEN-TAIL > hidden-tail.txt";
    let command = format!(
        "cargo test {} | sed -e 's/x/y/' ; {tail}",
        "-p crate ".repeat(80)
    );
    let mut m = PermissionModal::new(PermissionId(1), request(&command), None);
    // Every character reaches the other channels.
    assert!(m.question().contains(&command), "{}", m.question());
    let screen = drawn(&m, 80, 24);
    assert!(screen.contains("more below"), "{screen}");
    assert!(!screen.contains("HIDDEN-TAIL"), "{screen}");
    // An allow before the end is read asks to read on.
    assert_eq!(press(&mut m, KeyCode::Char('1')), ModalKey::Moved);
    assert!(drawn(&m, 80, 24).contains("read to the end first"));
    assert_eq!(press(&mut m, KeyCode::End), ModalKey::Moved);
    let screen = drawn(&m, 80, 24);
    let joined: String = screen.lines().map(str::trim_end).collect();
    assert!(joined.contains("HIDDEN-TAIL"), "{screen}");
    assert_eq!(press(&mut m, KeyCode::Char('1')), selected("allow-once"));
    // A reject never waits.
    let mut m = PermissionModal::new(PermissionId(2), request(&command), None);
    drawn(&m, 80, 24);
    assert_eq!(press(&mut m, KeyCode::Char('5')), selected("reject-once"));
}

#[test]
fn leaving_the_sandbox_has_its_own_line_and_reason() {
    use PermissionOptionKind::*;
    let mut r = request("curl example.org");
    r.options = vec![
        scoped(
            "allow-outside-sandbox",
            "Allow once, outside the sandbox",
            AllowOnce,
            "once",
        ),
        scoped("reject-once", "Reject", RejectOnce, "once"),
    ];
    let mut meta = serde_json::Map::new();
    meta.insert(
        "march".into(),
        serde_json::json!({ "sandbox": { "outside": true, "reason": "needs the network" } }),
    );
    r.meta = Some(meta);
    let mut m = PermissionModal::new(PermissionId(1), r, None);
    let screen = drawn(&m, 80, 24);
    assert!(
        screen.contains("runs outside the sandbox: needs the network"),
        "{screen}"
    );
    assert!(
        m.question()
            .contains("runs outside the sandbox: needs the network")
    );
    // Enter takes what was asked: once, outside.
    assert_eq!(
        press(&mut m, KeyCode::Enter),
        selected("allow-outside-sandbox")
    );
}

#[test]
fn title_falls_back_to_the_transcript() {
    let mut r = request("ls");
    r.tool_call.fields = ToolCallUpdateFields::new();
    let m = PermissionModal::new(
        PermissionId(1),
        r,
        Some(("edit: a.rs".to_string(), ToolKind::Edit)),
    );
    assert_eq!(m.title, "edit: a.rs");
    assert_eq!(m.kind, Some(ToolKind::Edit));
}
