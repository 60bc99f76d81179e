//! Asking the terminal whether it shows pictures, once as it attaches: the kitty graphics
//! query, the device attributes (sixel is attribute 4) and the cell size in pixels,
//! followed by a status report every terminal answers, so the answer's end is known
//! without waiting out the timeout. Never guessed from `TERM` or other variables.

use std::io;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use ratatui_image::picker::cap_parser::{Parser, QueryStdioOptions, Response};

/// How long the terminal may take to answer.
const ANSWER_LIMIT: Duration = Duration::from_secs(1);

/// What the terminal said about pictures.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// Its protocol: `kitty` or `sixel`.
    pub graphics: Option<String>,
    /// Its cell size in pixels (width, height).
    pub cell: Option<(u16, u16)>,
}

/// Asks this process's terminal; nothing when it is no terminal, is inside tmux (whose
/// passthrough March does not turn on), is the Linux console (which would print the
/// query), or does not answer within [`ANSWER_LIMIT`].
pub fn ask() -> Answer {
    let (stdin, stdout) = (io::stdin(), io::stdout());
    let term = std::env::var("TERM").unwrap_or_default();
    if !io::IsTerminal::is_terminal(&stdin)
        || !io::IsTerminal::is_terminal(&stdout)
        || std::env::var_os("TMUX").is_some()
        || term == "linux"
        || term == "dumb"
    {
        return Answer::default();
    }
    if crossterm::terminal::enable_raw_mode().is_err() {
        return Answer::default();
    }
    let answer = query(&stdin, &mut stdout.lock()).unwrap_or_else(|e| {
        tracing::debug!("the terminal's graphics query failed: {e}");
        Answer::default()
    });
    let _ = crossterm::terminal::disable_raw_mode();
    let answer = Answer {
        graphics: known_to_work(answer.graphics),
        ..answer
    };
    tracing::debug!(?answer, "the terminal's graphics");
    answer
}

/// The protocol to use given what the terminal `answered`: WezTerm and Konsole say yes to
/// kitty's query but do not draw its placeholders (ratatui-image's notes), and Konsole's
/// sixel is unreliable; WezTerm and iTerm2 draw iTerm2's images, which have no query.
/// These terminals tell who they are only in their environment, so these are the
/// variables they set themselves (never `TERM`).
fn known_to_work(answered: Option<String>) -> Option<String> {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if !var("WEZTERM_EXECUTABLE").is_empty()
        || var("TERM_PROGRAM") == "iTerm.app"
        || var("LC_TERMINAL") == "iTerm2"
    {
        return Some("iterm2".to_string());
    }
    if !var("KONSOLE_VERSION").is_empty() {
        return None;
    }
    answered
}

fn query(stdin: &io::Stdin, out: &mut impl io::Write) -> io::Result<Answer> {
    out.write_all(Parser::query(false, QueryStdioOptions::default()).as_bytes())?;
    out.flush()?;
    let deadline = Instant::now() + ANSWER_LIMIT;
    let mut parser = Parser::new();
    let mut responses = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let timeout = rustix::time::Timespec::try_from(left).unwrap_or_default();
        let fd = stdin.as_fd();
        let mut fds = [rustix::event::PollFd::new(
            &fd,
            rustix::event::PollFlags::IN,
        )];
        if rustix::event::poll(&mut fds, Some(&timeout))? == 0 {
            break;
        }
        // Read from the descriptor itself: std's buffer would keep bytes that the
        // workspace's own reader, which reads the descriptor, never sees.
        let n = rustix::io::read(fd, &mut buf)?;
        if n == 0 {
            break;
        }
        let mut done = false;
        for &b in &buf[..n] {
            for response in parser.push(char::from(b)) {
                match response {
                    Response::Status => done = true,
                    other => responses.push(other),
                }
            }
        }
        if done {
            return Ok(interpret(&responses));
        }
    }
    // No end of the answer in time: what comes later must not be read as keys.
    let _ = rustix::termios::tcflush(stdin.as_fd(), rustix::termios::QueueSelector::IFlush);
    Ok(interpret(&responses))
}

/// The answer the terminal's responses make: kitty's graphics over sixel.
fn interpret(responses: &[Response]) -> Answer {
    let graphics = if responses.contains(&Response::Kitty) {
        Some("kitty")
    } else if responses.contains(&Response::Sixel) {
        Some("sixel")
    } else {
        None
    };
    let cell = responses.iter().find_map(|r| match r {
        Response::CellSize(size) => *size,
        _ => None,
    });
    Answer {
        graphics: graphics.map(str::to_string),
        cell: cell.or_else(window_cell),
    }
}

/// The cell size from the terminal's window size in pixels, when it reports one.
fn window_cell() -> Option<(u16, u16)> {
    let size = rustix::termios::tcgetwinsize(io::stdout()).ok()?;
    if size.ws_xpixel == 0 || size.ws_ypixel == 0 || size.ws_col == 0 || size.ws_row == 0 {
        return None;
    }
    Some((size.ws_xpixel / size.ws_col, size.ws_ypixel / size.ws_row))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &str) -> Vec<Response> {
        let mut parser = Parser::new();
        bytes.chars().flat_map(|c| parser.push(c)).collect()
    }

    #[test]
    fn kitty_answers_make_kitty_graphics_and_a_cell_size() {
        let responses = parse("\x1b_Gi=31;OK\x1b\\\x1b[6;20;10t\x1b[?62;22c\x1b[0n");
        let answer = interpret(&responses);
        assert_eq!(answer.graphics.as_deref(), Some("kitty"));
        assert_eq!(answer.cell, Some((10, 20)));
    }

    #[test]
    fn sixel_comes_from_the_device_attributes() {
        let answer = interpret(&parse("\x1b[?62;4;22c\x1b[0n"));
        assert_eq!(answer.graphics.as_deref(), Some("sixel"));
    }

    #[test]
    fn a_terminal_that_answers_only_the_status_shows_no_pictures() {
        let answer = interpret(&parse("\x1b[?62;22c\x1b[0n"));
        assert_eq!(answer.graphics, None);
    }
}
