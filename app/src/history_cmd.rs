//! `march history`: search every session's turns, or rebuild the index from the transcripts.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, bail};
use march_core::history::{HistoryError, HistoryIndex, IndexStats, SearchHit, SearchQuery};
use march_core::paths::MarchPaths;
use march_core::session::{format_iso_ms, parse_iso_ms};

use crate::cli::{HistoryCommand, HistorySearchArgs};

/// Run `march history …`.
pub fn run(paths: &MarchPaths, command: &HistoryCommand) -> anyhow::Result<()> {
    match command {
        HistoryCommand::Search(args) => search(paths, args),
        HistoryCommand::Reindex => reindex(paths),
    }
}

/// Open the index; a damaged file was moved aside, which the user should know.
fn open(paths: &MarchPaths) -> anyhow::Result<HistoryIndex> {
    let index = HistoryIndex::open(&paths.history_db())?;
    if let Some(aside) = index.recovered_from() {
        eprintln!(
            "march: the history index was damaged; it was moved to {} and is rebuilt from the \
             session transcripts",
            aside.display()
        );
    }
    Ok(index)
}

/// Run `f`; when SQLite finds the index damaged on the way, rebuild it and run `f` again.
fn with_index<T>(
    paths: &MarchPaths,
    mut f: impl FnMut(&mut HistoryIndex) -> Result<T, HistoryError>,
) -> anyhow::Result<T> {
    let mut index = open(paths)?;
    match f(&mut index) {
        Err(HistoryError::Corrupt { path, .. }) => {
            eprintln!(
                "march: the history index {} is damaged; rebuilding it from the session transcripts",
                path.display()
            );
            drop(index);
            let mut index = HistoryIndex::recreate(&paths.history_db())?;
            Ok(f(&mut index)?)
        }
        other => Ok(other?),
    }
}

fn search(paths: &MarchPaths, args: &HistorySearchArgs) -> anyhow::Result<()> {
    let query = SearchQuery {
        text: args.query.join(" "),
        project: args
            .project
            .as_deref()
            .map(absolute)
            .transpose()?
            .map(|p| p.to_string_lossy().into_owned()),
        session_id: args.session.clone(),
        since_ms: time_bound("--since", args.since.as_deref())?,
        until_ms: time_bound("--until", args.until.as_deref())?,
        limit: args.limit,
    };
    let sessions = paths.sessions_dir();
    let hits = with_index(paths, |index| {
        // Catch up with sessions written since the last pass; what is indexed stays
        // searchable if that fails.
        if let Err(e) = index.update_all(&sessions) {
            tracing::warn!("history index catch-up failed: {e}");
        }
        index.search(&query)
    })?;
    if args.json {
        let mut out = String::new();
        for hit in &hits {
            out.push_str(&serde_json::to_string(hit)?);
            out.push('\n');
        }
        print!("{out}");
    } else if hits.is_empty() {
        eprintln!("march: no turn matches `{}`", printable(&query.text));
    } else {
        print!("{}", render(&hits));
    }
    Ok(())
}

fn reindex(paths: &MarchPaths) -> anyhow::Result<()> {
    let sessions = paths.sessions_dir();
    let stats = with_index(paths, |index| index.reindex_all(&sessions))
        .context("cannot rebuild the history index")?;
    println!("{}", summary(&stats, &paths.history_db()));
    for skipped in &stats.skipped {
        eprintln!(
            "march: skipped {}: {}",
            skipped.path.display(),
            printable(&skipped.reason)
        );
    }
    Ok(())
}

/// What a reindex did, in one line.
fn summary(stats: &IndexStats, db: &Path) -> String {
    format!(
        "indexed {} turns from {} session files into {}",
        stats.turns_written,
        stats.files_indexed,
        db.display()
    )
}

/// Hits as text: a heading line per turn, then its snippet.
fn render(hits: &[SearchHit]) -> String {
    let mut out = String::new();
    for hit in hits {
        let time = format_iso_ms(hit.time_ms);
        let _ = writeln!(
            out,
            "{}  {}  {} #{}{}",
            &time[..16.min(time.len())].replace('T', " "),
            printable(&hit.project),
            printable(&hit.session_id),
            hit.seq,
            hit.model
                .as_deref()
                .map(|m| format!("  {}", printable(m)))
                .unwrap_or_default(),
        );
        let _ = writeln!(out, "    {}", printable(&hit.snippet));
    }
    out
}

/// Text safe to print on a terminal: control characters (escape sequences from model or
/// tool output) become U+FFFD.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

fn time_bound(flag: &str, value: Option<&str>) -> anyhow::Result<Option<i64>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match parse_iso_ms(value.trim()) {
        Some(ms) => Ok(Some(ms)),
        None => bail!("{flag} wants a date such as 2026-11-30 or 2026-11-30T14:00, got `{value}`"),
    }
}

/// A project directory as the index stores it: absolute, as given (not canonicalized,
/// since sessions record the cwd they were started with).
fn absolute(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    if dir.is_absolute() {
        return Ok(dir.to_path_buf());
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(cwd.join(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_never_reach_the_terminal() {
        assert_eq!(
            printable("ok \x1b[2Jwiped\x07"),
            "ok \u{fffd}[2Jwiped\u{fffd}"
        );
    }

    #[test]
    fn bad_dates_are_explained() {
        let err = time_bound("--since", Some("yesterday")).unwrap_err();
        assert!(err.to_string().contains("--since wants a date"), "{err}");
        assert_eq!(
            time_bound("--until", Some("2026-11-30")).unwrap(),
            Some(parse_iso_ms("2026-11-30").unwrap())
        );
    }
}
