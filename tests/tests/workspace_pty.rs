//! The workspace end to end: the real `march` binary in a pseudo-terminal at 120×40, its
//! agents answered by the scripted model server, its screen read through `vt100`.

#![allow(clippy::unwrap_used)] // Helpers here unwrap like the tests they serve.

#[path = "support/acp_client.rs"]
mod acp_client;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/workspace.rs"]
mod workspace;

use std::path::Path;

use acp_client::{Harness, bash_call, write_call};
use march_testkit::Turn;
use pty::{PtyMarch, descendants};
use workspace::*;

#[test]
fn prompt_and_see_the_streamed_answer_then_quit_leaving_no_process() {
    let h = tokio_harness(vec![Turn::text("Hello from the **scripted** model.")]);
    let mut m = start(&h);
    m.type_line("say hello");
    let screen = m.wait_text("Hello from the scripted model.");
    assert!(screen.contains("say hello"), "{screen}");
    let pid = m.server_pid();
    let children = descendants(pid);
    assert!(!children.is_empty(), "no runner child");
    m.quit();
    // Dead children may stay zombies until whoever inherits them reaps them (in a container
    // without an init that may be never); only a live process is an orphan.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let alive = || -> Vec<(u32, char)> {
        children
            .iter()
            .filter_map(|p| march_testkit::process::proc_state(*p).map(|s| (*p, s)))
            .filter(|(_, s)| *s != 'Z')
            .collect()
    };
    while !alive().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        alive().is_empty(),
        "processes left after quitting: {:?}",
        alive()
    );
}

#[test]
fn split_and_prompt_two_agent_panes() {
    let h = tokio_harness(vec![
        Turn::text("First pane answer."),
        Turn::text("Second pane answer."),
    ]);
    let mut m = start(&h);
    m.type_line("one");
    m.wait_text("First pane answer.");
    m.send(PREFIX);
    m.send(b"%");
    // The new pane gets focus; wait until its agent is ready (two titles on screen).
    m.wait_for("a second agent pane, ready", |t| {
        t.matches("March · project").count() >= 2
    });
    m.type_line("two");
    let screen = m.wait_text("Second pane answer.");
    assert!(screen.contains("First pane answer."), "{screen}");
    // The key list opens over the panes, scrolls, and a key that does not move it closes it.
    m.send(PREFIX);
    m.send(b"?");
    // The terminal may show a frame half drawn; wait for the whole list.
    m.wait_for("the key list", |t| {
        t.contains("esc closes") && t.contains("docs/KEYMAPS.md lists them too")
    });
    m.send(b"\x1b[6~");
    m.wait_for("the key list scrolled", |t| {
        t.contains("esc closes") && !t.contains("lines 1–")
    });
    m.send(b"x");
    m.wait_for("the key list to close", |t| !t.contains("esc closes"));
    m.quit();
}

#[test]
fn a_permission_is_granted_and_another_rejected_in_the_pane() {
    let h = tokio_harness(vec![
        Turn::stream(vec![write_call("c1", "granted.txt", "yes")]),
        Turn::text("Wrote it."),
        Turn::stream(vec![write_call("c2", "rejected.txt", "no")]),
        Turn::text("Understood."),
    ]);
    let mut m = start(&h);
    m.type_line("write granted");
    m.wait_text("Allow once");
    m.send(b"1");
    m.wait_text("Wrote it.");
    assert_eq!(
        std::fs::read_to_string(h.project().join("granted.txt")).unwrap(),
        "yes"
    );
    m.type_line("write rejected");
    m.wait_text("Allow once");
    m.send(b"5");
    m.wait_text("Understood.");
    assert!(!h.project().join("rejected.txt").exists());
    m.quit();
}

#[test]
fn esc_cancels_a_running_turn() {
    let h = tokio_harness(vec![
        Turn::stream(vec![bash_call("b1", "sleep 30")]),
        Turn::text("never"),
    ]);
    // Commands run without asking, so the turn is busy in the tool when Esc comes.
    let_commands_run_unasked(&h);
    let mut m = start(&h);
    m.type_line("run something slow");
    m.wait_text("sleep 30");
    m.send(ESC);
    m.wait_text("Cancelled");
    m.quit();
}

#[test]
fn slash_model_switches_the_model_of_the_next_request() {
    let h = tokio_harness(vec![Turn::text("from m"), Turn::text("from n")]);
    let mut m = start(&h);
    m.type_line("first");
    m.wait_text("from m");
    m.type_line("/model scripted/n");
    m.wait_for("model n in the pane", |t| {
        t.contains("scripted/n") || t.contains(" n ")
    });
    m.type_line("second");
    m.wait_text("from n");
    let requests = h.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].model(), Some("m"));
    assert_eq!(requests[1].model(), Some("n"));
    m.quit();
}

#[test]
fn a_tiny_terminal_and_escape_sequences_do_no_harm() {
    let h = tokio_harness(vec![Turn::text(
        "inert \u{1b}]52;c;ZXZpbA==\u{7} \u{1b}[2J done",
    )]);
    let mut m = start(&h);
    m.resize(1, 1);
    std::thread::sleep(std::time::Duration::from_millis(200));
    m.resize(120, 40);
    // Typed once the workspace is drawn again at full size.
    m.wait_for("the full-size frame", |t| {
        t.contains("March · project") && t.contains("Message the agent")
    });
    m.type_line("escape");
    let screen = m.wait_text("done");
    assert!(screen.contains("inert"), "{screen}");
    m.quit();
}

#[test]
fn an_agent_that_exits_at_once_and_broken_files_leave_march_usable() {
    let h = tokio_harness(vec![]);
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(0, "default_agent = \"broken\"\ntheme = \"nonexistent\"\n");
    text.push_str("\n[agents.broken]\ncommand = \"false\"\n");
    std::fs::write(&config, text).unwrap();
    std::fs::write(
        h.march_home().join("keymap.toml"),
        "[prefix]\n\"%\" = \"pane.split-sideways\"\n",
    )
    .unwrap();
    let mut m = spawn_clean(&h.project(), &h.dir.path().join("home"), &h.march_home());
    // The agent's failure is in its pane; the first file problem is in the status bar.
    let screen = m.wait_for("the agent failure and the file problem", |t| {
        (t.contains("cannot start broken") || t.contains("the agent exited"))
            && (t.contains("nonexistent") || t.contains("keymap.toml"))
    });
    assert!(!screen.contains("panicked"), "{screen}");
    // The workspace still works: the key list opens, and March quits cleanly.
    m.send(PREFIX);
    m.send(b"?");
    m.wait_text("esc closes");
    m.send(b"x");
    m.quit();
}

#[test]
fn first_run_sets_up_a_server_by_url_then_the_agent_answers() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime
        .block_on(march_testkit::ScriptedServer::start(
            march_testkit::Script::new(vec![Turn::text("Set up and answering.")])
                .with_models(["served-model"]),
        ))
        .unwrap();
    let url = server.base_url();
    let dir = tempfile::tempdir().unwrap();
    let (home, march_home, project) = (
        dir.path().join("home"),
        dir.path().join("march"),
        dir.path().join("project"),
    );
    for d in [&home, &march_home, &project] {
        std::fs::create_dir_all(d).unwrap();
    }
    // No key anywhere: a clean environment and an empty home.
    let mut m = spawn_clean(&project, &home, &march_home);
    m.wait_text("Set up a model");
    m.wait_for("the local servers probed", |t| {
        !t.contains("looking for local servers")
    });
    // The custom server is the last entry: up from the first wraps to it.
    m.send(b"\x1b[A");
    m.send(ENTER);
    m.wait_text("http");
    m.send(url.as_bytes());
    m.send(ENTER);
    m.send(ENTER);
    // The server's first model is chosen and the agent starts.
    m.wait_text("March · project");
    let config = std::fs::read_to_string(march_home.join("config.toml")).unwrap();
    assert!(
        config.contains("default_model = \"custom/served-model\""),
        "{config}"
    );
    assert!(config.contains(&url), "{config}");
    m.type_line("hello");
    m.wait_text("Set up and answering.");
    m.quit();
    drop(server);
}

#[test]
fn a_five_megabyte_single_line_answer_stays_usable() {
    let line = format!("{} END", "word ".repeat(1_000_000));
    // 5 MB is far past the model's window: the runner compacts after the answer (the
    // second turn is the summary), then the next prompt is answered.
    let h = tokio_harness(vec![
        Turn::text(line),
        Turn::text("## Goal\nRead a flood."),
        Turn::text("Still responsive."),
    ]);
    let mut m = start(&h);
    m.type_line("flood me");
    // The pane lays out the first 256 KB and says how much more there is.
    m.wait_text("more (copy the message to get all of it)");
    m.type_line("again");
    m.wait_text("Still responsive.");
    m.quit();
}

#[test]
fn resume_lists_the_projects_sessions_and_replays_the_chosen_one() {
    let h = tokio_harness(vec![
        Turn::text("Answer about the parser."),
        Turn::text("Answer in the second session."),
        Turn::text("Back in the parser session."),
    ]);
    let mut m = start(&h);
    m.type_line("explain the parser");
    m.wait_text("Answer about the parser.");
    // /new: a fresh session takes the pane's place.
    m.type_line("/new");
    m.wait_for("an empty pane", |t| {
        !t.contains("Answer about the parser.") && t.contains("March · project")
    });
    m.type_line("second topic");
    m.wait_text("Answer in the second session.");
    // /resume alone lists both sessions by title.
    m.type_line("/resume");
    let screen = m.wait_for("the session list", |t| {
        t.contains("Resume a session")
            && t.contains("explain the parser")
            && t.contains("second topic")
    });
    assert!(screen.contains("Resume a session"), "{screen}");
    // Esc closes the list and keeps the session.
    m.send(ESC);
    m.wait_for("the list to close", |t| !t.contains("Resume a session"));
    assert!(m.text().contains("Answer in the second session."));
    // /resume with words of a title opens that one, replayed from its file.
    m.type_line("/resume parser");
    let screen = m.wait_text("Answer about the parser.");
    assert!(
        !screen.contains("Answer in the second session."),
        "{screen}"
    );
    assert!(screen.contains("explain the parser"), "{screen}");
    // The resumed session goes on where it stopped.
    m.type_line("and more");
    m.wait_text("Back in the parser session.");
    let requests = h.server.requests();
    let last = &requests.last().unwrap().raw_body;
    assert!(last.contains("explain the parser"), "{last}");
    assert!(!last.contains("second topic"), "{last}");
    m.quit();
}

/// `march ARGS` from `cwd` with the harness's clean environment.
fn spawn_in(h: &Harness, cwd: &Path, args: &[&str]) -> PtyMarch {
    let home = h.dir.path().join("home");
    PtyMarch::spawn_clean(args, cwd, &home, &h.march_home(), &[])
}

/// The live `march runner` child of `march` working in `project`.
fn runner_in(march: u32, project: &Path) -> u32 {
    let found: Vec<u32> = descendants(march)
        .into_iter()
        .filter(|p| march_testkit::process::proc_state(*p).is_some_and(|s| s != 'Z'))
        .filter(|p| std::fs::read_link(format!("/proc/{p}/cwd")).is_ok_and(|cwd| cwd == project))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "runners in {}: {found:?}",
        project.display()
    );
    found[0]
}

#[test]
fn two_projects_attention_crash_restart_and_restore() {
    use march_testkit::Event;
    let h = tokio_harness(vec![
        Turn::text("Answer from api."),
        // The pause lets the user leave the tab before the question comes.
        Turn::stream(vec![Event::pause(1500), write_call("c1", "note.txt", "hi")]),
        Turn::text("Wrote the note."),
        Turn::stream(vec![
            Event::text("Part one. "),
            Event::pause(1500),
            Event::text("Part two done."),
        ]),
    ]);
    let root = h.dir.path().canonicalize().unwrap();
    let (api, web) = (root.join("api"), root.join("web"));
    std::fs::create_dir_all(&api).unwrap();
    std::fs::create_dir_all(&web).unwrap();
    let mut m = spawn_in(&h, &root, &["api", "web"]);
    m.wait_for("two project tabs", |t| {
        t.contains("1:api") && t.contains("2:web")
    });
    m.wait_text("March · api");
    m.type_line("hello api");
    m.wait_text("Answer from api.");

    // Prompt the web project, then go back to api before its question arrives.
    m.send(PREFIX);
    m.send(b"2");
    m.wait_text("March · web");
    m.send(b"write it\r\x011");
    m.wait_for("the web badge while api shows", |t| {
        t.contains("1 need you") && t.contains("2:web !") && t.contains("Answer from api.")
    });
    let signals = m.signals();
    let osc9 = signals
        .iter()
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .find(|s| s.starts_with("\x1b]9;"))
        .unwrap_or_else(|| panic!("no OSC 9 notification in {signals:?}"));
    assert!(
        osc9.contains("web") && osc9.contains("needs you"),
        "{osc9:?}"
    );
    assert!(signals.contains(&vec![0x07]), "no bell in {signals:?}");

    // The jump key lands on the question; answering it completes the turn.
    m.send(PREFIX);
    m.send(b"!");
    m.wait_text("Allow once");
    m.send(b"1");
    m.wait_for("the answer, and no one waiting", |t| {
        t.contains("Wrote the note.") && !t.contains("need you")
    });
    assert_eq!(std::fs::read_to_string(web.join("note.txt")).unwrap(), "hi");

    // Kill the web runner while api streams: api goes on, web comes back with its past.
    let web_runner = runner_in(m.server_pid(), &web);
    m.send(PREFIX);
    m.send(b"1");
    m.wait_text("Answer from api.");
    m.type_line("stream please");
    m.wait_text("Part one.");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(web_runner as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    m.wait_text("Part two done.");
    // The web runner was idle: once it is back with its session nothing failed (the crash
    // itself was notified when it happened).
    m.send(PREFIX);
    m.send(b"2");
    m.wait_for("the reloaded web session", |t| {
        t.contains("reloaded the session")
            && t.contains("write it")
            && t.contains("Wrote the note.")
    });
    let new_runner = runner_in(m.server_pid(), &web);
    assert_ne!(new_runner, web_runner);
    // The supervisor lists both projects, the web runner restarted once: ready, with the
    // new runner's pid.
    m.send(PREFIX);
    m.send(b"S");
    let screen = m.wait_for("the supervisor with the restart", |t| {
        t.contains("Supervisor · 2 projects · 2 sessions") && t.contains("restarts 1")
    });
    let row = screen
        .lines()
        .find(|l| l.contains("restarts 1"))
        .unwrap_or_default();
    assert!(
        row.contains(&format!("pid {new_runner}"))
            && row.contains("ready")
            && !row.contains("error"),
        "{row}"
    );
    m.send(ESC);
    m.wait_for("the supervisor to close", |t| !t.contains("Supervisor ·"));
    // A second pane in the web tab, so the layout has a split to restore.
    m.send(PREFIX);
    m.send(b"%");
    m.wait_for("two web panes", |t| t.matches("March · web").count() == 2);
    m.quit();

    // Started again on the same directories: tabs, the split and transcripts are back.
    let mut m = spawn_in(&h, &root, &["api", "web"]);
    // Web was the active tab, split in two.
    m.wait_for("the restored web tab", |t| {
        t.contains("Wrote the note.")
            && t.contains("2:web")
            && t.matches("March · web").count() == 2
    });
    m.send(PREFIX);
    m.send(b"1");
    m.wait_text("Part two done.");
    // A second march on the same directories attaches to the same workspace: what one
    // terminal does the other shows.
    let mut second = spawn_in(&h, &root, &["web", "api"]);
    second.wait_text("Part two done.");
    second.send(PREFIX);
    second.send(b"2");
    m.wait_text("Wrote the note.");
    // It detaches; the workspace goes on in the first.
    second.send(PREFIX);
    second.send(b"d");
    assert_eq!(second.wait_exit(), 0);
    second.wait_text("[detached from api]");
    m.send(PREFIX);
    m.send(b"1");
    m.wait_text("Part two done.");
    m.quit();
    // --fresh starts clean.
    let mut m = spawn_in(&h, &root, &["--fresh", "api", "web"]);
    m.wait_text("March · api");
    assert!(!m.text().contains("Part two done."));
    m.quit();
}

#[test]
fn an_agent_that_cannot_start_is_explained_in_the_supervisor() {
    let h = tokio_harness(vec![]);
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(0, "default_agent = \"ghost\"\n");
    text.push_str("\n[agents.ghost]\ncommand = \"/nonexistent/ghost-agent\"\n");
    std::fs::write(&config, text).unwrap();
    let mut m = start_plain(&h);
    m.wait_text("cannot start ghost");
    m.send(PREFIX);
    m.send(b"S");
    // The terminal may show a frame half drawn: wait for the whole row.
    m.wait_for("the crashed runner and why", |t| {
        t.contains("Supervisor · 1 project · 1 session")
            && t.contains("crashed")
            && t.contains("/nonexistent/ghost-agent")
    });
    m.send(ESC);
    m.wait_for("the supervisor to close", |t| !t.contains("Supervisor ·"));
    m.quit();
}

/// `march` in the harness's project, without waiting for an agent.
fn start_plain(h: &Harness) -> PtyMarch {
    spawn_clean(&h.project(), &h.dir.path().join("home"), &h.march_home())
}

#[test]
fn the_switcher_finds_saved_sessions_and_shows_them_here_or_in_a_split() {
    let h = tokio_harness(vec![
        Turn::text("Alpha answer."),
        Turn::text("Beta answer."),
    ]);
    let mut m = start(&h);
    m.type_line("alpha topic");
    m.wait_text("Alpha answer.");
    m.type_line("/new");
    m.wait_for("a fresh session", |t| {
        !t.contains("Alpha answer.") && t.contains("March · project")
    });
    m.type_line("beta topic");
    m.wait_text("Beta answer.");
    // The first session was stopped with /new: the switcher finds it saved on disk.
    m.send(PREFIX);
    m.send(b"s");
    // Its preview (the runner's `_meta.march.preview`) is the only place the alpha answer
    // can show while beta fills the pane.
    m.wait_for("the saved session in the switcher, with its preview", |t| {
        t.contains("Sessions ·")
            && t.contains("alpha topic")
            && t.contains("saved")
            && t.contains("Alpha answer.")
    });
    m.send(b"alpha");
    m.wait_for("the query narrowing the list", |t| t.contains("1 of 2"));
    m.send(ENTER);
    m.wait_for("the alpha session replayed here", |t| {
        t.contains("Alpha answer.") && !t.contains("Beta answer.") && !t.contains("Sessions ·")
    });
    // The last-session key goes back to beta, which went on in the background.
    m.send(PREFIX);
    m.send(b"\t");
    m.wait_for("beta again", |t| {
        t.contains("Beta answer.") && !t.contains("Alpha answer.")
    });
    // Ctrl-s in the switcher shows alpha in a split beside beta.
    m.send(PREFIX);
    m.send(b"s");
    m.wait_text("Sessions ·");
    m.send(b"alpha");
    m.wait_for("alpha selected", |t| t.contains("1 of 2"));
    m.send(b"\x13");
    m.wait_for("both sessions side by side", |t| {
        t.contains("Alpha answer.") && t.contains("Beta answer.") && !t.contains("Sessions ·")
    });
    m.quit();
}

/// Live `march runner` processes under `march`.
fn live_runners(march: u32) -> usize {
    descendants(march)
        .into_iter()
        .filter(|p| march_testkit::process::proc_state(*p).is_some_and(|s| s != 'Z'))
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.split('\0').any(|a| a == "runner"))
        })
        .count()
}

#[test]
fn an_idle_session_out_of_sight_stops_its_runner_and_starts_again_when_shown() {
    let h = tokio_harness(vec![Turn::text("First answer."), Turn::text("Back again.")]);
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[workspace]\nstop_idle_after = 1\n");
    std::fs::write(&config, text).unwrap();
    let mut m = start(&h);
    m.type_line("first topic");
    m.wait_text("First answer.");
    // A second pane with its own session, then the first session shown there too: the
    // second session is out of sight.
    m.send(PREFIX);
    m.send(b"%");
    m.wait_for("the second pane ready", |t| {
        t.matches("March · project").count() >= 2
    });
    m.send(PREFIX);
    m.send(b"s");
    m.wait_text("Sessions ·");
    m.send(b"first");
    m.wait_for("the first session selected", |t| t.contains("1 of 2"));
    m.send(ENTER);
    m.wait_for("the first session in both panes", |t| {
        t.matches("First answer.").count() == 2
    });
    let pid = m.server_pid();
    let deadline = std::time::Instant::now() + pty::SCREEN_LIMIT;
    while live_runners(pid) != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the idle runner was not stopped: {} live",
            live_runners(pid)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Showing it again starts its runner; a prompt there is answered.
    m.send(PREFIX);
    m.send(b"\t");
    m.wait_text("Restarting the agent");
    // Typed while it starts, the prompt waits for it.
    m.type_line("still there?");
    m.wait_text("Back again.");
    assert_eq!(live_runners(pid), 2);
    // Closing its pane stops its runner at once.
    m.send(PREFIX);
    m.send(b"x");
    let deadline = std::time::Instant::now() + pty::SCREEN_LIMIT;
    while live_runners(pid) != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "the closed pane's runner lives on"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    m.quit();
}

#[test]
fn a_project_deleted_while_open_is_reported_and_march_stays_usable() {
    let h = tokio_harness(vec![Turn::text("Still here.")]);
    let root = h.dir.path().canonicalize().unwrap();
    let (keep, doomed) = (root.join("keep"), root.join("doomed"));
    std::fs::create_dir_all(&keep).unwrap();
    std::fs::create_dir_all(&doomed).unwrap();
    let mut m = spawn_in(&h, &root, &["keep", "doomed"]);
    m.wait_text("March · keep");
    m.send(PREFIX);
    m.send(b"2");
    // Its agent's title: the session is open.
    m.wait_text("March · doomed");
    std::fs::remove_dir_all(&doomed).unwrap();
    // A new pane on the deleted project says why it cannot start.
    m.send(PREFIX);
    m.send(b"%");
    m.wait_text("the project directory");
    m.wait_text("is gone");
    // The other project still answers.
    m.send(PREFIX);
    m.send(b"1");
    m.wait_text("March · keep");
    m.type_line("are you there?");
    m.wait_text("Still here.");
    m.quit();
}

/// Whether the picker's first entry, right under the typed `other`, is the project `other`
/// (the temp directory's random name may let the fuzzy match take in others below it).
fn other_first(screen: &str) -> bool {
    let mut lines = screen.lines().skip_while(|l| !l.contains("› other"));
    lines.next().is_some() && lines.next().is_some_and(|l| l.contains("▸ other"))
}

#[test]
fn the_project_picker_opens_a_neighbour_or_a_typed_path_in_a_tab() {
    let h = tokio_harness(vec![]);
    let root = h.dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("other")).unwrap();
    std::fs::create_dir_all(root.join("deep/inside")).unwrap();
    let mut m = start(&h);
    // A neighbour of the project, by name.
    m.send(PREFIX);
    m.send(b"P");
    m.wait_for("the picker with the neighbours", |t| {
        t.contains("Open a project") && t.contains("other") && t.contains("nearby")
    });
    m.send(b"other");
    m.wait_for("other as the best match", other_first);
    m.send(ENTER);
    m.wait_for("a tab on it", |t| {
        t.contains("2:other") && t.contains("March · other")
    });
    // A typed path, relative to the focused project.
    m.send(PREFIX);
    m.send(b"P");
    m.wait_text("Open a project");
    m.send(b"../deep/inside");
    m.wait_text("this path");
    m.send(ENTER);
    m.wait_for("a tab on the typed path", |t| {
        t.contains("3:inside") && t.contains("March · inside")
    });
    // Choosing a project that is open shows its tab.
    m.send(PREFIX);
    m.send(b"P");
    m.wait_text("Open a project");
    m.send(b"other");
    m.wait_for("other as the best match", other_first);
    m.send(ENTER);
    m.wait_for("the other tab again", |t| {
        t.contains("March · other") && !t.contains("4:")
    });
    m.quit();
}

#[test]
fn the_cost_in_the_border_is_the_sessions_sum_and_survives_a_restart_of_march() {
    let usage = |input, output| march_testkit::ScriptUsage {
        input,
        output,
        ..Default::default()
    };
    let h = tokio_harness(vec![
        Turn::text("First priced answer.").with_usage(usage(100, 10)),
        Turn::text("Second priced answer.").with_usage(usage(200, 20)),
    ]);
    // $1000 and $2000 per million tokens: $0.12, then $0.24.
    let config = h.march_home().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "id = \"m\"\n",
        "id = \"m\"\ncost = { input = 1000.0, output = 2000.0 }\n",
    );
    std::fs::write(&config, text).unwrap();
    let mut m = start(&h);
    m.type_line("one");
    m.wait_for("the first cost", |t| {
        t.contains("First priced answer.") && t.contains("$0.12")
    });
    m.type_line("two");
    m.wait_for("the sum of both calls", |t| {
        t.contains("Second priced answer.") && t.contains("$0.36")
    });
    m.quit();
    // Started again: the session is loaded from its transcript, its cost with it.
    let mut m = start(&h);
    m.wait_for("the restored cost and tokens", |t| {
        t.contains("Second priced answer.") && t.contains("$0.36") && t.contains("Σ 330 tok")
    });
    m.quit();
}

#[test]
fn shift_tab_switches_to_auto_edit_and_the_next_edit_runs_without_asking() {
    let h = tokio_harness(vec![
        Turn::stream(vec![write_call("w1", "notes.txt", "hello")]),
        Turn::text("Wrote the notes."),
    ]);
    let mut m = start(&h);
    m.wait_for("the mode in the border", |t| t.contains("Ask"));
    m.send(b"\x1b[Z");
    m.wait_for("auto-edit in the border", |t| t.contains("Auto-edit"));
    m.type_line("write the notes");
    let screen = m.wait_text("Wrote the notes.");
    assert!(!screen.contains("Allow"), "no permission dialog: {screen}");
    assert_eq!(
        std::fs::read_to_string(h.project().join("notes.txt")).unwrap(),
        "hello"
    );
    m.quit();
}

#[test]
fn the_model_picker_offers_what_a_local_server_serves_beyond_the_config() {
    // The config lists m and n; the server also serves `pulled-later`.
    let h = Harness::on_own_runtime_with(
        march_testkit::Script::new(vec![Turn::text("from the pulled model")])
            .with_models(["m", "pulled-later"]),
    );
    let mut m = start(&h);
    m.type_line("/model");
    m.wait_for("the discovered model in the picker", |t| {
        t.contains("pulled-later (scripted)")
    });
    // m, n, then the discovered one: down twice from the current model.
    m.send(b"\x1b[B");
    m.send(b"\x1b[B");
    m.send(ENTER);
    m.wait_for("the model in the border", |t| t.contains("pulled-later"));
    m.type_line("hello");
    m.wait_text("from the pulled model");
    let calls: Vec<_> = h
        .server
        .requests()
        .into_iter()
        .filter(|r| r.model().is_some())
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].model(), Some("pulled-later"));
    m.quit();
}

#[test]
fn the_edit_dialog_shows_the_diff_before_the_edit_runs() {
    let edit = march_testkit::Event::tool_call(
        "e1",
        "edit",
        &[
            r#"{"path":"hello.py","edits":[{"oldText":"print('hello')","newText":"print('hello, world')"}]}"#,
        ],
    );
    let h = tokio_harness(vec![Turn::stream(vec![edit]), Turn::text("Edited.")]);
    std::fs::write(h.project().join("hello.py"), "import sys\nprint('hello')\n").unwrap();
    let mut m = start(&h);
    m.type_line("greet the world");
    let screen = m.wait_for("the diff in the dialog", |t| {
        t.contains("Allow once") && t.contains("+print('hello, world')")
    });
    assert!(screen.contains("-print('hello')"), "{screen}");
    assert!(screen.contains("hello.py"), "{screen}");
    // Nothing was written while the question is open.
    assert_eq!(
        std::fs::read_to_string(h.project().join("hello.py")).unwrap(),
        "import sys\nprint('hello')\n"
    );
    m.send(b"1");
    m.wait_text("Edited.");
    assert_eq!(
        std::fs::read_to_string(h.project().join("hello.py")).unwrap(),
        "import sys\nprint('hello, world')\n"
    );
    m.quit();
}

#[test]
fn steering_and_a_follow_up_typed_during_a_turn_reach_its_next_requests() {
    let h = tokio_harness(vec![
        // The command runs until the test has typed its messages.
        Turn::stream(vec![bash_call(
            "c1",
            "while [ ! -e go ]; do sleep 0.05; done; echo went",
        )]),
        Turn::text("Steered answer."),
        Turn::text("Followed-up answer."),
    ]);
    let_commands_run_unasked(&h);
    let mut m = start(&h);
    m.type_line("start the slow thing");
    // Typed while the command runs: the steer is delivered after its result.
    m.wait_for("the command running", |t| {
        t.contains("echo went") && t.contains("running")
    });
    m.type_line("use tabs");
    m.send(b"then summarise");
    m.send(b"\x1b\r");
    m.wait_for("both queued with their kinds", |t| {
        t.contains("⧗ steer: use tabs") && t.contains("⧗ follow-up: then summarise")
    });
    std::fs::write(h.project().join("go"), "").unwrap();
    let screen = m.wait_text("Followed-up answer.");
    assert!(screen.contains("Steered answer."), "{screen}");
    assert!(!screen.contains("⧗"), "the queue is empty: {screen}");
    let calls: Vec<_> = h
        .server
        .requests()
        .into_iter()
        .filter(|r| r.model().is_some())
        .collect();
    let bodies: Vec<&str> = calls.iter().map(|c| c.raw_body.as_str()).collect();
    assert_eq!(calls.len(), 3, "{bodies:#?}");
    assert!(!calls[0].raw_body.contains("use tabs"), "{bodies:#?}");
    assert!(calls[1].raw_body.contains("use tabs"));
    assert!(!calls[1].raw_body.contains("then summarise"));
    assert!(calls[2].raw_body.contains("then summarise"));
    m.quit();
}

#[test]
fn esc_cancels_a_turn_with_two_messages_queued_and_both_are_back_in_the_editor() {
    use march_testkit::Event;
    // The answer streams and then stays silent: no turn boundary comes, so nothing queued
    // can be delivered before the Esc (a command could end on its own first).
    let h = tokio_harness(vec![
        Turn::stream(vec![Event::text("Working on it."), Event::pause(600_000)]),
        Turn::text("Never reached."),
    ]);
    let mut m = start(&h);
    m.type_line("start the slow thing");
    m.wait_text("Working on it.");
    m.type_line("first queued");
    m.type_line("second queued");
    m.wait_for("both queued", |t| {
        t.contains("⧗ steer: first queued") && t.contains("⧗ steer: second queued")
    });
    m.send(ESC);
    let screen = m.wait_for("the cancel, the messages in the editor", |t| {
        t.contains("Cancelled") && !t.contains("⧗")
    });
    assert!(
        screen.contains("first queued") && screen.contains("second queued"),
        "{screen}"
    );
    assert!(!screen.contains("Never reached."), "{screen}");
    // Sent again from the editor, as one prompt.
    m.send(ENTER);
    m.wait_text("Never reached.");
    m.quit();
}

#[test]
fn a_bang_command_runs_in_the_agent_shell_and_reaches_the_next_request() {
    let h = tokio_harness(vec![Turn::text("I see it.")]);
    let mut m = start(&h);
    // The agent shell pane shows the command as it shows the agent's.
    m.send(PREFIX);
    m.send(b"e");
    m.wait_text("commands · ");
    // Alt-up: back to the agent pane above it.
    m.send(b"\x1b[1;3A");
    m.type_line("!echo bang-$((40 + 2))");
    let screen = m.wait_for("the command in the agent shell and its record", |t| {
        t.matches("bang-42").count() >= 2 && t.contains("echo bang-$((40 + 2))")
    });
    assert!(screen.contains("$ echo bang"), "{screen}");
    // `!!`: shown and kept, never sent.
    m.type_line("!!echo secret-$((1 + 1))");
    m.wait_for("the excluded command recorded", |t| t.contains("secret-2"));
    m.type_line("what did it print?");
    m.wait_text("I see it.");
    let calls: Vec<_> = h
        .server
        .requests()
        .into_iter()
        .filter(|r| r.model().is_some())
        .collect();
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].raw_body.contains("bang-42"),
        "{}",
        calls[0].raw_body
    );
    assert!(
        !calls[0].raw_body.contains("secret-2"),
        "{}",
        calls[0].raw_body
    );
    m.quit();
}

/// The live process of `march`'s tree whose command line mentions `needle`.
fn process_with(march: u32, needle: &str) -> u32 {
    let found: Vec<u32> = descendants(march)
        .into_iter()
        .filter(|p| march_testkit::process::proc_state(*p).is_some_and(|s| s != 'Z'))
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect();
    assert_eq!(found.len(), 1, "processes with {needle}: {found:?}");
    found[0]
}

#[test]
fn a_third_party_python_agent_runs_beside_marchs_own_and_restarts_alone() {
    use march_testkit::Event;
    let h = tokio_harness(vec![Turn::stream(vec![
        Event::text("March part one. "),
        Event::pause(1500),
        Event::text("March part two done."),
    ])]);
    // An agent written on the Python ACP SDK from PyPI, as `[agents.py]`.
    let python = march_testkit::test_tools::acp_python();
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/python_acp_agent.py");
    let config = h.march_home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[agents.py]\ncommand = {:?}\nargs = [{:?}]\n",
        python.display().to_string(),
        agent.display().to_string()
    ));
    std::fs::write(&config, text).unwrap();
    let mut m = start(&h);
    // With two agents configured, the split asks which; the Python one opens on the right.
    m.send(PREFIX);
    m.send(b"%");
    m.wait_for("the agent chooser", |t| {
        t.contains("New agent pane on project") && t.contains("py")
    });
    m.send(b"py");
    m.send(ENTER);
    m.wait_text("Py Agent · project");
    m.type_line("hello from the right");
    m.wait_text("Python agent heard: hello from the right");
    // March's own, on the left, streams while the Python agent is killed.
    m.send(b"\x1b[1;3D");
    m.type_line("stream please");
    m.wait_text("March part one.");
    let py = process_with(m.server_pid(), "python_acp_agent.py");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(py as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    // Over to the Python pane during March's pause: March's turn ends out of sight.
    let status_bar = |t: &str| t.lines().last().unwrap_or_default().to_string();
    m.send(b"\x1b[1;3C");
    m.wait_text("March part two done.");
    m.wait_for("March's turn done out of sight", |t| {
        status_bar(t).contains("1 done")
    });
    // The Python agent is back, alone: a new process, answering again.
    m.wait_for("the python agent restarted", |t| {
        t.contains("Py Agent · project")
    });
    // Its answer is the event that says it is back: then exactly one live process, new.
    m.type_line("still there?");
    m.wait_text("Python agent heard: still there?");
    let again = process_with(m.server_pid(), "python_acp_agent.py");
    assert_ne!(again, py);
    // The Python agent's turn ends out of sight too (March's, now in sight, is seen).
    m.send(b"out of sight\r\x1b[1;3D");
    m.wait_for("the python agent's turn done out of sight", |t| {
        t.contains("Python agent heard: out of sight") && status_bar(t).contains("1 done")
    });
    // Seen once its pane has the focus again.
    m.send(b"\x1b[1;3C");
    m.wait_for("seen", |t| !status_bar(t).contains("done"));
    // The supervisor names both agents; only the Python one restarted.
    m.send(PREFIX);
    m.send(b"S");
    let screen = m.wait_for("both sessions in the supervisor", |t| {
        t.contains("2 sessions") && t.contains("restarts 1")
    });
    let row = screen
        .lines()
        .find(|l| l.contains("restarts 1"))
        .unwrap_or_default();
    assert!(row.contains("Py Agent") || row.contains("py"), "{row}");
    m.send(ESC);
    // Closed before the next key: an escape right before the prefix reads as alt-prefix.
    m.wait_for("the supervisor to close", |t| !t.contains("Supervisor ·"));
    // The chooser remembers the project's last choice, first and marked.
    m.send(PREFIX);
    m.send(b"%");
    let screen = m.wait_for("the chooser again", |t| t.contains("last used"));
    let first = screen
        .lines()
        .position(|l| l.contains("last used"))
        .unwrap_or_default();
    assert!(
        screen.lines().nth(first).is_some_and(|l| l.contains("py")),
        "{screen}"
    );
    m.send(ESC);
    m.wait_for("the chooser to close", |t| !t.contains("New agent pane on"));
    m.quit();
}
