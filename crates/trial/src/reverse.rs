//! The same lab sent through the other way: the generator on the
//! receiver's port, the receiver on the generator's port, frames addressed
//! to the DUT's port on the receiver's side. Traffic both ways runs a
//! trial's forward and reverse directions at once; stateful tests send
//! from the outside port alone.

use pktlab_lab::ports::InterfaceLab;
use pktlab_loss::both::mirror_role;
use pktlab_loss::monitor::Watched;
use pktlab_remote::worker::protocol::RolePort;

use crate::target::{LabKind, Target};
use crate::TrialError;

impl Target {
    /// The lab seen from the receiver's side. The built-in lab sends from
    /// r0 (its MAC) to d1's MAC and receives on g0; an interfaces lab
    /// needs `dut_out_mac` (the DUT's port facing the receiver), and takes
    /// the receiver port's MAC here or from its host's worker. The roles
    /// of the watched ports follow the frames (`gen` is the sending port,
    /// `dut_in` the DUT's port it sends to), so loss is placed along the
    /// reverse path. Several generators sharing the traffic cannot be
    /// reversed: the receiver's port has no matching set of receivers.
    pub fn reversed(&self) -> Result<Target, TrialError> {
        if self.generators.is_some() {
            return Err(TrialError::Usage(
                "traffic from the receiver's side cannot be sent with several generators: \
                 use one generator port"
                    .into(),
            ));
        }
        let (kind, src_mac, dst_mac) = match &self.kind {
            // The new generator is the old receiver: r0 sends to d1, and
            // g0 (a reversed target reversed again) to d0.
            LabKind::Builtin(lab) if self.rcv.iface == lab.rcv_if() => {
                (self.kind.clone(), lab.rcv_mac(), lab.dut_out_mac())
            }
            LabKind::Builtin(lab) => (self.kind.clone(), lab.gen_mac(), lab.dut_in_mac()),
            LabKind::Interfaces(lab) => {
                let Some(dut_out_mac) = lab.dut_out_mac else {
                    return Err(TrialError::Usage(
                        "traffic from the receiver's side needs the DUT's MAC on that side: \
                         set dut_out_mac in [lab]"
                            .into(),
                    ));
                };
                let src_mac = match &self.rcv_remote {
                    Some(r) => r.probe(&self.rcv.iface, self.rcv.netns.as_deref())?.mac,
                    None => self.rcv.mac()?,
                };
                (
                    LabKind::Interfaces(swapped_lab(lab, dut_out_mac)),
                    src_mac,
                    dut_out_mac,
                )
            }
        };
        // Listed along the reverse path, as the forward ones are.
        let watched: Vec<Watched> = self
            .watched
            .iter()
            .rev()
            .map(|w| Watched {
                role: mirror_role(&w.role),
                port: w.port.clone(),
            })
            .collect();
        let mut observers = self.observers.clone();
        for o in &mut observers {
            o.role = o
                .role
                .split('+')
                .map(mirror_role)
                .collect::<Vec<_>>()
                .join("+");
            o.ports = o
                .ports
                .iter()
                .map(|p| RolePort {
                    role: mirror_role(&p.role),
                    ..p.clone()
                })
                .collect();
        }
        Ok(Target {
            kind,
            gen: self.rcv.clone(),
            rcv: self.gen.clone(),
            src_mac,
            dst_mac,
            watched,
            irqs: self.irqs.clone(),
            dut: self.dut.clone(),
            cpus: self.cpus.clone(),
            gen_remote: self.rcv_remote.clone(),
            rcv_remote: self.gen_remote.clone(),
            generators: None,
            observers,
            observe_note: self.observe_note.clone(),
            remote_without_irqs: self.remote_without_irqs.clone(),
        })
    }
}

/// An interfaces lab with its ends swapped: the DUT's port facing the
/// receiver becomes the one frames are addressed to.
fn swapped_lab(lab: &InterfaceLab, dut_out_mac: [u8; 6]) -> InterfaceLab {
    let mut dut_ifaces = lab.dut_ifaces.clone();
    if dut_ifaces.len() >= 2 {
        dut_ifaces.swap(0, 1);
    }
    InterfaceLab {
        gen: lab.rcv.clone(),
        rcv: lab.gen.clone(),
        dut_in_mac: dut_out_mac,
        dut_out_mac: Some(lab.dut_in_mac),
        dut: lab.dut.clone(),
        dut_ifaces,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktlab_lab::dut::{Dut, DutRunner};
    use pktlab_lab::ports::Port;
    use pktlab_lab::{BuiltinLab, IfRole, LabSpec};

    /// The built-in lab's target as `Target::builtin` makes it, without
    /// bringing the lab up.
    fn builtin(prefix: &str) -> Target {
        let lab = BuiltinLab::new(LabSpec {
            prefix: prefix.into(),
            ..LabSpec::default()
        })
        .unwrap();
        let names = ["gen", "dut_in", "dut_out", "rcv"];
        let watched = IfRole::ALL
            .iter()
            .zip(names)
            .map(|(&r, name)| Watched {
                role: name.into(),
                port: Port::new(lab.iface(r).name, Some(&lab.iface(r).ns)),
            })
            .collect();
        Target {
            gen: Port::new("g0", Some(lab.gen_ns())),
            rcv: Port::new("r0", Some(lab.rcv_ns())),
            src_mac: lab.gen_mac(),
            dst_mac: lab.dut_in_mac(),
            watched,
            irqs: Vec::new(),
            dut: Dut::new(
                DutRunner::Netns {
                    netns: lab.dut_ns().into(),
                },
                None,
            ),
            cpus: None,
            kind: LabKind::Builtin(Box::new(lab)),
            gen_remote: None,
            rcv_remote: None,
            generators: None,
            observers: Vec::new(),
            observe_note: None,
            remote_without_irqs: Vec::new(),
        }
    }

    fn interfaces(dut_out_mac: Option<[u8; 6]>) -> Target {
        let gen = Port::new("eth1", None);
        let rcv = Port::new("lo", None);
        Target {
            kind: LabKind::Interfaces(InterfaceLab {
                gen: gen.clone(),
                rcv: rcv.clone(),
                dut_in_mac: [2, 0, 0, 0, 0, 0xd0],
                dut_out_mac,
                dut: DutRunner::Local,
                dut_ifaces: vec!["p0".into(), "p1".into(), "p2".into()],
            }),
            gen: gen.clone(),
            rcv: rcv.clone(),
            src_mac: [2, 0, 0, 0, 0, 0x10],
            dst_mac: [2, 0, 0, 0, 0, 0xd0],
            watched: vec![
                Watched {
                    role: "gen".into(),
                    port: gen,
                },
                Watched {
                    role: "rcv".into(),
                    port: rcv,
                },
            ],
            irqs: Vec::new(),
            dut: Dut::new(DutRunner::Local, None),
            cpus: None,
            gen_remote: None,
            rcv_remote: None,
            generators: None,
            observers: Vec::new(),
            observe_note: None,
            remote_without_irqs: Vec::new(),
        }
    }

    #[test]
    fn the_builtin_lab_reversed_sends_from_r0_to_d1() {
        let forward = builtin("rvt");
        let LabKind::Builtin(lab) = &forward.kind else {
            unreachable!()
        };
        let r0_mac = lab.iface(IfRole::Rcv).mac;
        let d1_mac = lab.iface(IfRole::DutOut).mac;
        let back = forward.reversed().unwrap();
        assert_eq!(back.gen, Port::new("r0", Some("rvt-rcv")));
        assert_eq!(back.rcv, Port::new("g0", Some("rvt-gen")));
        assert_eq!(back.src_mac, r0_mac);
        assert_eq!(back.dst_mac, d1_mac);
        assert_ne!(back.src_mac, forward.src_mac);
        assert_ne!(back.dst_mac, forward.dst_mac);
        let path: Vec<(&str, &str, Option<&str>)> = back
            .watched
            .iter()
            .map(|w| {
                (
                    w.role.as_str(),
                    w.port.iface.as_str(),
                    w.port.netns.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            path,
            [
                ("gen", "r0", Some("rvt-rcv")),
                ("dut_in", "d1", Some("rvt-dut")),
                ("dut_out", "d0", Some("rvt-dut")),
                ("rcv", "g0", Some("rvt-gen")),
            ]
        );
        let view = back.loss_view();
        assert_eq!(view.rcv, Port::new("g0", Some("rvt-gen")));
        // The DUT's configurations still name its own ports.
        assert_eq!(back.dut_ifaces(), ["d0", "d1"]);
        // Twice reversed is the forward lab.
        let again = back.reversed().unwrap();
        assert_eq!((again.gen, again.rcv), (forward.gen, forward.rcv));
        assert_eq!(
            (again.src_mac, again.dst_mac),
            (forward.src_mac, forward.dst_mac)
        );
    }

    #[test]
    fn an_interfaces_lab_needs_the_duts_mac_on_the_receivers_side() {
        let err = interfaces(None).reversed().unwrap_err();
        assert!(err.is_usage(), "{err}");
        assert!(err.to_string().contains("dut_out_mac"), "{err}");
        let back = interfaces(Some([2, 0, 0, 0, 0, 0xd1])).reversed().unwrap();
        assert_eq!(back.gen, Port::new("lo", None));
        assert_eq!(back.rcv, Port::new("eth1", None));
        // The loopback's MAC is all zeroes: read from the port, not kept.
        assert_eq!(back.src_mac, [0; 6]);
        assert_eq!(back.dst_mac, [2, 0, 0, 0, 0, 0xd1]);
        let LabKind::Interfaces(lab) = &back.kind else {
            unreachable!()
        };
        assert_eq!(lab.dut_in_mac, [2, 0, 0, 0, 0, 0xd1]);
        assert_eq!(lab.dut_out_mac, Some([2, 0, 0, 0, 0, 0xd0]));
        assert_eq!(lab.dut_ifaces, ["p1", "p0", "p2"]);
        let roles: Vec<(&str, &str)> = back
            .watched
            .iter()
            .map(|w| (w.role.as_str(), w.port.iface.as_str()))
            .collect();
        assert_eq!(roles, [("gen", "lo"), ("rcv", "eth1")]);
    }

    #[test]
    fn several_generators_are_refused() {
        let mut t = builtin("rvt");
        t.generators = Some(pktlab_remote::ssh::Generators { parts: Vec::new() });
        let err = t.reversed().unwrap_err();
        assert!(err.is_usage(), "{err}");
        assert!(err.to_string().contains("several generators"), "{err}");
    }
}
