//! What a runner asks the browser daemon, one request per line (`crate::daemon`). Every
//! request but `status` and `stop` names the session it acts for: a session reaches only
//! its own tabs.

use serde::{Deserialize, Serialize};

/// An element of the page: a reference from the page's outline, or a CSS selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// A `ref` the outline printed (the element's backend node id).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<i64>,
    /// A CSS selector; the first element it matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// One request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Load `url` in the session's current tab (a new one when it has none or `new_tab`).
    Navigate {
        /// The session.
        session: String,
        /// Where to go.
        url: String,
        /// Open it in a new tab, which becomes current.
        #[serde(default)]
        new_tab: bool,
    },
    /// The current page: as markdown, or as an outline with element references.
    Read {
        /// The session.
        session: String,
        /// The accessibility outline instead of the text.
        #[serde(default)]
        outline: bool,
    },
    /// Click an element.
    Click {
        /// The session.
        session: String,
        /// The element.
        target: Target,
    },
    /// Type into an element (focused first), then press Enter when `submit`.
    Type {
        /// The session.
        session: String,
        /// The element.
        target: Target,
        /// What to type.
        text: String,
        /// Press Enter after it.
        #[serde(default)]
        submit: bool,
    },
    /// Scroll the page by `pixels` (down when positive), or an element into view.
    Scroll {
        /// The session.
        session: String,
        /// The element to bring into view, if any.
        #[serde(default)]
        target: Option<Target>,
        /// How far.
        #[serde(default)]
        pixels: i64,
    },
    /// Wait until the page's text holds `text`.
    WaitFor {
        /// The session.
        session: String,
        /// The text to wait for.
        text: String,
        /// Give up after this long.
        timeout_ms: u64,
    },
    /// A PNG of the viewport (or the whole page).
    Screenshot {
        /// The session.
        session: String,
        /// The whole page rather than what fits the viewport.
        #[serde(default)]
        full_page: bool,
    },
    /// Run JavaScript in the page; its value as JSON.
    Evaluate {
        /// The session.
        session: String,
        /// The expression.
        expression: String,
    },
    /// The session's tabs.
    Tabs {
        /// The session.
        session: String,
    },
    /// Make tab `tab` current.
    SwitchTab {
        /// The session.
        session: String,
        /// The tab's number.
        tab: u32,
    },
    /// Close tab `tab`.
    CloseTab {
        /// The session.
        session: String,
        /// The tab's number.
        tab: u32,
    },
    /// Close all of the session's tabs (it ended).
    Release {
        /// The session.
        session: String,
    },
    /// The daemon, its browser and every session's tabs.
    Status,
    /// Close the browser and exit.
    Stop,
}

impl Request {
    /// The session it acts for (`status` and `stop` act for none).
    pub fn session(&self) -> Option<&str> {
        match self {
            Request::Navigate { session, .. }
            | Request::Read { session, .. }
            | Request::Click { session, .. }
            | Request::Type { session, .. }
            | Request::Scroll { session, .. }
            | Request::WaitFor { session, .. }
            | Request::Screenshot { session, .. }
            | Request::Evaluate { session, .. }
            | Request::Tabs { session }
            | Request::SwitchTab { session, .. }
            | Request::CloseTab { session, .. }
            | Request::Release { session } => Some(session),
            Request::Status | Request::Stop => None,
        }
    }
}

/// One tab, as `tabs` and `status` list it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabInfo {
    /// Its number, unique in the daemon's life.
    pub tab: u32,
    /// Where it is.
    pub url: String,
    /// Its title.
    pub title: String,
    /// The session's current tab.
    pub current: bool,
}

/// One session's tabs in `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionTabs {
    /// The session.
    pub session: String,
    /// Its tabs.
    pub tabs: Vec<TabInfo>,
}

/// The answer to `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The daemon's process id.
    pub pid: u32,
    /// The browser's product and version, once one runs.
    pub browser: Option<String>,
    /// The browser's process id, when the daemon launched it.
    pub browser_pid: Option<u32>,
    /// Every session's tabs.
    pub sessions: Vec<SessionTabs>,
}
