//! Which addresses the web tools may reach: public ones, unless the user allows the rest.
//!
//! A fetch must not become a way into the user's own machine or network (a model told by a
//! page to read `http://169.254.169.254/` or a router's admin page). Names are checked where
//! they are resolved, so every connection, redirects included, goes only to the addresses
//! checked (no second lookup a rebinding name could answer differently); addresses written in
//! the URL are checked before the request.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether `ip` is on the public internet: not loopback, private, link-local, shared
/// (carrier-grade NAT), unique-local, multicast, documentation, benchmarking or unspecified.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_unspecified()
        || ip.is_multicast()
        || a == 0
        // Shared address space (RFC 6598).
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, benchmarking, reserved.
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Unique local fc00::/7, link-local fe80::/10, site-local fec0::/10.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        // Documentation 2001:db8::/32.
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        // IPv4-compatible and NAT64 forms carry a v4 address the checks above do not see.
        || ip.to_ipv4().is_some_and(|v4| !is_public_v4(v4)))
}

/// Why an address may not be reached.
pub fn refusal(host: &str) -> String {
    format!(
        "{host} is a private, loopback or otherwise non-public address: web tools do not reach \
         it unless `[web] allow_private = true` is set in March's config"
    )
}

/// Resolves names as the system does, keeping only the addresses the guard allows.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    /// Every address allowed (`[web] allow_private`).
    pub allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port in.
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| allow_private || is_public(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(refusal(&host).into());
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_addresses_pass_and_the_rest_does_not() {
        for public in ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "8.8.8.8"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "2001:db8::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
    }

    #[tokio::test]
    async fn the_resolver_refuses_names_of_private_addresses_unless_allowed() {
        let name: Name = "localhost".parse().unwrap();
        let refused = GuardedResolver {
            allow_private: false,
        }
        .resolve(name)
        .await;
        let Err(e) = refused else {
            panic!("localhost resolved");
        };
        assert!(e.to_string().contains("allow_private"), "{e}");
        let name: Name = "localhost".parse().unwrap();
        let allowed = GuardedResolver {
            allow_private: true,
        }
        .resolve(name)
        .await
        .unwrap();
        assert!(allowed.into_iter().all(|a| a.ip().is_loopback()));
    }
}
