//! The part of a DUT's state that the knobs change and shell tools do not
//! show (iproute2 before 6.6 knows nothing of tcx, and no tool reads the
//! host's sysctls from inside a namespace): the programs attached to each
//! port, by name, and the host-wide sysctls. The built-in lab's state probe
//! prints it (`pktlab knob state d0 d1`), before a configuration and after
//! its revert.

use pktlab_io::fastpath::{self, Attachments};

use crate::LabError;

fn names(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(" ")
    }
}

/// One port's attachments as lines.
pub fn attachment_lines(iface: &str, a: &Attachments) -> Vec<String> {
    let xdp = match &a.xdp {
        Some((name, true)) => format!("{name} (native)"),
        Some((name, false)) => format!("{name} (generic)"),
        None => "none".into(),
    };
    let clsact = if a.clsact {
        format!(
            "ingress {}, egress {}",
            names(&a.clsact_ingress),
            names(&a.clsact_egress)
        )
    } else {
        "none".into()
    };
    vec![
        format!("{iface} xdp: {xdp}"),
        format!("{iface} tcx ingress: {}", names(&a.tcx_ingress)),
        format!("{iface} tcx egress: {}", names(&a.tcx_egress)),
        format!("{iface} clsact: {clsact}"),
    ]
}

/// The state text of ports `ifaces` (of the calling thread's namespace)
/// and of the host's sysctls.
pub fn state_text(ifaces: &[&str]) -> Result<String, LabError> {
    let mut lines = Vec::new();
    for &iface in ifaces {
        let a = fastpath::attachments(iface).map_err(|err| LabError::Io {
            ns: "the DUT's".into(),
            err,
        })?;
        lines.extend(attachment_lines(iface, &a));
    }
    for (key, value) in super::host::read_host_sysctls()? {
        lines.push(format!(
            "host {key} = {}",
            value.as_deref().unwrap_or("(none)")
        ));
    }
    Ok(lines.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments_read_as_lines() {
        let none = Attachments::default();
        assert_eq!(
            attachment_lines("d0", &none),
            [
                "d0 xdp: none",
                "d0 tcx ingress: none",
                "d0 tcx egress: none",
                "d0 clsact: none"
            ]
        );
        let some = Attachments {
            xdp: Some(("xdp_steer".into(), true)),
            tcx_ingress: vec!["tc_fwd".into()],
            clsact: true,
            clsact_ingress: vec!["tc_fwd".into()],
            ..Attachments::default()
        };
        let lines = attachment_lines("d1", &some);
        assert_eq!(lines[0], "d1 xdp: xdp_steer (native)");
        assert_eq!(lines[1], "d1 tcx ingress: tc_fwd");
        assert_eq!(lines[3], "d1 clsact: ingress tc_fwd, egress none");
    }
}
