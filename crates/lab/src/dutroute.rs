//! Does the DUT route the test traffic? `ip route get ADDR`, run where the
//! DUT's commands run (here, in its namespace, or over ssh), for the first
//! and the last address of every destination range: each must have a
//! route, and it must leave by the DUT's port towards the receiver.

use std::net::IpAddr;

use crate::dut::{DutError, DutRunner};

/// Where the DUT sends one address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Routed {
    /// Out of `dev`, to `via` when there is a next hop.
    Out { dev: String, via: Option<String> },
    /// Why the address does not leave the DUT as test traffic must.
    Problem(String),
}

/// The route `ip route get` printed, when it is one that forwards:
/// (device, next hop). A route of another type (`blackhole`,
/// `unreachable`, `prohibit`, `local`, ...) is named as the error.
pub fn parse_route_get(text: &str) -> Result<(String, Option<String>), String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let after = |key: &str| {
        words
            .windows(2)
            .find(|w| w[0] == key)
            .map(|w| w[1].to_string())
    };
    if let Some(first) = words.first() {
        if first.parse::<IpAddr>().is_err() && *first != "broadcast" {
            let what = match *first {
                "local" => "it is an address of the DUT itself".to_string(),
                kind => format!("its route is of type {kind}"),
            };
            return Err(what);
        }
    }
    match after("dev") {
        Some(dev) => Ok((dev, after("via"))),
        None if text.trim().is_empty() => Err("`ip route get` printed nothing".into()),
        None => Err(format!(
            "`ip route get` named no interface: {}",
            text.trim()
        )),
    }
}

/// Where `addr` goes on the DUT, as a problem line or its way out. `want`:
/// the port towards the receiver, when it is known.
pub fn route_of(runner: &DutRunner, addr: IpAddr, want: Option<&str>) -> Routed {
    let place = runner.describe();
    let text = match runner.run(&format!("ip route get {addr}")) {
        Ok(t) => t,
        Err(DutError::Command { why, .. }) => {
            return Routed::Problem(format!("the DUT ({place}) has no route to {addr}: {why}"))
        }
        Err(e) => return Routed::Problem(format!("the DUT ({place}): {e}")),
    };
    decide(&text, addr, want, &place)
}

/// [`route_of`]'s decision on `ip route get`'s output.
fn decide(text: &str, addr: IpAddr, want: Option<&str>, place: &str) -> Routed {
    match parse_route_get(text) {
        Err(why) => Routed::Problem(format!("the DUT ({place}) does not forward {addr}: {why}")),
        Ok((dev, via)) => match want {
            Some(w) if w != dev => Routed::Problem(format!(
                "the DUT ({place}) sends {addr} out of {dev}, not {w} (its port towards the receiver)"
            )),
            _ => Routed::Out { dev, via },
        },
    }
}

/// The first and the last address of each range, each once, in order.
pub fn ends(ranges: &[(IpAddr, IpAddr)]) -> Vec<IpAddr> {
    let mut out: Vec<IpAddr> = Vec::new();
    for &(a, b) in ranges {
        for x in [a, b] {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn route_get_outputs() {
        // iproute2 6.1's `ip route get` lines.
        assert_eq!(
            parse_route_get(
                "198.19.10.1 via 198.19.0.208 dev d1 src 198.19.0.203 uid 0 \n    cache \n"
            ),
            Ok(("d1".into(), Some("198.19.0.208".into())))
        );
        assert_eq!(
            parse_route_get("2001:2:0:8000::1 from :: dev d1 proto kernel src 2001:2:0:8000::203 metric 256 pref medium\n"),
            Ok(("d1".into(), None))
        );
        assert_eq!(
            parse_route_get("local 198.19.0.203 dev lo table local src 198.19.0.203 uid 0 \n"),
            Err("it is an address of the DUT itself".into())
        );
        assert_eq!(
            parse_route_get("blackhole 198.19.10.1 uid 0 \n"),
            Err("its route is of type blackhole".into())
        );
    }

    #[test]
    fn decisions() {
        let out = "198.19.10.100 via 198.18.255.1 dev mgmt src 198.18.255.12 uid 0 \n    cache \n";
        assert_eq!(
            decide(out, ip("198.19.10.100"), Some("d1"), "on hostb"),
            Routed::Problem(
                "the DUT (on hostb) sends 198.19.10.100 out of mgmt, not d1 (its port towards the receiver)"
                    .into()
            )
        );
        // Without a known port towards the receiver, any way out will do.
        assert_eq!(
            decide(out, ip("198.19.10.100"), None, "on hostb"),
            Routed::Out {
                dev: "mgmt".into(),
                via: Some("198.18.255.1".into())
            }
        );
        assert_eq!(
            decide(
                "blackhole 198.19.10.1 uid 0\n",
                ip("198.19.10.1"),
                Some("d1"),
                "locally"
            ),
            Routed::Problem(
                "the DUT (locally) does not forward 198.19.10.1: its route is of type blackhole"
                    .into()
            )
        );
    }

    #[test]
    fn an_empty_answer_is_no_way_out() {
        assert_eq!(
            decide("", ip("198.19.10.1"), Some("d1"), "locally"),
            Routed::Problem(
                "the DUT (locally) does not forward 198.19.10.1: `ip route get` printed nothing"
                    .into()
            )
        );
    }

    #[test]
    fn ends_of_ranges() {
        let v = ends(&[
            (ip("198.19.10.1"), ip("198.19.10.100")),
            (ip("198.19.10.1"), ip("198.19.10.1")),
        ]);
        assert_eq!(v, [ip("198.19.10.1"), ip("198.19.10.100")]);
    }
}
