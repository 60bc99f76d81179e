//! Pictures in the pane: a label where no terminal shows pictures, the rows a picture
//! covers where one does, placements only for pictures wholly in view, and attachments.

use agent_client_protocol::v1::schema::{ImageContent, SessionUpdate};
use base64::Engine as _;

use super::*;
use crate::agent::{PaneEvent, TurnOutcome};
use crate::picture::Picture;

/// A `w`×`h` PNG.
fn png(w: u32, h: u32) -> Vec<u8> {
    crate::picture::solid_png(w, h, [10, 200, 10, 255])
}

fn picture_update(w: u32, h: u32) -> SessionUpdate {
    let data = base64::engine::general_purpose::STANDARD.encode(png(w, h));
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Image(ImageContent::new(
        data,
        "image/png",
    ))))
}

fn screen(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_picture_is_its_label_and_gets_rows_only_where_pictures_show() {
    let theme = Theme::default();
    let mut pane = pane_with(&[(0, agent("Here it is:")), (1, picture_update(160, 64))]);
    let t = draw(&mut pane, &theme, 60, 30);
    assert!(screen(&t).contains("[image 160×64 png]"), "{}", screen(&t));
    assert!(pane.placements().is_empty(), "no terminal shows pictures");

    pane.show_pictures(true);
    let t = draw(&mut pane, &theme, 60, 30);
    let placed = pane.placements();
    assert_eq!(placed.len(), 1);
    // 160×64 px is 20×4 cells at the layout's cell size, under its label.
    let area = placed[0].area;
    assert_eq!((area.width, area.height), (20, 4));
    let label_row = (0..30)
        .find(|&y| {
            let buf = t.backend().buffer();
            (0..60)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("[image 160×64 png]")
        })
        .unwrap();
    assert_eq!(area.y, label_row + 1);
}

#[test]
fn a_tools_picture_follows_the_call_once() {
    use agent_client_protocol::v1::schema::{
        ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    };
    let theme = Theme::default();
    let data = base64::engine::general_purpose::STANDARD.encode(png(160, 64));
    let result = vec![
        ToolCallContent::from(ContentBlock::from("Saved .march/images/cat.png")),
        ToolCallContent::from(ContentBlock::Image(ImageContent::new(data, "image/png"))),
    ];
    let done = |status| {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            "c1",
            ToolCallUpdateFields::new()
                .status(status)
                .content(result.clone()),
        ))
    };
    let mut pane = pane_with(&[
        (
            0,
            SessionUpdate::ToolCall(ToolCall::new("c1", "image_generate a cat")),
        ),
        (1, done(ToolCallStatus::InProgress)),
        (2, done(ToolCallStatus::Completed)),
    ]);
    pane.show_pictures(true);
    let t = draw(&mut pane, &theme, 60, 30);
    let screen = screen(&t);
    assert_eq!(screen.matches("[image 160×64 png]").count(), 1, "{screen}");
    assert_eq!(
        pane.placements().len(),
        1,
        "one picture, though two updates carried it"
    );
}

#[test]
fn a_picture_partly_scrolled_away_is_not_placed() {
    let theme = Theme::default();
    // A picture of 10×10 cells (label and 10 rows) above an answer of `n` lines.
    let pane_of = |n: usize| {
        let mut updates = vec![(0, picture_update(80, 160))];
        let text: String = (0..n).map(|i| format!("line {i}\n\n")).collect();
        updates.push((1, agent_id(&text, "after")));
        let mut pane = pane_with(&updates);
        pane.show_pictures(true);
        pane
    };
    let mut short = pane_of(1);
    draw(&mut short, &theme, 60, 20);
    assert_eq!(short.placements().len(), 1, "wholly in view");
    // Following the end of a longer answer, the picture's top rows scroll away.
    let mut long = pane_of(4);
    let t = draw(&mut long, &theme, 60, 20);
    assert!(screen(&t).contains("line 3"));
    assert!(!screen(&t).contains("[image"), "{}", screen(&t));
    assert!(long.placements().is_empty(), "partly in view: not drawn");
}

#[test]
fn attachments_show_under_the_editor_and_backspace_takes_the_last_off() {
    let theme = Theme::default();
    let mut pane = AgentPane::new("agent");
    assert!(pane.attach(Picture::from_bytes(png(32, 16)).unwrap()));
    assert!(pane.attach(Picture::from_bytes(png(8, 8)).unwrap()));
    let t = draw(&mut pane, &theme, 80, 20);
    assert!(
        screen(&t).contains("[image 32×16 png] [image 8×8 png]"),
        "{}",
        screen(&t)
    );
    pane.handle_key(key(KeyCode::Backspace));
    assert_eq!(pane.attached().len(), 1);
    // Pictures alone make a prompt; they are taken with it.
    assert_eq!(pane.submit(), PaneEvent::Submit(String::new()));
    assert_eq!(pane.take_attached().len(), 1);
    // Typed text is deleted before any picture.
    pane.attach(Picture::from_bytes(png(8, 8)).unwrap());
    type_text(&mut pane, "ab");
    pane.handle_key(key(KeyCode::Backspace));
    assert_eq!(pane.attached().len(), 1);
}

#[test]
fn a_pasted_picture_path_asks_the_app_to_attach_it() {
    let mut pane = AgentPane::new("agent");
    let event = pane.paste("'/tmp/shot one.png'");
    assert_eq!(
        event,
        PaneEvent::AttachImage {
            path: "/tmp/shot one.png".into(),
            pasted: Some("'/tmp/shot one.png'".to_string()),
        }
    );
    assert_eq!(pane.paste("plain words"), PaneEvent::Redraw);
}

#[test]
fn a_dialog_over_a_picture_keeps_it_from_being_drawn() {
    let theme = Theme::default();
    let mut pane = pane_with(&[(0, agent("Look:")), (1, picture_update(160, 96))]);
    pane.show_pictures(true);
    draw(&mut pane, &theme, 60, 24);
    assert_eq!(pane.placements().len(), 1);
    pane.show_permission(permission_request());
    draw(&mut pane, &theme, 60, 24);
    assert!(pane.placements().is_empty(), "the dialog covers it");
}

#[test]
fn a_pasted_path_is_text_until_its_picture_replaces_it() {
    let mut pane = AgentPane::new("agent");
    type_text(&mut pane, "look ");
    let pasted = "/tmp/shot.png";
    assert!(matches!(pane.paste(pasted), PaneEvent::AttachImage { .. }));
    type_text(&mut pane, " please");
    assert!(pane.attach_pasted(Picture::from_bytes(png(4, 4)).unwrap(), pasted));
    assert_eq!(pane.attached().len(), 1);
    assert_eq!(pane.submit(), PaneEvent::Submit("look  please".to_string()));
}

#[test]
fn a_pasted_path_ended_by_cr_is_replaced_whole_by_its_picture() {
    let mut pane = AgentPane::new("agent");
    // The text the app hands back is the text inserted: its CR became a line break.
    let event = pane.paste("/tmp/shot.png\r");
    let PaneEvent::AttachImage {
        pasted: Some(pasted),
        ..
    } = event
    else {
        panic!("{event:?}");
    };
    assert_eq!(pasted, "/tmp/shot.png\n");
    assert!(pane.attach_pasted(Picture::from_bytes(png(4, 4)).unwrap(), &pasted));
    type_text(&mut pane, "this");
    assert_eq!(pane.submit(), PaneEvent::Submit("this".to_string()));
}

#[test]
fn a_prompt_refused_before_any_answer_comes_back_with_its_pictures() {
    let mut pane = AgentPane::new("agent");
    let picture = Picture::from_bytes(png(4, 4)).unwrap();
    pane.submit_local_with("what is this?", std::slice::from_ref(&picture));
    pane.turn_started();
    pane.turn_ended(TurnOutcome::Error(
        "the model m does not take images".to_string(),
    ));
    assert_eq!(pane.attached().len(), 1);
    assert_eq!(
        pane.submit(),
        PaneEvent::Submit("what is this?".to_string())
    );
    // Once the agent answered, a later failure leaves the editor alone.
    let mut pane = AgentPane::new("agent");
    pane.submit_local_with("again", &[picture]);
    pane.turn_started();
    pane.apply(&agent("Looking."));
    pane.turn_ended(TurnOutcome::Error("stream cut".to_string()));
    assert!(pane.attached().is_empty());
}

#[test]
fn pictures_wait_while_a_turn_runs_and_commands_still_work() {
    let mut pane = AgentPane::new("agent");
    pane.turn_started();
    pane.attach(Picture::from_bytes(png(4, 4)).unwrap());
    type_text(&mut pane, "steer with this");
    assert_eq!(pane.submit(), PaneEvent::Redraw);
    assert_eq!(pane.attached().len(), 1, "kept");
    pane.edit_prompt(crate::agent::PromptEdit::KillToStart);
    type_text(&mut pane, "/model");
    assert!(matches!(pane.submit(), PaneEvent::Slash { .. }));
}

#[test]
fn the_header_shows_the_avatar_in_each_attention_state_with_and_without_pictures() {
    use crate::attention::Attention;
    use crate::avatar::{Avatar, AvatarBadge, testing};
    let theme = crate::test_support::dark();
    let avatar = testing::avatar(&theme);
    let mut shown = Vec::new();
    for pictures in [false, true] {
        for state in Attention::ALL {
            let mut pane = pane_with(&[(0, agent("Ready."))]);
            pane.show_pictures(pictures);
            pane.set_avatar(Some(AvatarBadge {
                avatar: avatar.clone(),
                state,
            }));
            let t = draw(&mut pane, &theme, 44, 6);
            let placed: Vec<_> = pane.placements().to_vec();
            let row = testing::shown_row(t.backend().buffer(), 0, &placed, &avatar);
            shown.push(format!("{:<9} pictures {pictures:<5} {row}", state.words()));
        }
    }
    // An agent without an image: its initial, pictures or not.
    let mut pane = pane_with(&[(0, agent("Ready."))]);
    pane.show_pictures(true);
    let plain = std::sync::Arc::new(Avatar::initial("claude"));
    pane.set_avatar(Some(AvatarBadge {
        avatar: plain.clone(),
        state: Attention::NeedsYou,
    }));
    let t = draw(&mut pane, &theme, 44, 6);
    assert!(pane.placements().is_empty());
    let row = testing::shown_row(t.backend().buffer(), 0, &[], &plain);
    shown.push(format!("no image  pictures true  {row}"));
    insta::assert_snapshot!(shown.join("\n"));
}

#[test]
fn a_permission_request_shows_the_picture_it_would_put_somewhere() {
    use agent_client_protocol::v1::schema::{
        ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
    };
    let theme = Theme::default();
    let data = base64::engine::general_purpose::STANDARD.encode(png(256, 256));
    let mut request = permission_request();
    request.tool_call = ToolCallUpdate::new(
        "call-1",
        ToolCallUpdateFields::new()
            .title("set avatar .march/images/fox.png")
            .content(vec![
                ToolCallContent::from(ContentBlock::from(
                    "to /home/u/.config/march/profiles/avatars/march.png:",
                )),
                ToolCallContent::from(ContentBlock::Image(ImageContent::new(data, "image/png"))),
            ]),
    );
    let mut pane = pane_with(&[(0, agent("Here is a fox."))]);
    pane.show_permission(request);
    // No terminal shows pictures: the label says what it is.
    let t = draw(&mut pane, &theme, 80, 40);
    assert!(screen(&t).contains("[image 256×256 png]"), "{}", screen(&t));
    assert!(pane.placements().is_empty());
    // One does: the picture goes under the title, inside the modal.
    pane.show_pictures(true);
    let t = draw(&mut pane, &theme, 80, 40);
    let placed = pane.placements();
    assert_eq!(placed.len(), 1, "{}", screen(&t));
    let area = placed[0].area;
    // 256×256 px is 32×16 cells, scaled into 24 columns and the row cap.
    assert!(
        area.width <= 24 && area.height <= crate::picture::MAX_ROWS,
        "{area:?}"
    );
    let rows = screen(&t);
    let title_row = rows.lines().position(|l| l.contains("set avatar")).unwrap();
    assert!(
        usize::from(area.y) > title_row,
        "{area:?} under the title at {title_row}"
    );
    assert!(rows.contains("[image 256×256 png]"));
}
