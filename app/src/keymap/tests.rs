//! Keymap tests: the built-in file, user overrides, errors, the dispatcher and hints.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

fn key(text: &str) -> Key {
    text.parse().unwrap()
}

fn event(text: &str) -> KeyEvent {
    key(text).to_event()
}

fn user(text: &str) -> (Keymap, Vec<String>) {
    let (keymap, errors) = apply_toml(Keymap::defaults(), text, "keymap.toml");
    (keymap, errors.iter().map(ToString::to_string).collect())
}

#[test]
fn default_keymap_has_no_errors_and_binds_known_commands() {
    let (keymap, errors) = apply_toml(Keymap::empty(), DEFAULT_KEYMAP, "default.toml");
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(keymap, Keymap::defaults());
    assert_eq!(keymap.prefix_key(), key("ctrl-a"));
    let lookup = |context, text| keymap.lookup_key(context, key(text));
    assert_eq!(
        lookup(KeyContext::Prefix, "%"),
        Some(Command::PaneSplitRight)
    );
    assert_eq!(
        lookup(KeyContext::Prefix, "\""),
        Some(Command::PaneSplitDown)
    );
    assert_eq!(lookup(KeyContext::Prefix, "H"), Some(Command::PaneGrowLeft));
    assert_eq!(
        lookup(KeyContext::Prefix, "h"),
        Some(Command::PaneFocusLeft)
    );
    assert_eq!(lookup(KeyContext::Prefix, "3"), Some(Command::TabSelect3));
    assert_eq!(
        lookup(KeyContext::Prefix, "ctrl-a"),
        Some(Command::PrefixSend)
    );
    assert_eq!(
        lookup(KeyContext::Direct, "alt-left"),
        Some(Command::PaneFocusLeft)
    );
    assert_eq!(
        lookup(KeyContext::Agent, "enter"),
        Some(Command::PromptSubmit)
    );
    assert_eq!(
        lookup(KeyContext::Agent, "shift-enter"),
        Some(Command::PromptNewline)
    );
    assert_eq!(lookup(KeyContext::Agent, "esc"), Some(Command::AgentCancel));
    assert_eq!(lookup(KeyContext::Agent, "a"), None);
}

#[test]
fn direct_keys_stay_few_and_use_a_modifier() {
    let direct = Keymap::defaults().bindings(KeyContext::Direct);
    assert!(direct.len() <= 8, "{direct:?}");
    for (key, _) in direct {
        // A bare key or shift-only key would steal typing from the prompt.
        assert!(
            key.modifiers
                .intersects(KeyModifiers::ALT | KeyModifiers::CONTROL),
            "{key}"
        );
    }
}

#[test]
fn every_tab_number_is_reachable_by_default() {
    let keymap = Keymap::defaults();
    for &command in Command::ALL.iter().filter(|c| c.tab_number().is_some()) {
        assert!(
            !keymap.keys_for(KeyContext::Prefix, command).is_empty(),
            "{command}"
        );
    }
}

#[test]
fn user_file_overrides_per_key_and_unbinds() {
    let text = "prefix-key = \"ctrl-b\"\n[prefix]\nv = \"pane.split-right\"\n\"%\" = \"none\"\nx = \"pane.zoom\"\n";
    let (keymap, errors) = user(text);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(keymap.prefix_key(), key("ctrl-b"));
    assert_eq!(
        keymap.lookup_key(KeyContext::Prefix, key("v")),
        Some(Command::PaneSplitRight)
    );
    assert_eq!(keymap.lookup_key(KeyContext::Prefix, key("%")), None);
    assert_eq!(
        keymap.lookup_key(KeyContext::Prefix, key("x")),
        Some(Command::PaneZoom)
    );
    // Untouched keys keep their defaults, and the new prefix pressed twice sends itself.
    assert_eq!(
        keymap.lookup_key(KeyContext::Prefix, key("z")),
        Some(Command::PaneZoom)
    );
    assert_eq!(
        keymap.lookup_key(KeyContext::Prefix, key("ctrl-b")),
        Some(Command::PrefixSend)
    );
    assert_eq!(
        keymap.lookup_key(KeyContext::Agent, key("enter")),
        Some(Command::PromptSubmit)
    );
}

#[test]
fn clear_defaults_starts_empty_but_keeps_the_prefix() {
    let (keymap, errors) = user("[agent]\nenter = \"prompt.submit\"\n\n# anywhere in the file\n");
    assert!(errors.is_empty());
    assert!(!keymap.bindings(KeyContext::Prefix).is_empty());
    let (keymap, errors) = user("clear-defaults = true\n[agent]\nenter = \"prompt.submit\"\n");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(keymap.prefix_key(), key("ctrl-a"));
    assert_eq!(
        keymap.bindings(KeyContext::Agent),
        vec![(key("enter"), Command::PromptSubmit)]
    );
    assert!(keymap.bindings(KeyContext::Direct).is_empty());
    // Only the implicit "prefix twice" rule is left after the prefix.
    assert_eq!(
        keymap.bindings(KeyContext::Prefix),
        vec![(key("ctrl-a"), Command::PrefixSend)]
    );
}

#[test]
fn errors_name_file_line_and_key_and_keep_defaults() {
    let text = "\
prefix-key = \"hyper-a\"
[prefix]
q = \"app.exit\"
\"ctrl+x\" = \"pane.close\"
z = 3
v = \"pane.split-right\"
[agent]
bogus = \"prompt.submit\"
[agnet]
";
    let (keymap, errors) = user(text);
    assert_eq!(
        errors,
        vec![
            "keymap.toml:1: `prefix-key`: bad key `hyper-a`: unknown modifier `hyper` (use ctrl, alt, shift or super, joined with `-`); keeping ctrl-a",
            "keymap.toml:3: [prefix] `q`: unknown command `app.exit` (did you mean app.quit, app.help, app.supervisor, app.detach?)",
            "keymap.toml:4: [prefix] bad key `ctrl+x`: unknown key `ctrl+x` (a single character, or one of: enter, esc, tab, backspace, delete, insert, home, end, pageup, pagedown, up, down, left, right, space, f1-f24); join modifiers with `-`, e.g. ctrl-a",
            "keymap.toml:5: [prefix] `z` should name a command, or \"none\"",
            "keymap.toml:8: [agent] bad key `bogus`: unknown key `bogus` (a single character, or one of: enter, esc, tab, backspace, delete, insert, home, end, pageup, pagedown, up, down, left, right, space, f1-f24)",
            "keymap.toml:9: unknown field `agnet` (expected prefix-key, clear-defaults, [prefix], [direct] or [agent])",
        ]
    );
    // The good entry applied; the broken ones left the defaults alone.
    assert_eq!(keymap.prefix_key(), key("ctrl-a"));
    assert_eq!(
        keymap.lookup_key(KeyContext::Prefix, key("v")),
        Some(Command::PaneSplitRight)
    );
    assert_eq!(
        keymap.lookup_key(KeyContext::Prefix, key("z")),
        Some(Command::PaneZoom)
    );
    assert_eq!(
        keymap.lookup_key(KeyContext::Prefix, key("Q")),
        Some(Command::AppQuit)
    );
}

#[test]
fn toml_syntax_error_keeps_the_whole_default_keymap() {
    let (keymap, errors) = user("[prefix]\nv = \"pane.split-right\"\nw = \n");
    assert_eq!(keymap, Keymap::defaults());
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("keymap.toml:3: TOML syntax error"),
        "{}",
        errors[0]
    );
}

#[test]
fn two_spellings_of_one_key_and_shadowed_keys_are_reported() {
    let text = "[prefix]\nH = \"pane.zoom\"\nshift-h = \"pane.close\"\n[agent]\nalt-up = \"scroll.top\"\nctrl-a = \"scroll.bottom\"\n";
    let (_, errors) = user(text);
    assert_eq!(
        errors,
        vec![
            "keymap.toml:3: [prefix] `H` is bound twice (also on line 2)",
            "keymap.toml:5: [agent] `alt-up` is also in [direct], which takes it first",
            "keymap.toml:6: [agent] `ctrl-a` is the prefix key, so it never reaches [agent]",
        ]
    );
    let (_, errors) = user("prefix = \"ctrl-b\"\n");
    assert!(
        errors[0].contains("set the prefix key itself with `prefix-key"),
        "{errors:?}"
    );
}

#[test]
fn load_keymap_reads_the_config_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (keymap, errors) = Keymap::load(dir.path());
    assert!(errors.is_empty());
    assert_eq!(keymap, Keymap::defaults());
    std::fs::write(
        dir.path().join(load::KEYMAP_FILE),
        "[prefix]\nq = \"nope\"\n",
    )
    .unwrap();
    let (_, errors) = Keymap::load(dir.path());
    let expected = format!("{}:2:", dir.path().join(load::KEYMAP_FILE).display());
    assert!(
        errors[0].to_string().starts_with(&expected),
        "{}",
        errors[0]
    );
    assert_eq!(errors[0].line, Some(2));
}

#[test]
fn dispatcher_prefix_flow() {
    let keymap = Keymap::defaults();
    let mut dispatcher = KeyDispatcher::new();
    let mut press = |text: &str| dispatcher.dispatch(&keymap, KeyContext::Agent, event(text));

    assert_eq!(press("ctrl-a"), Dispatch::PrefixStarted);
    assert_eq!(press("%"), Dispatch::Command(Command::PaneSplitRight));
    // Back to normal: `%` now types.
    assert_eq!(press("%"), Dispatch::Unbound(event("%")));

    assert_eq!(press("ctrl-a"), Dispatch::PrefixStarted);
    assert_eq!(press("ctrl-a"), Dispatch::SendPrefix);
    assert_eq!(press("ctrl-a"), Dispatch::PrefixStarted);
    assert_eq!(press("esc"), Dispatch::PrefixCancelled);
    // Esc outside the prefix is the agent pane's cancel.
    assert_eq!(press("esc"), Dispatch::Command(Command::AgentCancel));

    assert_eq!(press("ctrl-a"), Dispatch::PrefixStarted);
    assert_eq!(press("ctrl-q"), Dispatch::PrefixCancelled);
    assert_eq!(press("alt-left"), Dispatch::Command(Command::PaneFocusLeft));
    assert_eq!(press("enter"), Dispatch::Command(Command::PromptSubmit));
    assert_eq!(press("x"), Dispatch::Unbound(event("x")));
}

#[test]
fn resize_keys_repeat_without_the_prefix_for_the_repeat_time() {
    use super::dispatch::REPEAT_TIME;
    use std::time::{Duration, Instant};
    let keymap = Keymap::defaults();
    let mut dispatcher = KeyDispatcher::new();
    let t0 = Instant::now();
    let mut press = |text: &str, at: Duration| {
        dispatcher.dispatch_at(&keymap, KeyContext::Agent, event(text), t0 + at)
    };
    let grow = Dispatch::Command(Command::PaneGrowRight);
    assert_eq!(press("ctrl-a", Duration::ZERO), Dispatch::PrefixStarted);
    assert_eq!(press("L", Duration::ZERO), grow);
    // Each repeat starts the time again.
    let step = REPEAT_TIME - Duration::from_millis(1);
    assert_eq!(press("L", step), grow);
    assert_eq!(press("L", step * 2), grow);
    assert_eq!(
        press("H", step * 3),
        Dispatch::Command(Command::PaneGrowLeft)
    );
    // Past the time the key types again.
    assert_eq!(
        press("L", step * 3 + REPEAT_TIME),
        Dispatch::Unbound(event("L"))
    );
    // A key that does not repeat ends the repeat and goes where it always goes.
    assert_eq!(press("ctrl-a", step * 10), Dispatch::PrefixStarted);
    assert_eq!(
        press("J", step * 10),
        Dispatch::Command(Command::PaneGrowDown)
    );
    assert_eq!(press("x", step * 10), Dispatch::Unbound(event("x")));
    assert_eq!(press("J", step * 10), Dispatch::Unbound(event("J")));
    // Commands that do not repeat never start it.
    assert_eq!(press("ctrl-a", step * 20), Dispatch::PrefixStarted);
    assert_eq!(
        press("space", step * 20),
        Dispatch::Command(Command::LayoutNext)
    );
    assert_eq!(press("space", step * 20), Dispatch::Unbound(event("space")));
}

#[test]
fn dispatcher_state_and_context_rules() {
    let keymap = Keymap::defaults();
    let mut dispatcher = KeyDispatcher::new();
    let direct = KeyContext::Direct;
    assert!(!dispatcher.prefix_pending());
    dispatcher.dispatch(&keymap, direct, event("ctrl-a"));
    assert!(dispatcher.prefix_pending());
    dispatcher.cancel();
    assert!(!dispatcher.prefix_pending());
    // Without a focused agent pane, [agent] keys are not looked up; [direct] still is.
    assert_eq!(
        dispatcher.dispatch(&keymap, direct, event("enter")),
        Dispatch::Unbound(event("enter"))
    );
    assert_eq!(
        dispatcher.dispatch(&keymap, direct, event("alt-down")),
        Dispatch::Command(Command::PaneFocusDown)
    );
    // Shift-h as terminals report it still reaches `H` after the prefix.
    dispatcher.dispatch(&keymap, direct, event("ctrl-a"));
    let shift_h = KeyEvent::new(KeyCode::Char('H'), KeyModifiers::SHIFT);
    assert_eq!(
        dispatcher.dispatch(&keymap, direct, shift_h),
        Dispatch::Command(Command::PaneGrowLeft)
    );
    assert_eq!(
        keymap.prefix(),
        KeyEvent::new(KeyCode::Char('a'), KeyModifiers::CONTROL)
    );
}

#[test]
fn explicit_prefix_send_binding_and_rebound_prefix_key() {
    let (keymap, errors) = user("[prefix]\nctrl-a = \"pane.zoom\"\na = \"prefix.send\"\n");
    assert!(errors.is_empty(), "{errors:?}");
    let mut dispatcher = KeyDispatcher::new();
    let agent = KeyContext::Agent;
    dispatcher.dispatch(&keymap, agent, event("ctrl-a"));
    assert_eq!(
        dispatcher.dispatch(&keymap, agent, event("ctrl-a")),
        Dispatch::Command(Command::PaneZoom)
    );
    dispatcher.dispatch(&keymap, agent, event("ctrl-a"));
    assert_eq!(
        dispatcher.dispatch(&keymap, agent, event("a")),
        Dispatch::SendPrefix
    );
}

#[test]
fn which_key_hints_are_sorted_and_stable() {
    let keymap = Keymap::defaults();
    let hints = keymap.hints(KeyContext::Prefix);
    assert_eq!(hints, keymap.clone().hints(KeyContext::Prefix));
    assert_eq!(hints.len(), keymap.bindings(KeyContext::Prefix).len());
    // Registry order: app.quit, app.help, app.supervisor, prefix.send, then the panes.
    assert_eq!(hints[0], ("Q".to_string(), Command::AppQuit.doc()));
    assert_eq!(hints[1], ("?".to_string(), Command::AppHelp.doc()));
    assert_eq!(hints[2], ("S".to_string(), Command::AppSupervisor.doc()));
    assert_eq!(hints[3], ("ctrl-a".to_string(), Command::PrefixSend.doc()));
    // Keys of one command are sorted by their text.
    let split: Vec<&str> = hints
        .iter()
        .filter(|(_, doc)| *doc == Command::PaneSplitRight.doc())
        .map(|(key, _)| key.as_str())
        .collect();
    assert_eq!(split, vec!["%", "|"]);
    assert_eq!(
        keymap
            .keys_for(KeyContext::Agent, Command::PromptNewline)
            .len(),
        2
    );
}
