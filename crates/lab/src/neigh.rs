//! The MAC address of the next hop towards a destination, from the
//! kernel's route and neighbour tables (`ip -j route get`, `ip -j neigh`),
//! so that `pktlab gen` needs no `-D` where the host already knows it.

use std::net::IpAddr;

use crate::runner;
use crate::LabError;

/// The next hop's MAC address for `dst` out of `iface` in the calling
/// process's network namespace. Errors say what is missing and that `-D`
/// gives the MAC by hand.
pub fn next_hop_mac(iface: &str, dst: IpAddr) -> Result<[u8; 6], LabError> {
    let dst_s = dst.to_string();
    let route = runner::ip(&["-j", "route", "get", &dst_s, "oif", iface]).map_err(|e| {
        LabError::Output {
            command: format!("ip route get {dst_s} oif {iface}"),
            why: format!(
                "no route to {dst_s} through {iface} ({e}); give the destination MAC with -D"
            ),
        }
    })?;
    let hop = gateway_of(&route)
        .ok_or_else(|| LabError::Output {
            command: format!("ip -j route get {dst_s} oif {iface}"),
            why: "cannot read the route".into(),
        })?
        .unwrap_or(dst_s.clone());
    let neigh = runner::ip(&["-j", "neigh", "show", "to", &hop, "dev", iface])?;
    mac_of(&neigh).ok_or_else(|| LabError::Output {
        command: format!("ip neigh show to {hop} dev {iface}"),
        why: format!(
            "the next hop {hop} towards {dst_s} has no known MAC address on {iface}: \
             give it with -D, or add a static neighbour entry"
        ),
    })
}

/// From `ip -j route get` output: Some(Some(gateway)), Some(None) for a
/// directly connected destination, None when the output is not a route.
fn gateway_of(json: &str) -> Option<Option<String>> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let route = v.as_array()?.first()?;
    route.get("dst")?;
    Some(
        route
            .get("gateway")
            .and_then(|g| g.as_str())
            .map(str::to_string),
    )
}

/// From `ip -j neigh show` output: the first usable link-layer address.
fn mac_of(json: &str) -> Option<[u8; 6]> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.as_array()?.iter().find_map(|n| {
        let states = n.get("state").and_then(|s| s.as_array());
        let failed = states.is_some_and(|s| {
            s.iter()
                .any(|x| matches!(x.as_str(), Some("FAILED") | Some("INCOMPLETE")))
        });
        if failed {
            return None;
        }
        crate::mac::parse_mac(n.get("lladdr")?.as_str()?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ip_json() {
        let via = r#"[{"dst":"198.19.10.1","gateway":"198.18.0.203","dev":"g0","prefsrc":"198.18.0.201","flags":[],"uid":0,"cache":[]}]"#;
        assert_eq!(gateway_of(via), Some(Some("198.18.0.203".into())));
        let direct = r#"[{"dst":"198.18.0.203","dev":"g0","prefsrc":"198.18.0.201","flags":[],"uid":0,"cache":[]}]"#;
        assert_eq!(gateway_of(direct), Some(None));
        assert_eq!(gateway_of("[]"), None);
        let neigh = r#"[{"dst":"198.18.0.203","dev":"g0","lladdr":"02:70:6b:00:01:0a","state":["PERMANENT"]}]"#;
        assert_eq!(mac_of(neigh), Some([2, 0x70, 0x6b, 0, 1, 0x0a]));
        let failed = r#"[{"dst":"198.18.0.203","dev":"g0","state":["FAILED"]}]"#;
        assert_eq!(mac_of(failed), None);
        assert_eq!(mac_of("[]"), None);
    }

    #[test]
    fn loopback_destination_has_no_neighbour() {
        // 127.0.0.1 goes out of lo with no neighbour entry: a clear error.
        let e = next_hop_mac("lo", "127.0.0.1".parse().unwrap()).unwrap_err();
        assert!(e.to_string().contains("-D"), "{e}");
    }
}
