//! March's own record of a session, kept apart from the transcript (architecture invariant 7):
//! its id, title, timeline, and the settings a load restores (model, thinking level,
//! permission mode).
//!
//! The transcript (`session/`) is the agent's record and stays pi-compatible; this file is
//! March's. One small JSON file per session, `<data>/march-sessions/<session id>.json`,
//! replaced atomically (temp file, fsync, rename) on every save, so a crash leaves the old
//! state or the new one, never half of either. The state can always be rebuilt from the
//! transcript, so a damaged file is reported ([`MarchSessionError::Corrupt`]) for the caller
//! to log and set aside, never fatal.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file::{FileMode, sync_dir, write_file};
use crate::model::ThinkingLevel;
use crate::session::{is_valid_session_id, now_iso};

/// The format version written into every state file.
pub const FORMAT_VERSION: u32 = 1;

/// Most timeline events a state keeps; the oldest are dropped first.
pub const MAX_TIMELINE: usize = 1000;

/// Longest event detail kept, in characters; longer ones are cut with `…`.
pub const MAX_DETAIL_CHARS: usize = 200;

/// Why a state file could not be read, written or removed.
#[derive(Debug, thiserror::Error)]
pub enum MarchSessionError {
    /// The id cannot name a file (it would leave the directory, say).
    #[error(
        "invalid session id `{0}`: use letters, digits, `.`, `_` and `-`, \
         starting and ending with a letter or digit"
    )]
    InvalidId(String),
    /// The file exists but could not be read.
    #[error("cannot read March session state {path}: {source}")]
    Read {
        /// The state file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a state file for this session (bad JSON, missing fields, another id).
    #[error("March session state {path} is damaged: {message}")]
    Corrupt {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The state could not be serialised (a path that is not UTF-8, say).
    #[error("cannot serialise March session state for `{id}`: {message}")]
    Serialize {
        /// The session id.
        id: String,
        /// The serialiser's message.
        message: String,
    },
    /// The directory or the file could not be written.
    #[error("cannot write March session state {path}: {source}")]
    Write {
        /// The state file (or its directory, when that could not be created).
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file could not be removed or moved aside.
    #[error("cannot remove March session state {path}: {source}")]
    Remove {
        /// The state file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What happened to a session, as recorded on its timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimelineKind {
    /// The session was created.
    Created,
    /// The session was loaded from disk, its conversation replayed.
    Loaded,
    /// The session was resumed from disk without replay.
    Resumed,
    /// A prompt started an Agent Run.
    Prompt,
    /// The model was switched.
    ModelChange,
    /// The thinking level was switched.
    ThinkingChange,
    /// The permission mode was switched.
    PermissionChange,
    /// A limit (`max_turns`, `tool_timeout`) was set for the session.
    LimitChange,
    /// The sandbox mode was switched.
    SandboxChange,
    /// The session was closed (by the client, or because the client went away).
    Closed,
    /// A kind this version does not know (written by a newer March); kept so the file loads.
    #[serde(other)]
    Unknown,
}

/// One entry of a session's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEvent {
    /// When it happened (ISO-8601, UTC, milliseconds).
    pub at: String,
    /// What happened.
    pub kind: TimelineKind,
    /// A short note: the new value of a setting, the first line of a prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// March's state of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MarchSession {
    /// The format version ([`FORMAT_VERSION`]).
    #[serde(default = "format_version")]
    pub version: u32,
    /// The session id (the file's name).
    pub id: String,
    /// The project directory.
    pub cwd: PathBuf,
    /// The transcript: the session's JSONL file.
    pub transcript: PathBuf,
    /// The title shown in session lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When the session was created (ISO-8601).
    pub created_at: String,
    /// When this state last changed (ISO-8601).
    pub updated_at: String,
    /// The model, as `provider/model-id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The thinking level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingLevel>,
    /// The permission mode (`ask`, `auto-edit`, `yolo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// Limits the user set for this session, over the config's (absent: the config's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<SessionLimits>,
    /// The sandbox mode the user chose for this session (absent: the config's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// What happened, oldest first, at most [`MAX_TIMELINE`] events.
    #[serde(default)]
    pub timeline: Vec<TimelineEvent>,
}

fn format_version() -> u32 {
    FORMAT_VERSION
}

/// Limits set for one session; a missing value means no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionLimits {
    /// Model calls one prompt may make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Seconds a tool call may run (per-tool overrides of the config still apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout: Option<f64>,
}

/// Just the title, so listing many sessions does not build every timeline.
#[derive(Deserialize)]
struct TitleOnly {
    #[serde(default)]
    title: Option<String>,
}

impl MarchSession {
    /// A fresh state, created now, with an empty timeline.
    pub fn new(
        id: impl Into<String>,
        cwd: impl Into<PathBuf>,
        transcript: impl Into<PathBuf>,
    ) -> Self {
        let now = now_iso();
        MarchSession {
            version: FORMAT_VERSION,
            id: id.into(),
            cwd: cwd.into(),
            transcript: transcript.into(),
            title: None,
            created_at: now.clone(),
            updated_at: now,
            model: None,
            thinking: None,
            permission_mode: None,
            limits: None,
            sandbox: None,
            timeline: Vec::new(),
        }
    }

    /// Add an event now (detail cut to [`MAX_DETAIL_CHARS`]), dropping the oldest events
    /// beyond [`MAX_TIMELINE`], and mark the state updated.
    pub fn record(&mut self, kind: TimelineKind, detail: Option<String>) {
        let at = now_iso();
        self.updated_at = at.clone();
        self.timeline.push(TimelineEvent {
            at,
            kind,
            detail: detail.map(|d| shorten(&d)),
        });
        self.bound_timeline();
    }

    fn bound_timeline(&mut self) {
        if self.timeline.len() > MAX_TIMELINE {
            let extra = self.timeline.len() - MAX_TIMELINE;
            self.timeline.drain(..extra);
        }
    }

    /// The state file of session `id` in `dir`.
    pub fn file(dir: &Path, id: &str) -> Result<PathBuf, MarchSessionError> {
        if !is_valid_session_id(id) {
            return Err(MarchSessionError::InvalidId(id.to_string()));
        }
        Ok(dir.join(format!("{id}.json")))
    }

    /// Read the state of session `id` from `dir`: `None` when there is none yet.
    ///
    /// A file that does not parse, or names another session, is [`MarchSessionError::Corrupt`];
    /// a timeline longer than [`MAX_TIMELINE`] keeps its newest events.
    pub fn load(dir: &Path, id: &str) -> Result<Option<Self>, MarchSessionError> {
        let path = Self::file(dir, id)?;
        let Some(bytes) = read_if_exists(&path)? else {
            return Ok(None);
        };
        let mut state: MarchSession =
            serde_json::from_slice(&bytes).map_err(|e| MarchSessionError::Corrupt {
                path: path.clone(),
                message: e.to_string(),
            })?;
        if state.id != id {
            return Err(MarchSessionError::Corrupt {
                path,
                message: format!("it belongs to session `{}`", state.id),
            });
        }
        state.bound_timeline();
        Ok(Some(state))
    }

    /// Only the title stored for session `id`, if any (`None` also when there is no file).
    pub fn load_title(dir: &Path, id: &str) -> Result<Option<String>, MarchSessionError> {
        let path = Self::file(dir, id)?;
        let Some(bytes) = read_if_exists(&path)? else {
            return Ok(None);
        };
        let only: TitleOnly =
            serde_json::from_slice(&bytes).map_err(|e| MarchSessionError::Corrupt {
                path,
                message: e.to_string(),
            })?;
        Ok(only.title.filter(|t| !t.trim().is_empty()))
    }

    /// Write the state to `<dir>/<id>.json` (the directory is created if missing): a temp
    /// file in the same directory, fsync'd, then renamed over the old file. Returns the file.
    pub fn save(&self, dir: &Path) -> Result<PathBuf, MarchSessionError> {
        let path = Self::file(dir, &self.id)?;
        let mut text =
            serde_json::to_string_pretty(self).map_err(|e| MarchSessionError::Serialize {
                id: self.id.clone(),
                message: e.to_string(),
            })?;
        text.push('\n');
        fs::create_dir_all(dir).map_err(|source| MarchSessionError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        if let Err(e) = write_file(&path, text.as_bytes(), FileMode::Kept) {
            return Err(MarchSessionError::Write {
                path: e.path.unwrap_or(path),
                source: e.error,
            });
        }
        Ok(path)
    }

    /// Remove the state of session `id`; whether there was one.
    pub fn delete(dir: &Path, id: &str) -> Result<bool, MarchSessionError> {
        let path = Self::file(dir, id)?;
        match fs::remove_file(&path) {
            Ok(()) => {
                sync_dir(dir);
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(source) => Err(MarchSessionError::Remove { path, source }),
        }
    }

    /// Move a damaged state file aside to `<id>.json.corrupt` (replacing an older one), so
    /// the next save does not destroy what someone may want to look at. Returns the new
    /// name, or `None` when there was no file.
    pub fn set_aside(dir: &Path, id: &str) -> Result<Option<PathBuf>, MarchSessionError> {
        let path = Self::file(dir, id)?;
        let aside = dir.join(format!("{id}.json.corrupt"));
        match fs::rename(&path, &aside) {
            Ok(()) => Ok(Some(aside)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(source) => Err(MarchSessionError::Remove { path, source }),
        }
    }
}

fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>, MarchSessionError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(MarchSessionError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn shorten(detail: &str) -> String {
    if detail.chars().count() <= MAX_DETAIL_CHARS {
        return detail.to_string();
    }
    let mut cut: String = detail.chars().take(MAX_DETAIL_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const ID: &str = "0b7c1a2e-5d6f-4a3b-9c8d-7e6f5a4b3c2d";

    fn sample() -> MarchSession {
        let mut s = MarchSession::new(ID, "/work/proj", "/data/sessions/--work-proj--/x.jsonl");
        s.title = Some("Fix the parser".into());
        s.model = Some("scripted/n".into());
        s.thinking = Some(ThinkingLevel::High);
        s.permission_mode = Some("yolo".into());
        s.record(TimelineKind::Created, None);
        s.record(TimelineKind::PermissionChange, Some("yolo".into()));
        s
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn saves_and_loads_camel_case_json() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("march-sessions");
        let state = sample();
        let path = state.save(&dir).unwrap();
        assert_eq!(path, dir.join(format!("{ID}.json")));
        assert_eq!(files(&dir), [format!("{ID}.json")]);

        let json: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(json["version"], 1);
        assert_eq!(json["id"], ID);
        assert_eq!(json["cwd"], "/work/proj");
        assert_eq!(json["permissionMode"], "yolo");
        assert_eq!(json["thinking"], "high");
        assert_eq!(json["model"], "scripted/n");
        assert!(json["createdAt"].as_str().unwrap().ends_with('Z'));
        assert!(json["updatedAt"].is_string());
        assert_eq!(json["timeline"][0]["kind"], "created");
        assert!(json["timeline"][0].get("detail").is_none());
        assert_eq!(json["timeline"][1]["kind"], "permission_change");
        assert_eq!(json["timeline"][1]["detail"], "yolo");

        assert_eq!(MarchSession::load(&dir, ID).unwrap(), Some(state.clone()));
        assert_eq!(
            MarchSession::load_title(&dir, ID).unwrap().as_deref(),
            Some("Fix the parser")
        );

        // A save replaces the file and leaves no temp file behind.
        let mut changed = state;
        changed.record(TimelineKind::Closed, None);
        changed.save(&dir).unwrap();
        assert_eq!(files(&dir), [format!("{ID}.json")]);
        let loaded = MarchSession::load(&dir, ID).unwrap().unwrap();
        assert_eq!(loaded.timeline.len(), 3);
        assert_eq!(loaded.timeline[2].kind, TimelineKind::Closed);
    }

    #[test]
    fn missing_is_none_and_minimal_files_load() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(MarchSession::load(root.path(), ID).unwrap(), None);
        assert_eq!(MarchSession::load_title(root.path(), ID).unwrap(), None);
        let minimal = format!(
            r#"{{"id":"{ID}","cwd":"/p","transcript":"/t.jsonl","createdAt":"a","updatedAt":"b",
               "timeline":[{{"at":"c","kind":"from_the_future","detail":"x"}}],"extra":1}}"#
        );
        fs::write(root.path().join(format!("{ID}.json")), minimal).unwrap();
        let state = MarchSession::load(root.path(), ID).unwrap().unwrap();
        assert_eq!(state.version, FORMAT_VERSION);
        assert_eq!(
            (state.title, state.model, state.thinking),
            (None, None, None)
        );
        assert_eq!(state.permission_mode, None);
        assert_eq!(state.timeline[0].kind, TimelineKind::Unknown);
    }

    #[test]
    fn damage_is_an_error_naming_the_file_and_can_be_set_aside() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        let path = dir.join(format!("{ID}.json"));
        fs::write(&path, "{\"id\": \"").unwrap();
        let err = MarchSession::load(dir, ID).unwrap_err();
        assert!(matches!(err, MarchSessionError::Corrupt { .. }), "{err:?}");
        assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
        assert!(MarchSession::load_title(dir, ID).is_err());

        let aside = MarchSession::set_aside(dir, ID).unwrap().unwrap();
        assert_eq!(fs::read_to_string(&aside).unwrap(), "{\"id\": \"");
        assert_eq!(MarchSession::load(dir, ID).unwrap(), None);
        assert_eq!(MarchSession::set_aside(dir, ID).unwrap(), None);

        // Valid JSON for another session is damage too.
        let mut other = sample();
        other.id = "another-session".into();
        let text = serde_json::to_string(&other).unwrap();
        fs::write(&path, text).unwrap();
        let err = MarchSession::load(dir, ID).unwrap_err();
        assert!(err.to_string().contains("another-session"), "{err}");
    }

    #[test]
    fn ids_that_leave_the_directory_are_refused() {
        let root = tempfile::tempdir().unwrap();
        for id in ["../x", "a/b", "", ".hidden"] {
            assert!(matches!(
                MarchSession::load(root.path(), id),
                Err(MarchSessionError::InvalidId(_))
            ));
            assert!(MarchSession::delete(root.path(), id).is_err());
        }
        let mut s = sample();
        s.id = "../escape".into();
        assert!(matches!(
            s.save(root.path()),
            Err(MarchSessionError::InvalidId(_))
        ));
        assert!(files(root.path()).is_empty());
    }

    #[test]
    fn the_timeline_and_details_are_bounded() {
        let mut s = MarchSession::new(ID, "/p", "/t.jsonl");
        for i in 0..MAX_TIMELINE + 5 {
            s.record(TimelineKind::Prompt, Some(format!("prompt {i}")));
        }
        assert_eq!(s.timeline.len(), MAX_TIMELINE);
        assert_eq!(s.timeline[0].detail.as_deref(), Some("prompt 5"));
        s.record(
            TimelineKind::Prompt,
            Some("x".repeat(MAX_DETAIL_CHARS + 10)),
        );
        let detail = s.timeline.last().unwrap().detail.clone().unwrap();
        assert_eq!(detail.chars().count(), MAX_DETAIL_CHARS);
        assert!(detail.ends_with('…'));

        // A file written with a longer timeline keeps its newest events.
        let root = tempfile::tempdir().unwrap();
        s.timeline.extend(s.timeline.clone());
        let text = serde_json::to_string(&s).unwrap();
        fs::write(root.path().join(format!("{ID}.json")), text).unwrap();
        let loaded = MarchSession::load(root.path(), ID).unwrap().unwrap();
        assert_eq!(loaded.timeline.len(), MAX_TIMELINE);
        assert_eq!(loaded.timeline.last(), s.timeline.last());
    }

    #[test]
    fn an_unwritable_directory_is_an_error_naming_it() {
        let root = tempfile::tempdir().unwrap();
        // A regular file where the directory should be: even root cannot create it.
        let dir = root.path().join("march-sessions");
        fs::write(&dir, "").unwrap();
        let err = sample().save(&dir).unwrap_err();
        assert!(matches!(err, MarchSessionError::Write { .. }), "{err:?}");
        assert!(err.to_string().contains(&*dir.to_string_lossy()), "{err}");
    }

    #[test]
    fn delete_removes_the_file_once() {
        let root = tempfile::tempdir().unwrap();
        sample().save(root.path()).unwrap();
        assert!(MarchSession::delete(root.path(), ID).unwrap());
        assert!(!MarchSession::delete(root.path(), ID).unwrap());
        assert!(files(root.path()).is_empty());
    }
}
