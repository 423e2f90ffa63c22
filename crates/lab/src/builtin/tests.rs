//! Unit tests of the built-in lab. The ones that build labs need root; they
//! use unique prefixes (`lu<pid>x<n>`) and delete the namespaces in a Drop
//! guard, also when they fail.

use std::sync::atomic::{AtomicU32, Ordering};

use super::build::Stage;
use super::*;

/// A unique prefix whose namespaces are deleted on drop.
struct Prefix(String);

impl Prefix {
    fn new() -> Prefix {
        static N: AtomicU32 = AtomicU32::new(0);
        sweep_stale();
        Prefix(format!(
            "lu{}x{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ))
    }

    fn spec(&self, queues: u16) -> LabSpec {
        LabSpec {
            prefix: self.0.clone(),
            queues,
            cpus: None,
        }
    }

    fn existing(&self) -> Vec<String> {
        let p = format!("{}-", self.0);
        netns::list()
            .unwrap()
            .into_iter()
            .filter(|n| n.starts_with(&p))
            .collect()
    }
}

/// Deletes `lu<pid>x<n>-*` namespaces left by a killed test run.
fn sweep_stale() {
    for name in netns::list().unwrap_or_default() {
        let pid = name
            .strip_prefix("lu")
            .and_then(|rest| rest.split('x').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = netns::delete(&name);
            }
        }
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        for n in self.existing() {
            let _ = netns::delete(&n);
        }
    }
}

#[test]
fn new_validates_without_side_effects() {
    let lab = BuiltinLab::new(LabSpec::default()).unwrap();
    assert_eq!(lab.prefix(), "pktlab");
    assert_eq!(lab.spec().queues, 1);
    assert_eq!(
        (lab.gen_ns(), lab.dut_ns(), lab.rcv_ns()),
        ("pktlab-gen", "pktlab-dut", "pktlab-rcv")
    );
    assert_eq!(
        (
            lab.gen_if(),
            lab.dut_in_if(),
            lab.dut_out_if(),
            lab.rcv_if()
        ),
        ("g0", "d0", "d1", "r0")
    );
    assert_eq!(lab.gen_mac(), [0x02, 0x94, 0xe4, 0xae, 0x2f, 0x01]);
    assert_eq!(lab.dut_in_mac(), [0x02, 0x94, 0xe4, 0xae, 0x2f, 0x02]);
    assert_eq!(lab.dut_out_mac(), [0x02, 0x94, 0xe4, 0xae, 0x2f, 0x03]);
    assert_eq!(lab.rcv_mac(), [0x02, 0x94, 0xe4, 0xae, 0x2f, 0x04]);
    assert_eq!(lab.ifaces().len(), 4);
    assert_eq!(lab.iface(IfRole::DutOut).ns, "pktlab-dut");

    let p = Prefix::new();
    let ok = BuiltinLab::new(p.spec(MAX_QUEUES)).unwrap();
    assert_ne!(ok.gen_mac(), lab.gen_mac());
    assert!(p.existing().is_empty(), "new() must not create anything");
    BuiltinLab::new(LabSpec {
        prefix: "x".repeat(MAX_PREFIX_LEN),
        queues: 1,
        cpus: None,
    })
    .unwrap();

    for bad in [
        "",
        "a b",
        "-x",
        "a/b",
        "a.b",
        "ä",
        &"x".repeat(MAX_PREFIX_LEN + 1),
    ] {
        let e = BuiltinLab::new(LabSpec {
            prefix: bad.to_string(),
            queues: 1,
            cpus: None,
        })
        .unwrap_err();
        assert!(e.is_usage(), "{bad:?}: {e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("invalid lab prefix '{bad}'")),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
    }
    for q in [0, MAX_QUEUES + 1, u16::MAX] {
        let e = BuiltinLab::new(p.spec(q)).unwrap_err();
        assert!(matches!(e, LabError::BadQueues(n) if n == q));
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            format!("invalid queue count {q}: use 1 to 64")
        );
    }
}

#[test]
fn summarize_keeps_one_line() {
    let p: Vec<String> = (1..=5).map(|i| format!("p{i}")).collect();
    assert_eq!(summarize(&p[..2]), "p1; p2");
    assert_eq!(summarize(&p), "p1; p2; p3; and 2 more");
}

#[test]
fn up_status_counters_down() {
    let p = Prefix::new();
    let lab = BuiltinLab::new(p.spec(1)).unwrap();
    let st = lab.status().unwrap();
    assert_eq!(st.state, LabState::Down);
    assert!(st.problems.is_empty());
    assert!(!lab.is_up());
    assert_eq!(lab.problems().unwrap().len(), 3, "every namespace missing");
    assert!(matches!(lab.counters(), Err(LabError::NotUp { .. })));

    assert_eq!(lab.up().unwrap(), UpOutcome::Created);
    assert!(lab.is_up());
    assert_eq!(lab.problems().unwrap(), Vec::<String>::new());
    let st = lab.status().unwrap();
    assert_eq!(st.state, LabState::Up, "{:?}", st.problems);
    assert_eq!(st.queues, Some(1));
    let c = lab.counters().unwrap();
    let names: Vec<(&str, &str, IfRole)> = c
        .iter()
        .map(|c| (c.ns.as_str(), c.iface.as_str(), c.role))
        .collect();
    let (g, d, r) = (lab.gen_ns(), lab.dut_ns(), lab.rcv_ns());
    assert_eq!(
        names,
        [
            (g, "g0", IfRole::Gen),
            (d, "d0", IfRole::DutIn),
            (d, "d1", IfRole::DutOut),
            (r, "r0", IfRole::Rcv)
        ]
    );
    // The same counters, one interface at a time: nothing is sent in between
    // once the lab has settled, so compare only what cannot move backwards.
    let r0 = lab.iface_counters(IfRole::Rcv).unwrap();
    assert!(r0.rx_packets >= c[3].counters.rx_packets);

    assert_eq!(lab.up().unwrap(), UpOutcome::AlreadyUp);
    lab.down().unwrap();
    assert!(p.existing().is_empty());
    assert!(!lab.is_up());
    lab.down().unwrap();
}

#[test]
fn failed_build_removes_what_it_created() {
    for stage in [
        Stage::Namespaces,
        Stage::Sysctls,
        Stage::Veths,
        Stage::Addresses,
        Stage::Neighbours,
        Stage::Routes,
    ] {
        let p = Prefix::new();
        let lab = BuiltinLab::new(p.spec(1)).unwrap();
        let err = build::create_with(&lab.plan, &|s| {
            if s == stage {
                Err(LabError::Incomplete(format!(
                    "injected failure before {s:?}"
                )))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("the lab is incomplete after building it: injected failure before {stage:?}")
        );
        assert_eq!(
            p.existing(),
            Vec::<String>::new(),
            "after failing at {stage:?}"
        );
    }
}

#[test]
fn failed_build_leaves_namespaces_it_did_not_create() {
    // Someone else's namespace with the receiver's name: creating the lab
    // fails on it, removes the two it made, and leaves that one alone.
    let p = Prefix::new();
    let lab = BuiltinLab::new(p.spec(1)).unwrap();
    let theirs = netns::Netns::create(lab.rcv_ns()).unwrap();
    let err = build::create(&lab.plan).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("network namespace {} already exists", lab.rcv_ns())
    );
    assert_eq!(p.existing(), vec![lab.rcv_ns().to_string()]);
    theirs.delete().unwrap();
}
