//! The first-run setup view the agent pane shows when no model can be reached: providers
//! whose keys are in the environment, local OpenAI-compatible servers, a form to paste an
//! API key, and a form for a custom server's base URL.
//!
//! The view holds plain data and returns [`SetupEvent`]s; the app discovers providers,
//! stores keys and retries, then reports back with [`SetupView::set_providers`],
//! [`SetupView::set_probing`] and [`SetupView::set_message`].

mod field;
mod render;
#[cfg(test)]
mod tests;

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use field::{Edit, Field, MAX_INPUT};

/// A provider as the setup view lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupProvider {
    /// The provider's name (`openai`, `anthropic`, `ollama`, …).
    pub name: String,
    /// The environment variable its key is read from, if it takes one.
    pub env_var: Option<String>,
    /// What discovery found.
    pub status: ProviderStatus,
}

/// What discovery found for a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderStatus {
    /// A key is set in this environment variable; the provider should already work.
    KeyInEnv(String),
    /// A key is stored in `auth.json`; the provider should already work.
    KeyStored,
    /// No key anywhere: the user can paste one.
    NoKey,
    /// A local server answered, serving these models.
    LocalRunning {
        /// The models the server lists.
        models: Vec<String>,
    },
    /// A local server was looked for and did not answer.
    LocalNotRunning,
}

/// What the user asked for; the app does the work.
#[derive(Clone, PartialEq, Eq)]
pub enum SetupEvent {
    /// Nothing changed.
    None,
    /// The view changed and should be drawn again.
    Redraw,
    /// Store `key` for `provider` in `auth.json`.
    SaveKey {
        /// The provider's name.
        provider: String,
        /// The key, trimmed of whitespace.
        key: String,
    },
    /// Use `model` on the local server `provider`.
    UseLocal {
        /// The local server's provider name.
        provider: String,
        /// The model chosen.
        model: String,
    },
    /// Use a custom OpenAI-compatible server at `url`: with `model`, save it; without, ask
    /// the server for its models first (nothing is saved until one is chosen), then answer
    /// with [`SetupView::custom_models`].
    SaveBaseUrl {
        /// The base URL (`http://` or `https://`).
        url: String,
        /// Its API key, if one was given.
        api_key: Option<String>,
        /// The model id, typed or chosen from the server's list.
        model: Option<String>,
    },
    /// Look again for keys and servers, and try to start the agent.
    Retry,
}

impl fmt::Debug for SetupEvent {
    /// Like a derived `Debug`, with keys redacted so logs never hold them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |key: &str| format!("<{} chars>", key.chars().count());
        match self {
            SetupEvent::None => f.write_str("None"),
            SetupEvent::Redraw => f.write_str("Redraw"),
            SetupEvent::SaveKey { provider, key } => f
                .debug_struct("SaveKey")
                .field("provider", provider)
                .field("key", &redacted(key))
                .finish(),
            SetupEvent::UseLocal { provider, model } => f
                .debug_struct("UseLocal")
                .field("provider", provider)
                .field("model", model)
                .finish(),
            SetupEvent::SaveBaseUrl {
                url,
                api_key,
                model,
            } => f
                .debug_struct("SaveBaseUrl")
                .field("url", url)
                .field("api_key", &api_key.as_deref().map(redacted))
                .field("model", model)
                .finish(),
            SetupEvent::Retry => f.write_str("Retry"),
        }
    }
}

/// One row of the list: a provider (by index into the providers) or the custom server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Provider(usize),
    Custom,
}

/// Which field of the custom-server form has focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CustomFocus {
    Url,
    Key,
    Model,
}

impl CustomFocus {
    fn next(self, forward: bool) -> CustomFocus {
        use CustomFocus::*;
        match (self, forward) {
            (Url, true) | (Model, false) => Key,
            (Key, true) | (Url, false) => Model,
            (Model, true) | (Key, false) => Url,
        }
    }
}

/// The custom-server form.
#[derive(Clone)]
struct CustomForm {
    url: Field,
    key: Field,
    model: Field,
    focus: CustomFocus,
    error: Option<String>,
    /// The server is being asked for its models.
    checking: bool,
}

impl CustomForm {
    fn field(&mut self) -> &mut Field {
        match self.focus {
            CustomFocus::Url => &mut self.url,
            CustomFocus::Key => &mut self.key,
            CustomFocus::Model => &mut self.model,
        }
    }

    fn api_key(&self) -> Option<String> {
        let key = self.key.value();
        (!key.is_empty()).then_some(key)
    }
}

/// What the view shows below the reason.
#[derive(Clone)]
enum Mode {
    /// The list of providers.
    List,
    /// The models of a running local server, or of the custom server in `custom`.
    Models {
        provider: String,
        models: Vec<String>,
        selected: usize,
        custom: Option<Box<CustomForm>>,
    },
    /// The API key form for a provider.
    Key {
        provider: String,
        env_var: Option<String>,
        field: Field,
        error: Option<String>,
    },
    /// The custom server form.
    Custom(Box<CustomForm>),
}

/// The first-run setup view: what it lists, what is selected, and any open form.
pub struct SetupView {
    reason: String,
    providers: Vec<SetupProvider>,
    entries: Vec<Entry>,
    selected: usize,
    probing: bool,
    message: Option<(String, bool)>,
    mode: Mode,
    /// Where the cursor was drawn last frame, for the app to place the terminal cursor.
    cursor: Option<(u16, u16)>,
}

/// The list's order: ready providers, running servers, stopped servers, keyless providers.
fn rank(status: &ProviderStatus) -> u8 {
    match status {
        ProviderStatus::KeyInEnv(_) | ProviderStatus::KeyStored => 0,
        ProviderStatus::LocalRunning { .. } => 1,
        ProviderStatus::LocalNotRunning => 2,
        ProviderStatus::NoKey => 3,
    }
}

/// Whether a base URL looks usable: `http://` or `https://` and a host after it.
fn validate_url(url: &str) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    let rest = ["http://", "https://"]
        .iter()
        .find_map(|scheme| lower.strip_prefix(scheme));
    match rest {
        None if url.is_empty() => Err("enter the server's base URL".to_string()),
        None => Err("the base URL must start with http:// or https://".to_string()),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            Err("the base URL needs a host, e.g. http://127.0.0.1:8000/v1".to_string())
        }
        Some(rest) if rest.contains(char::is_whitespace) => {
            Err("the base URL cannot contain spaces".to_string())
        }
        Some(_) => Ok(()),
    }
}

/// The message shown when a paste or keystroke did not fit.
fn full_message() -> String {
    format!("input is limited to {MAX_INPUT} characters")
}

impl SetupView {
    /// A view explaining `reason` (why setup is shown, e.g. the runner's error) and listing
    /// `providers`.
    pub fn new(reason: impl Into<String>, providers: Vec<SetupProvider>) -> Self {
        let mut view = SetupView {
            reason: reason.into(),
            providers: Vec::new(),
            entries: Vec::new(),
            selected: 0,
            probing: false,
            message: None,
            mode: Mode::List,
            cursor: None,
        };
        view.set_providers(providers);
        view
    }

    /// Replaces the providers (discovery results arrive later), keeping the selection on the
    /// same entry when it is still listed.
    pub fn set_providers(&mut self, providers: Vec<SetupProvider>) {
        let previous = self.selected_key();
        self.providers = providers;
        let mut order: Vec<usize> = (0..self.providers.len()).collect();
        order.sort_by_key(|&i| rank(&self.providers[i].status));
        self.entries = order.into_iter().map(Entry::Provider).collect();
        self.entries.push(Entry::Custom);
        self.selected = previous
            .and_then(|key| {
                self.entries
                    .iter()
                    .position(|&e| self.entry_key(e).as_ref() == Some(&key))
            })
            .filter(|&i| self.selectable(i))
            .or_else(|| (0..self.entries.len()).find(|&i| self.selectable(i)))
            .unwrap_or(0);
    }

    /// Shows "looking for local servers…" while `probing` is true.
    pub fn set_probing(&mut self, probing: bool) {
        self.probing = probing;
    }

    /// Shows the result of the last save or retry; `is_error` draws it as an error.
    pub fn set_message(&mut self, message: impl Into<String>, is_error: bool) {
        let message = message.into();
        self.message = (!message.is_empty()).then_some((message, is_error));
    }

    /// Handles a key and says what the app should do.
    pub fn handle_key(&mut self, key: KeyEvent) -> SetupEvent {
        if key.kind == KeyEventKind::Release {
            return SetupEvent::None;
        }
        match &mut self.mode {
            Mode::List => self.list_key(key),
            Mode::Models { .. } => self.models_key(key),
            Mode::Key { .. } => self.key_form_key(key),
            Mode::Custom(_) => self.custom_key(key),
        }
    }

    /// The custom server answered (or failed to answer) what models it serves: one is used,
    /// several are offered to choose from; with none, or an error, the form asks for the id.
    pub fn custom_models(&mut self, result: Result<Vec<String>, String>) -> SetupEvent {
        let Mode::Custom(form) = &mut self.mode else {
            return SetupEvent::None;
        };
        form.checking = false;
        let problem = match result {
            Ok(models) if models.len() == 1 => {
                let event = SetupEvent::SaveBaseUrl {
                    url: form.url.value(),
                    api_key: form.api_key(),
                    model: models.into_iter().next(),
                };
                self.mode = Mode::List;
                return event;
            }
            Ok(models) if !models.is_empty() => {
                let Mode::Custom(form) = std::mem::replace(&mut self.mode, Mode::List) else {
                    return SetupEvent::None;
                };
                self.mode = Mode::Models {
                    provider: form.url.value(),
                    models,
                    selected: 0,
                    custom: Some(form),
                };
                return SetupEvent::Redraw;
            }
            Ok(_) => "the server lists no models".to_string(),
            Err(e) => format!("the server did not list its models ({e})"),
        };
        form.error = Some(format!("{problem}: type the model id, then enter"));
        form.focus = CustomFocus::Model;
        SetupEvent::Redraw
    }

    /// Pastes `text` into the focused input field, if a form is open (one-line fields drop
    /// the line ends, CR as well as LF: a key copied with its line end is still the key).
    pub fn paste(&mut self, text: &str) -> SetupEvent {
        let text = crate::paste::paste_lines(text);
        let text = text.as_ref();
        let (field, error) = match &mut self.mode {
            Mode::Key { field, error, .. } => (field, error),
            Mode::Custom(form) if !form.checking => {
                let edit = form.field().insert(text);
                return edited(edit, &mut form.error);
            }
            Mode::Custom(_) | Mode::List | Mode::Models { .. } => return SetupEvent::None,
        };
        edited(field.insert(text), error)
    }

    /// Where the terminal cursor belongs (in an open form's focused field), as of the last
    /// [`render`](SetupView::render) with focus.
    pub fn cursor_position(&self) -> Option<(u16, u16)> {
        self.cursor
    }

    /// A stable identity for an entry, to keep the selection across `set_providers`.
    fn entry_key(&self, entry: Entry) -> Option<String> {
        match entry {
            Entry::Provider(i) => self.providers.get(i).map(|p| format!("p:{}", p.name)),
            Entry::Custom => Some("custom".to_string()),
        }
    }

    fn selected_key(&self) -> Option<String> {
        self.entries
            .get(self.selected)
            .and_then(|&e| self.entry_key(e))
    }

    /// Whether the entry at `i` can be selected (stopped servers cannot).
    fn selectable(&self, i: usize) -> bool {
        match self.entries.get(i) {
            Some(Entry::Provider(p)) => self
                .providers
                .get(*p)
                .is_some_and(|p| p.status != ProviderStatus::LocalNotRunning),
            Some(Entry::Custom) => true,
            None => false,
        }
    }

    /// Moves the selection by one step over selectable entries, wrapping around.
    fn move_selection(&mut self, down: bool) -> SetupEvent {
        let n = self.entries.len();
        let mut i = self.selected;
        for _ in 0..n {
            i = if down { (i + 1) % n } else { (i + n - 1) % n };
            if self.selectable(i) {
                let moved = i != self.selected;
                self.selected = i;
                return if moved {
                    SetupEvent::Redraw
                } else {
                    SetupEvent::None
                };
            }
        }
        SetupEvent::None
    }

    fn list_key(&mut self, key: KeyEvent) -> SetupEvent {
        match key.code {
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => self.move_selection(false),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => self.move_selection(true),
            KeyCode::Char('r') => SetupEvent::Retry,
            KeyCode::Enter => self.select(),
            _ => SetupEvent::None,
        }
    }

    /// Enter on the list's selected entry.
    fn select(&mut self) -> SetupEvent {
        let provider = match self.entries.get(self.selected) {
            Some(Entry::Custom) => {
                self.mode = Mode::Custom(Box::new(CustomForm {
                    url: Field::new(false),
                    key: Field::new(true),
                    model: Field::new(false),
                    focus: CustomFocus::Url,
                    error: None,
                    checking: false,
                }));
                return SetupEvent::Redraw;
            }
            Some(Entry::Provider(i)) => match self.providers.get(*i) {
                Some(p) => p.clone(),
                None => return SetupEvent::None,
            },
            None => return SetupEvent::None,
        };
        match provider.status {
            ProviderStatus::KeyInEnv(_) | ProviderStatus::KeyStored => SetupEvent::Retry,
            ProviderStatus::LocalNotRunning => SetupEvent::None,
            ProviderStatus::NoKey => {
                self.mode = Mode::Key {
                    provider: provider.name,
                    env_var: provider.env_var,
                    field: Field::new(true),
                    error: None,
                };
                SetupEvent::Redraw
            }
            ProviderStatus::LocalRunning { models } => match models.as_slice() {
                [model] => SetupEvent::UseLocal {
                    provider: provider.name,
                    model: model.clone(),
                },
                [] => {
                    self.set_message(
                        format!(
                            "{} is running but lists no models; load one, then press r",
                            provider.name
                        ),
                        true,
                    );
                    SetupEvent::Redraw
                }
                _ => {
                    self.mode = Mode::Models {
                        provider: provider.name,
                        models,
                        selected: 0,
                        custom: None,
                    };
                    SetupEvent::Redraw
                }
            },
        }
    }

    fn models_key(&mut self, key: KeyEvent) -> SetupEvent {
        let Mode::Models {
            provider,
            models,
            selected,
            custom,
        } = &mut self.mode
        else {
            return SetupEvent::None;
        };
        let n = models.len().max(1);
        match key.code {
            KeyCode::Esc => {
                // Back to the form the list came from (the custom server's), else the list.
                self.mode = match custom.take() {
                    Some(form) => Mode::Custom(form),
                    None => Mode::List,
                };
                SetupEvent::Redraw
            }
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => {
                *selected = (*selected + n - 1) % n;
                SetupEvent::Redraw
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => {
                *selected = (*selected + 1) % n;
                SetupEvent::Redraw
            }
            KeyCode::Enter => match models.get(*selected) {
                Some(model) => {
                    let event = match custom {
                        Some(form) => SetupEvent::SaveBaseUrl {
                            url: form.url.value(),
                            api_key: form.api_key(),
                            model: Some(model.clone()),
                        },
                        None => SetupEvent::UseLocal {
                            provider: provider.clone(),
                            model: model.clone(),
                        },
                    };
                    self.mode = Mode::List;
                    event
                }
                None => SetupEvent::None,
            },
            _ => SetupEvent::None,
        }
    }

    fn key_form_key(&mut self, key: KeyEvent) -> SetupEvent {
        let Mode::Key {
            provider,
            field,
            error,
            ..
        } = &mut self.mode
        else {
            return SetupEvent::None;
        };
        match key.code {
            KeyCode::Esc => {
                self.mode = Mode::List;
                SetupEvent::Redraw
            }
            KeyCode::Enter => {
                let value = field.value();
                if value.is_empty() {
                    *error = Some("paste or type the key first".to_string());
                    return SetupEvent::Redraw;
                }
                let event = SetupEvent::SaveKey {
                    provider: provider.clone(),
                    key: value,
                };
                field.clear();
                self.mode = Mode::List;
                event
            }
            _ => edited(field.key(key), error),
        }
    }

    fn custom_key(&mut self, key: KeyEvent) -> SetupEvent {
        let Mode::Custom(form) = &mut self.mode else {
            return SetupEvent::None;
        };
        if key.code == KeyCode::Esc {
            // Also while the server is asked: its answer then finds no form and is dropped.
            self.mode = Mode::List;
            return SetupEvent::Redraw;
        }
        if form.checking {
            return SetupEvent::None;
        }
        match key.code {
            KeyCode::Tab | KeyCode::Down => {
                form.focus = form.focus.next(true);
                SetupEvent::Redraw
            }
            KeyCode::BackTab | KeyCode::Up => {
                form.focus = form.focus.next(false);
                SetupEvent::Redraw
            }
            KeyCode::Enter => {
                let url = form.url.value();
                if let Err(message) = validate_url(&url) {
                    form.error = Some(message);
                    form.focus = CustomFocus::Url;
                    return SetupEvent::Redraw;
                }
                form.error = None;
                if form.focus == CustomFocus::Url {
                    form.focus = CustomFocus::Key;
                    return SetupEvent::Redraw;
                }
                let api_key = form.api_key();
                let model = form.model.value().trim().to_string();
                if model.is_empty() {
                    // The server is asked; the form stays until it has answered.
                    form.checking = true;
                    return SetupEvent::SaveBaseUrl {
                        url,
                        api_key,
                        model: None,
                    };
                }
                self.mode = Mode::List;
                SetupEvent::SaveBaseUrl {
                    url,
                    api_key,
                    model: Some(model),
                }
            }
            _ => {
                let edit = form.field().key(key);
                edited(edit, &mut form.error)
            }
        }
    }
}

/// The event for an edit in a form; a successful edit clears the form's error.
fn edited(edit: Edit, error: &mut Option<String>) -> SetupEvent {
    match edit {
        Edit::Ignored => SetupEvent::None,
        Edit::Changed => {
            *error = None;
            SetupEvent::Redraw
        }
        Edit::Full => {
            *error = Some(full_message());
            SetupEvent::Redraw
        }
    }
}
