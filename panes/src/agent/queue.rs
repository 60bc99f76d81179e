//! Messages typed while a turn runs: handed to the agent's running turn when it takes them,
//! or run as prompts of their own after it; never lost.

use super::{AgentPane, PaneEvent, QueuedKind};

/// A message typed while a turn runs.
#[derive(Debug, Clone)]
pub(super) struct Queued {
    pub(super) text: String,
    pub(super) kind: QueuedKind,
    /// The pane's number for it, until the agent answers.
    pub(super) local: u64,
    /// Who holds it now.
    pub(super) held: Held,
}

/// Where a queued message is: on its way to the agent, in the agent's running turn, or
/// waiting to run as the next prompt (the agent could not take it, or the turn ended).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Held {
    /// Handed to the agent, no answer yet.
    Sending,
    /// In the running turn, under the agent's id.
    Taken(String),
    /// Runs as a prompt of its own after the turn.
    AfterTurn,
}

impl Queued {
    /// The agent's id, when the running turn holds it.
    pub(super) fn taken_id(&self) -> Option<&str> {
        match &self.held {
            Held::Taken(id) => Some(id),
            Held::Sending | Held::AfterTurn => None,
        }
    }

    /// How the queue line names it: its kind while the turn may still take it.
    pub(super) fn label(&self) -> &'static str {
        match (&self.held, self.kind) {
            (Held::Sending, QueuedKind::Steer) => "steer (sending)",
            (Held::Sending, QueuedKind::FollowUp) => "follow-up (sending)",
            (Held::Taken(_), kind) => kind.label(),
            (Held::AfterTurn, _) | (_, QueuedKind::Next) => QueuedKind::Next.label(),
        }
    }
}

impl AgentPane {
    /// The message typed during the last turn that runs now as a prompt of its own, if any:
    /// one the agent could not take into the turn (it lacks March's queue extension, or the
    /// turn ended first).
    pub fn next_queued(&mut self) -> Option<String> {
        if self.busy {
            return None;
        }
        let at = self.queued.iter().position(|q| q.held == Held::AfterTurn)?;
        self.queued.remove(at).map(|q| q.text)
    }

    /// Messages typed while the turn runs, oldest first: their text and kind.
    pub fn queued(&self) -> impl Iterator<Item = (&str, QueuedKind)> {
        self.queued.iter().map(|q| (q.text.as_str(), q.kind))
    }

    /// The agent took queued message `local` into the running turn as `id`; `None`: it did
    /// not (no extension, or no turn), so it runs as the next prompt. Returns the id to take
    /// back from the agent when the user took the message back while it was on its way.
    #[must_use]
    pub fn queue_taken(&mut self, local: u64, id: Option<String>) -> Option<String> {
        let Some(q) = self.queued.iter_mut().find(|q| q.local == local) else {
            return id;
        };
        // After the turn's end, the agent no longer holds it whatever it answers.
        if q.held == Held::Sending {
            q.held = id.map_or(Held::AfterTurn, Held::Taken);
        }
        None
    }

    /// Queue `text` for the running turn (`kind`); the event asks the app to hand it over.
    pub(super) fn queue_kind(&mut self, text: String, kind: QueuedKind) -> PaneEvent {
        self.next_queued += 1;
        let local = self.next_queued;
        self.queued.push_back(Queued {
            text: text.clone(),
            kind,
            local,
            held: Held::Sending,
        });
        PaneEvent::Queue { local, text, kind }
    }

    /// The turn ended: messages it delivered leave the queue; those it never delivered
    /// (`unsent`, by id) stay, to run as prompts, or after a cancel or a failure come back
    /// into the editor with everything else queued, so nothing typed is lost.
    pub(super) fn settle_queue(&mut self, unsent: &[String], restore: bool) {
        self.queued.retain(|q| match q.taken_id() {
            Some(id) => unsent.iter().any(|u| u == id),
            None => true,
        });
        for q in &mut self.queued {
            q.held = Held::AfterTurn;
        }
        if restore {
            self.restore_queued();
        }
    }

    /// Every queued message back into the editor, before what is typed there.
    pub(super) fn restore_queued(&mut self) {
        if self.queued.is_empty() {
            return;
        }
        let mut texts: Vec<String> = self.queued.drain(..).map(|q| q.text).collect();
        let typed = self.prompt.text();
        if !typed.trim().is_empty() {
            texts.push(typed);
        }
        self.prompt.replace(&texts.join("\n\n"));
    }

    /// Queues a prompt from outside the editor (`march send`) to run after the running turn.
    pub fn queue(&mut self, text: String) {
        self.next_queued += 1;
        self.queued.push_back(Queued {
            text,
            kind: QueuedKind::Next,
            local: self.next_queued,
            held: Held::AfterTurn,
        });
    }
}
