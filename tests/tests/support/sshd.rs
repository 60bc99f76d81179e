//! An OpenSSH server on 127.0.0.1 for the remote-project tests, and the client config that
//! reaches it as host `marchtest`: its host key and the user's key made here, only that key
//! let in, and its sessions given the test's MARCH_HOME (so the "remote" runner reads the
//! test's config and writes nowhere else).

#![allow(dead_code)] // Each test binary uses a different part.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The host name the client config gives the server.
pub const HOST: &str = "marchtest";

/// A running sshd, stopped when dropped.
pub struct Sshd {
    child: Child,
    /// The port it listens on.
    pub port: u16,
    /// The client config (`ssh -F` it) that reaches it as [`HOST`].
    pub client_config: PathBuf,
}

fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "march-test", "-f"])
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("ssh-keygen: {e}"));
    assert!(out.status.success(), "ssh-keygen: {out:?}");
}

fn user_name() -> String {
    let out = Command::new("id")
        .arg("-un")
        .output()
        .unwrap_or_else(|e| panic!("id: {e}"));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Sshd {
    /// Starts one in `dir` (its keys and configs go there) whose sessions have `march_home`
    /// as MARCH_HOME; waits until it takes connections.
    pub fn start(dir: &Path, march_home: &Path) -> Sshd {
        let sshd = march_testkit::test_tools::sshd();
        // Run as root, sshd wants its privilege separation directory (made at boot when
        // its service is installed, which a container never boots).
        let _ = std::fs::create_dir_all("/run/sshd");
        std::fs::create_dir_all(dir).unwrap();
        let (host_key, user_key) = (dir.join("host_key"), dir.join("user_key"));
        keygen(&host_key);
        keygen(&user_key);
        std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let runtime = march_home.join("run-remote");
        std::fs::create_dir_all(&runtime).unwrap();
        let config = dir.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {pid}\n\
                 AuthorizedKeysFile {keys}\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nUsePAM no\n\
                 StrictModes no\nPermitRootLogin prohibit-password\nLogLevel INFO\nMaxStartups 64\n\
                 SetEnv MARCH_HOME={home} XDG_RUNTIME_DIR={runtime}\n",
                host = host_key.display(),
                pid = dir.join("sshd.pid").display(),
                keys = dir.join("authorized_keys").display(),
                home = march_home.display(),
                runtime = runtime.display(),
            ),
        )
        .unwrap();
        let host_pub = std::fs::read_to_string(dir.join("host_key.pub")).unwrap();
        std::fs::write(
            dir.join("known_hosts"),
            format!("[127.0.0.1]:{port} {}", host_pub.trim()),
        )
        .unwrap();
        let client_config = dir.join("ssh_config");
        std::fs::write(
            &client_config,
            format!(
                "Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                 IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known}\n  \
                 StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n",
                user = user_name(),
                key = user_key.display(),
                known = dir.join("known_hosts").display(),
            ),
        )
        .unwrap();
        let mut child = Command::new(&sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", sshd.display()));
        // Ready when it says it listens; its log is then passed on to the test's stderr.
        let stderr = child.stderr.take().unwrap();
        let (ready, listening) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            let mut ready = Some(ready);
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if line.contains("Server listening") {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(());
                    }
                } else {
                    eprintln!("sshd: {line}");
                }
            }
        });
        listening
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("sshd never listened on {port}: {e}"));
        Sshd {
            child,
            port,
            client_config,
        }
    }

    /// `ssh -F CONFIG marchtest COMMAND`'s output, which must succeed.
    pub fn run(&self, command: &str) -> String {
        let out = Command::new("ssh")
            .arg("-F")
            .arg(&self.client_config)
            .arg(HOST)
            .arg(command)
            .output()
            .unwrap();
        assert!(out.status.success(), "ssh {command}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The config lines that make March reach the server with this client config and run
    /// `march` (a path) there.
    pub fn march_config(&self, march: &Path) -> String {
        format!(
            "[ssh]\nargs = [\"-F\", \"{}\"]\nmarch = \"{}\"\n",
            self.client_config.display(),
            march.display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
