//! Agents' avatars as the workspace shows them. Each agent's image is read from
//! `<config>/profiles/avatars/` off the UI loop when the workspace starts and after each turn
//! (the turn may have set a new one), and made again only when its file changed. Until an
//! image is read, and for an agent without one, the avatar is the agent's initial.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use march_panes::avatar::Avatar;
use march_panes::theme::Theme;

use super::jobs::{JobDone, Jobs};

/// What an avatar was made from: its file, as it was then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
}

impl FileStamp {
    fn of(path: PathBuf) -> Option<FileStamp> {
        let meta = std::fs::metadata(&path).ok()?;
        Some(FileStamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            path,
        })
    }
}

/// One agent's avatar as a job found it: the file it came from (`None`: there is none),
/// and the avatar, or why the file makes none.
#[derive(Debug)]
pub struct AvatarRead {
    agent: String,
    stamp: Option<FileStamp>,
    avatar: Result<Arc<Avatar>, String>,
}

impl AvatarRead {
    /// `agent`'s avatar as if read from a file (tests only).
    #[cfg(test)]
    pub(crate) fn made(agent: &str, avatar: Arc<Avatar>) -> AvatarRead {
        AvatarRead {
            agent: agent.to_string(),
            stamp: None,
            avatar: Ok(avatar),
        }
    }
}

struct Known {
    avatar: Arc<Avatar>,
    stamp: Option<FileStamp>,
}

/// Every agent's avatar the workspace has read.
#[derive(Default)]
pub struct Avatars {
    /// The theme whose colours ring the pictures; nothing is read before it is set.
    theme: Option<Theme>,
    known: HashMap<String, Known>,
    /// A read is out; another waits for it.
    reading: bool,
    /// Agents to read again once the read out is back.
    again: bool,
}

impl Avatars {
    /// The theme the pictures are drawn for (set once the UI has it).
    pub fn set_theme(&mut self, theme: Theme) {
        if self.theme.as_ref() != Some(&theme) {
            self.theme = Some(theme);
            // Rings in the old colours are made again.
            self.known.clear();
        }
    }

    /// `agent`'s avatar: its image once read, else its initial.
    pub fn get(&self, agent: &str) -> Arc<Avatar> {
        match self.known.get(agent) {
            Some(known) => known.avatar.clone(),
            None => Arc::new(Avatar::initial(agent)),
        }
    }

    /// Reads `agents`' avatar files under `config_dir` off the loop; those that changed
    /// come back through [`Avatars::read`].
    pub fn refresh(&mut self, jobs: &Jobs, config_dir: Option<&Path>, agents: Vec<String>) {
        let (Some(theme), Some(config_dir)) = (self.theme.clone(), config_dir) else {
            return;
        };
        if self.reading {
            self.again = true;
            return;
        }
        self.reading = true;
        let config_dir = config_dir.to_path_buf();
        let stamps: HashMap<String, Option<Option<FileStamp>>> = agents
            .into_iter()
            .map(|agent| {
                let stamp = self.known.get(&agent).map(|k| k.stamp.clone());
                (agent, stamp)
            })
            .collect();
        jobs.blocking(move || JobDone::AvatarsRead(read_changed(&config_dir, &theme, stamps)));
    }

    /// Avatars a read found changed; whether any did. `retry` says whether another read
    /// was asked for meanwhile (the caller starts it).
    pub fn read(&mut self, found: Vec<AvatarRead>) -> (bool, bool) {
        self.reading = false;
        let retry = std::mem::take(&mut self.again);
        let changed = !found.is_empty();
        for read in found {
            let avatar = match read.avatar {
                Ok(avatar) => avatar,
                Err(e) => {
                    tracing::warn!(agent = read.agent, "avatar not shown: {e}");
                    Arc::new(Avatar::initial(&read.agent))
                }
            };
            self.known.insert(
                read.agent,
                Known {
                    avatar,
                    stamp: read.stamp,
                },
            );
        }
        (changed, retry)
    }
}

/// The avatars of `stamps`' agents whose file is not the one they were made from (`None`:
/// never read; `Some(None)`: read when there was no file). Slow: reads and decodes images.
fn read_changed(
    config_dir: &Path,
    theme: &Theme,
    stamps: HashMap<String, Option<Option<FileStamp>>>,
) -> Vec<AvatarRead> {
    let mut found = Vec::new();
    for (agent, known) in stamps {
        let stamp = march_core::paths::find_avatar(config_dir, &agent).and_then(FileStamp::of);
        if known.as_ref() == Some(&stamp) {
            continue;
        }
        let avatar = match &stamp {
            None => Ok(Arc::new(Avatar::initial(&agent))),
            Some(stamp) => std::fs::read(&stamp.path)
                .map_err(|e| format!("cannot read {}: {e}", stamp.path.display()))
                .and_then(|bytes| {
                    Avatar::from_image(&agent, bytes, theme)
                        .map(Arc::new)
                        .map_err(|e| format!("{}: {e}", stamp.path.display()))
                }),
        };
        found.push(AvatarRead {
            agent,
            stamp,
            avatar,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        march_panes::picture::solid_png(w, h, [200, 30, 30, 255])
    }

    #[test]
    fn an_avatar_is_made_from_its_file_again_only_when_the_file_changed() {
        let config = tempfile::tempdir().unwrap();
        let theme = Theme::default();
        let stamps =
            |known: Option<Option<FileStamp>>| HashMap::from([("march".to_string(), known)]);
        // No file: the initial, once.
        let found = read_changed(config.path(), &theme, stamps(None));
        assert_eq!(found.len(), 1);
        assert!(found[0].stamp.is_none());
        assert!(!found[0].avatar.as_ref().unwrap().has_image());
        assert!(read_changed(config.path(), &theme, stamps(Some(None))).is_empty());

        let dir = march_core::paths::avatar_dir(config.path());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("march.png"), png(40, 40)).unwrap();
        let found = read_changed(config.path(), &theme, stamps(None));
        let stamp = found[0].stamp.clone().unwrap();
        assert!(found[0].avatar.as_ref().unwrap().has_image());
        // The same file: nothing to do.
        let known = Some(Some(stamp));
        assert!(read_changed(config.path(), &theme, stamps(known.clone())).is_empty());
        // Another image: made again.
        std::fs::write(dir.join("march.png"), png(50, 40)).unwrap();
        let found = read_changed(config.path(), &theme, stamps(known.clone()));
        assert_eq!(found.len(), 1);
        // A file that is no image: the initial, and why.
        std::fs::write(dir.join("march.png"), b"not an image").unwrap();
        let found = read_changed(config.path(), &theme, stamps(known));
        assert!(found[0].avatar.is_err());
        let mut avatars = Avatars::default();
        assert_eq!(avatars.read(found), (true, false));
        assert!(!avatars.get("march").has_image());
        assert_eq!(avatars.get("march").glyph(), "M");
    }
}
