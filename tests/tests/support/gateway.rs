//! What the gateway tests share: `march gateway` as a child process, plain HTTP/1.1 to its
//! API, and a fake of Telegram's Bot API on 127.0.0.1 that hands out the updates a test
//! queues and records what the bot says.

#![allow(dead_code)] // Each test binary uses a different part.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde_json::{Value, json};

/// How long any wait on the gateway or the fake may take before the test fails.
pub const LIMIT: Duration = Duration::from_secs(60);

/// A running `march gateway`.
pub struct Gateway {
    child: Child,
    /// Where its HTTP API listens.
    pub addr: String,
}

impl Gateway {
    /// Starts `command` (a `march gateway`) and waits for the line that says where it
    /// listens.
    pub fn start(mut command: Command) -> Gateway {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start march gateway: {e}"));
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("read the gateway's first line: {e}"));
        let addr = line
            .trim()
            .rsplit_once("http://")
            .map(|(_, a)| a.to_string())
            .unwrap_or_else(|| panic!("the gateway said {line:?}"));
        Gateway { child, addr }
    }

    /// Stops it as a user would (SIGTERM) and waits for it to end.
    pub fn stop(mut self) {
        self.terminate();
    }

    fn terminate(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let _ = self.child.wait();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// One request to the gateway at `addr`; its status and body.
pub fn http(
    addr: &str,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, String) {
    let mut stream = send(addr, method, path, token, body);
    let mut out = String::new();
    stream
        .read_to_string(&mut out)
        .unwrap_or_else(|e| panic!("read the answer to {method} {path}: {e}"));
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {out:?}"));
    let body = out
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn send(addr: &str, method: &str, path: &str, token: &str, body: Option<Value>) -> TcpStream {
    let mut stream =
        TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to the gateway: {e}"));
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// A streamed answer, read as it comes.
pub struct Stream {
    stream: TcpStream,
    /// Everything read so far.
    pub read: String,
}

impl Stream {
    /// Posts `body` to `/v1/prompt` and reads the stream it answers with.
    pub fn prompt(addr: &str, token: &str, body: Value) -> Stream {
        Stream {
            stream: send(addr, "POST", "/v1/prompt", token, Some(body)),
            read: String::new(),
        }
    }

    /// Reads until `needle` has come; everything read.
    pub fn until(&mut self, needle: &str) -> &str {
        let mut buf = [0u8; 4096];
        while !self.read.contains(needle) {
            let n = self
                .stream
                .read(&mut buf)
                .unwrap_or_else(|e| panic!("waiting for {needle:?}: {e}; read: {}", self.read));
            assert!(n > 0, "the stream ended before {needle:?}: {}", self.read);
            self.read.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        &self.read
    }
}

/// The fake Bot API's state.
#[derive(Default)]
struct Bot {
    /// Updates not yet handed out.
    updates: VecDeque<Value>,
    /// The highest `offset` a poll asked with (updates before it are confirmed).
    offset: i64,
    /// What the bot was asked to do: (method, body).
    calls: Vec<(String, Value)>,
}

/// A fake of Telegram's Bot API for token `TOKEN`.
pub struct FakeTelegram {
    bot: Arc<(Mutex<Bot>, Condvar)>,
    /// Its base URL, for `[gateway.telegram] api`.
    pub url: String,
    next_id: Mutex<i64>,
}

impl FakeTelegram {
    /// Serves on a free port of 127.0.0.1 (a thread per connection) for the test's life.
    pub fn start() -> FakeTelegram {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let bot: Arc<(Mutex<Bot>, Condvar)> = Arc::default();
        let serving = bot.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let bot = serving.clone();
                std::thread::spawn(move || serve(stream, &bot));
            }
        });
        FakeTelegram {
            bot,
            url,
            next_id: Mutex::new(100),
        }
    }

    fn push(&self, update: Value) {
        let (bot, changed) = &*self.bot;
        bot.lock().updates.push_back(update);
        changed.notify_all();
    }

    fn next_id(&self) -> i64 {
        let mut id = self.next_id.lock();
        *id += 1;
        *id
    }

    /// User `from` (`@username`) says `text` in chat `chat`.
    pub fn say(&self, chat: i64, from: i64, username: &str, text: &str) {
        let id = self.next_id();
        self.push(
            json!({"update_id": id, "message": {"message_id": id, "chat": {"id": chat},
            "from": {"id": from, "username": username}, "text": text}}),
        );
    }

    /// User `from` (`@username`) presses the button whose data is `data` under a message
    /// in `chat`.
    pub fn press(&self, chat: i64, from: i64, username: &str, data: &str) {
        let id = self.next_id();
        self.push(
            json!({"update_id": id, "callback_query": {"id": format!("cb{id}"),
            "from": {"id": from, "username": username},
            "message": {"message_id": 1, "chat": {"id": chat}},
            "data": data}}),
        );
    }

    /// Waits for a call to `method` that `matches`; its body.
    pub fn wait_call(&self, method: &str, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let (bot, changed) = &*self.bot;
        let deadline = Instant::now() + LIMIT;
        let mut bot = bot.lock();
        loop {
            if let Some((_, body)) = bot.calls.iter().find(|(m, b)| m == method && matches(b)) {
                return body.clone();
            }
            assert!(
                !changed.wait_until(&mut bot, deadline).timed_out(),
                "no {method} with {what}; calls: {:?}",
                bot.calls
            );
        }
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.bot.0.lock().calls.clone()
    }
}

/// Answers one connection's request.
fn serve(mut stream: TcpStream, bot: &(Mutex<Bot>, Condvar)) {
    let Some((path, body)) = read_request(&mut stream) else {
        return;
    };
    let method = path.rsplit('/').next().unwrap_or_default().to_string();
    let result = if !path.starts_with("/botTOKEN/") {
        json!({"ok": false, "description": "Unauthorized"})
    } else if method == "getUpdates" {
        let offset = body["offset"].as_i64().unwrap_or(0);
        let (bot, changed) = bot;
        let mut state = bot.lock();
        state.offset = state.offset.max(offset);
        state
            .updates
            .retain(|u| u["update_id"].as_i64().unwrap_or(0) >= offset);
        // A long poll: held until an update comes (or a while passes, then empty).
        if state.updates.is_empty() {
            changed.wait_for(&mut state, Duration::from_millis(500));
        }
        json!({"ok": true, "result": state.updates.iter().cloned().collect::<Vec<_>>()})
    } else {
        let (bot, changed) = bot;
        bot.lock().calls.push((method, body));
        changed.notify_all();
        json!({"ok": true, "result": {"message_id": 1}})
    };
    let text = result.to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{text}",
        text.len()
    );
}

fn read_request(stream: &mut TcpStream) -> Option<(String, Value)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some((path, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}
