//! The one HTTP client setup shared by providers and model discovery.

use std::time::Duration;

/// Build a reqwest client with rustls (ring) and March's user agent.
///
/// `connect_timeout` bounds connection setup only; streams may run as long as the model talks.
pub fn client(connect_timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    // rustls needs a process-wide crypto provider; installing twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("march/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(connect_timeout)
        .build()
}
