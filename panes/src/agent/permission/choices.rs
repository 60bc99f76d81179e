//! What each answer of a permission request means, and the one key that always means it.
//!
//! The keys follow the meaning, never the option's position or the tool: `1` is always
//! "allow once", whatever the agent offers and whichever tool asks. A meaning the request
//! does not offer leaves its digit unused rather than renumbering the rest. March's runner
//! names each option's scope in `_meta.march.scope`; other agents' options are read by kind.

use agent_client_protocol::v1::schema::{PermissionOption, PermissionOptionKind};

/// What an answer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Meaning {
    /// Run this call once (a request to leave the sandbox: once, outside it).
    AllowOnce,
    /// Run this tool's calls for the rest of the session.
    AllowSession,
    /// Run this tool's calls in every session of the project.
    AllowProject,
    /// Run this command once outside the sandbox (offered beside "allow once").
    AllowOutside,
    /// Turn this call down.
    Reject,
    /// Turn this call down and tell the agent why (the pane asks for the words).
    RejectWithMessage,
    /// Turn this tool's calls down for the rest of the session.
    RejectAlways,
    /// An option of another agent whose meaning repeats one above: the `n`th such.
    Other(u8),
}

impl Meaning {
    /// The key that chooses it.
    pub(crate) fn key(self) -> char {
        match self {
            Meaning::AllowOnce => '1',
            Meaning::AllowSession => '2',
            Meaning::AllowProject => '3',
            Meaning::AllowOutside => '4',
            Meaning::Reject => '5',
            Meaning::RejectWithMessage => '6',
            Meaning::RejectAlways => '7',
            Meaning::Other(n) => char::from_digit(u32::from(8 + n) % 10, 10).unwrap_or('0'),
        }
    }

    /// Whether choosing it lets the call run.
    pub(crate) fn allows(self) -> bool {
        matches!(
            self,
            Meaning::AllowOnce
                | Meaning::AllowSession
                | Meaning::AllowProject
                | Meaning::AllowOutside
        )
    }
}

/// The scope March's runner gives an option (`_meta.march.scope`).
fn scope(option: &PermissionOption) -> Option<&str> {
    option.meta.as_ref()?.get("march")?.get("scope")?.as_str()
}

/// The meaning of each option, in the agent's order: by its scope where the agent names
/// one, else by its kind; a meaning already taken makes the option an `Other`.
pub(crate) fn meanings(options: &[PermissionOption]) -> Vec<Meaning> {
    let mut taken: Vec<Meaning> = Vec::new();
    let mut others = 0u8;
    options
        .iter()
        .map(|o| {
            let wanted = match (scope(o), o.kind) {
                (Some("outside-sandbox"), _) => Some(Meaning::AllowOutside),
                (Some("project"), PermissionOptionKind::AllowAlways) => Some(Meaning::AllowProject),
                (_, PermissionOptionKind::AllowOnce) => Some(Meaning::AllowOnce),
                (_, PermissionOptionKind::AllowAlways) => Some(Meaning::AllowSession),
                (_, PermissionOptionKind::RejectOnce) => Some(Meaning::Reject),
                (_, PermissionOptionKind::RejectAlways) => Some(Meaning::RejectAlways),
                _ => None,
            };
            let meaning = match wanted.filter(|m| !taken.contains(m)) {
                Some(m) => m,
                None => {
                    others += 1;
                    Meaning::Other(others - 1)
                }
            };
            taken.push(meaning);
            meaning
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(id: &str, kind: PermissionOptionKind, scope: Option<&str>) -> PermissionOption {
        let o = PermissionOption::new(id.to_string(), id.to_string(), kind);
        match scope {
            Some(s) => {
                let mut meta = serde_json::Map::new();
                meta.insert("march".into(), serde_json::json!({ "scope": s }));
                o.meta(meta)
            }
            None => o,
        }
    }

    #[test]
    fn march_scopes_and_other_agents_kinds_give_the_same_keys() {
        use PermissionOptionKind::*;
        let march = [
            option("allow-once", AllowOnce, Some("once")),
            option("allow-outside-sandbox", AllowOnce, Some("outside-sandbox")),
            option("allow-always", AllowAlways, Some("session")),
            option("allow-project", AllowAlways, Some("project")),
            option("reject-once", RejectOnce, Some("once")),
            option("reject-always", RejectAlways, Some("session")),
        ];
        let keys: String = meanings(&march).iter().map(|m| m.key()).collect();
        assert_eq!(keys, "142357");
        // Another agent's options, by kind alone: allow once is 1, reject is 5 there too.
        let other = [
            option("yes", AllowOnce, None),
            option("always", AllowAlways, None),
            option("no", RejectOnce, None),
        ];
        let keys: String = meanings(&other).iter().map(|m| m.key()).collect();
        assert_eq!(keys, "125");
        // A kind that repeats takes the keys after the fixed ones.
        let twice = [option("a", AllowOnce, None), option("b", AllowOnce, None)];
        let keys: String = meanings(&twice).iter().map(|m| m.key()).collect();
        assert_eq!(keys, "18");
    }
}
