//! The user's terminal while the workspace runs: raw mode, the alternate screen, bracketed
//! paste, mouse, focus events and the kitty keyboard protocol, all undone on every way out
//! (normal exit, error, panic).

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};

/// Whether the terminal is in workspace mode, so the panic hook knows to restore it.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Holds the terminal in workspace mode; dropping it restores the terminal.
pub struct TerminalGuard {
    _private: (),
}

impl TerminalGuard {
    /// Enter workspace mode.
    pub fn enter() -> io::Result<Self> {
        install_panic_restore();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let guard = TerminalGuard { _private: () };
        let mut out = io::stdout();
        execute!(
            out,
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableMouseCapture,
            EnableFocusChange,
            cursor::Hide,
        )?;
        // Without it Esc, Alt-keys and Shift-Enter are ambiguous. Terminals that do not speak
        // the protocol ignore the request, so no query (which can stall for seconds on
        // terminals that never answer) is made first.
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Undo workspace mode (once; later calls do nothing).
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    // Every step is tried even when one fails: a half-restored terminal is worse.
    let _ = execute!(out, PopKeyboardEnhancementFlags);
    let _ = execute!(
        out,
        DisableFocusChange,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show,
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Restore the terminal before the panic message is printed, so it is readable.
fn install_panic_restore() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
