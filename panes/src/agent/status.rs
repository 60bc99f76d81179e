//! What an agent pane reports about itself: busy, waiting, unread, the model and other
//! choices from the session's config options, context use and cost, and the short text its
//! border shows.

use agent_client_protocol::v1::schema::{
    SessionConfigId, SessionConfigKind, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigSelectOptions, SessionConfigValueId,
};

use crate::sanitize::sanitize_line;

/// The config option category March's runner gives its sandbox select (docs/PROTOCOL.md;
/// ACP leaves `_` categories to implementations).
pub const SANDBOX_CATEGORY: &str = "_sandbox";

/// An agent pane's state, for the app's status bar and attention markers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PaneStatus {
    /// A turn is running.
    pub busy: bool,
    /// A permission request waits for the user.
    pub waiting_for_permission: bool,
    /// Something arrived since the pane was last drawn focused.
    pub unread: bool,
    /// The model's name, from the `model` config option.
    pub model: Option<String>,
    /// The thinking level, from the `thought_level` config option.
    pub thinking: Option<String>,
    /// The mode (permission mode), from the `mode` config option or the legacy mode.
    pub mode: Option<String>,
    /// How the agent's commands are confined, from its sandbox config option.
    pub sandbox: Option<String>,
    /// Tokens in the context, from the last usage update.
    pub context_used: Option<u64>,
    /// The context window, from the last usage update.
    pub context_size: Option<u64>,
    /// Cost so far: amount and currency.
    pub cost: Option<(f64, String)>,
    /// Tokens of every model call of the session so far, when the agent says.
    pub total_tokens: Option<u64>,
    /// The last error, until the next turn starts.
    pub error: Option<String>,
}

/// The current value's name of the first select option in `category`.
pub(crate) fn current_label(
    options: &[SessionConfigOption],
    category: &SessionConfigOptionCategory,
) -> Option<String> {
    let option = options
        .iter()
        .find(|o| o.category.as_ref() == Some(category))?;
    let SessionConfigKind::Select(select) = &option.kind else {
        return None;
    };
    let current = &select.current_value;
    let name = match &select.options {
        SessionConfigSelectOptions::Ungrouped(list) => list
            .iter()
            .find(|o| &o.value == current)
            .map(|o| o.name.clone()),
        SessionConfigSelectOptions::Grouped(groups) => groups
            .iter()
            .flat_map(|g| g.options.iter())
            .find(|o| &o.value == current)
            .map(|o| o.name.clone()),
        _ => None,
    };
    Some(sanitize_line(&name.unwrap_or_else(|| current.0.to_string())).into_owned())
}

/// The option of `category` and the value after its current one (wrapping), for cycling.
pub(crate) fn next_value(
    options: &[SessionConfigOption],
    category: &SessionConfigOptionCategory,
) -> Option<(SessionConfigId, SessionConfigValueId)> {
    let option = options
        .iter()
        .find(|o| o.category.as_ref() == Some(category))?;
    let SessionConfigKind::Select(select) = &option.kind else {
        return None;
    };
    let values: Vec<&SessionConfigValueId> = match &select.options {
        SessionConfigSelectOptions::Ungrouped(list) => list.iter().map(|o| &o.value).collect(),
        SessionConfigSelectOptions::Grouped(groups) => groups
            .iter()
            .flat_map(|g| g.options.iter().map(|o| &o.value))
            .collect(),
        _ => return None,
    };
    let at = values.iter().position(|v| **v == select.current_value);
    let next = values.get(at.map_or(0, |i| (i + 1) % values.len()))?;
    Some((option.id.clone(), (*next).clone()))
}

/// `950`, `12.3k`, `200k`, `1.2M`.
pub(crate) fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 100_000 {
        let s = format!("{:.1}k", n as f64 / 1000.0);
        s.replace(".0k", "k")
    } else if n < 1_000_000 {
        format!("{}k", n / 1000)
    } else {
        let s = format!("{:.1}M", n as f64 / 1_000_000.0);
        s.replace(".0M", "M")
    }
}

impl PaneStatus {
    /// The short summary on the pane's border: model · thinking · context · cost.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.model.clone());
        parts.extend(self.thinking.clone());
        parts.extend(self.mode.clone());
        parts.extend(self.sandbox.clone());
        if let (Some(used), Some(size)) = (self.context_used, self.context_size) {
            let percent = used.saturating_mul(100).checked_div(size).unwrap_or(0);
            parts.push(format!("{}/{} {percent}%", tokens(used), tokens(size)));
        }
        if let Some((amount, currency)) = &self.cost {
            parts.push(if currency == "USD" {
                format!("${amount:.2}")
            } else {
                format!("{amount:.2} {currency}")
            });
        }
        if let Some(total) = self.total_tokens {
            parts.push(format!("Σ {} tok", tokens(total)));
        }
        parts.join(" · ")
    }
}

impl super::AgentPane {
    /// The pane's state for the status bar.
    pub fn status(&self) -> PaneStatus {
        let facts = &self.transcript.facts;
        let usage = facts.usage.as_ref();
        PaneStatus {
            busy: self.busy,
            waiting_for_permission: !self.permissions.is_empty(),
            unread: self.unread,
            model: current_label(&facts.config, &SessionConfigOptionCategory::Model),
            thinking: current_label(&facts.config, &SessionConfigOptionCategory::ThoughtLevel),
            mode: current_label(&facts.config, &SessionConfigOptionCategory::Mode).or_else(|| {
                // A legacy mode by its name when the agent gave one.
                let id = facts.mode.as_ref()?;
                let name = facts.modes.iter().find(|(m, _)| m == id).map(|(_, n)| n);
                Some(name.unwrap_or(id).clone())
            }),
            sandbox: current_label(
                &facts.config,
                &SessionConfigOptionCategory::Other(SANDBOX_CATEGORY.to_string()),
            ),
            context_used: usage.map(|u| u.used),
            context_size: usage.map(|u| u.size),
            cost: usage.and_then(|u| u.cost.clone()),
            total_tokens: usage.and_then(|u| u.total_tokens),
            error: self.error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{SessionConfigSelect, SessionConfigSelectOption};

    use super::*;

    #[test]
    fn token_counts_read_short() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(12_000), "12k");
        assert_eq!(tokens(200_000), "200k");
        assert_eq!(tokens(1_250_000), "1.2M");
    }

    #[test]
    fn summary_joins_what_is_known() {
        let s = PaneStatus {
            model: Some("Sonnet".into()),
            context_used: Some(12_345),
            context_size: Some(200_000),
            cost: Some((0.123, "USD".into())),
            ..PaneStatus::default()
        };
        assert_eq!(s.summary(), "Sonnet · 12.3k/200k 6% · $0.12");
        assert_eq!(PaneStatus::default().summary(), "");
    }

    #[test]
    fn labels_come_from_the_current_value() {
        let option = SessionConfigOption::new(
            "model",
            "Model",
            SessionConfigKind::Select(SessionConfigSelect::new(
                "b",
                vec![
                    SessionConfigSelectOption::new("a", "Alpha"),
                    SessionConfigSelectOption::new("b", "Beta"),
                ],
            )),
        )
        .category(SessionConfigOptionCategory::Model);
        let options = [option];
        assert_eq!(
            current_label(&options, &SessionConfigOptionCategory::Model).as_deref(),
            Some("Beta")
        );
        assert_eq!(
            current_label(&options, &SessionConfigOptionCategory::Mode),
            None
        );
    }
}
