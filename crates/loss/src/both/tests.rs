//! The split of a trial both ways on the built-in lab's ports, worked
//! out by hand from the module's rules.

use pktlab_io::droptrace::NamedDrop;
use pktlab_io::iface::IfCounters;
use pktlab_lab::ports::Port;

use super::*;
use crate::drops::LabNamespaces;

fn view(gen: &str, rcv: &str, rcv_port: &str) -> LabView {
    LabView {
        namespaces: LabNamespaces::local(gen, rcv, &["dut", "dut"]),
        rcv: Port::new(rcv_port, Some(rcv)),
        veth: true,
        cpus: None,
    }
}

fn ends(sent: u64, received: u64) -> (TxSummary, RxSummary) {
    let tx = serde_json::from_value(serde_json::json!({
        "backend": "t", "packets": sent, "bytes": 0, "seconds": 1.0, "pps": 0.0,
        "l2_bps": 0.0, "l1_bps": 0.0, "tx_errors": 0, "interrupted": false,
        "threads": [], "iface": null
    }))
    .unwrap();
    let rx = serde_json::from_value(serde_json::json!({
        "backend": "t", "packets": received, "bytes": 0, "seconds": 1.0, "pps": 0.0,
        "l2_bps": 0.0, "l1_bps": 0.0, "flows": 0, "streams": 0, "lost": 0,
        "out_of_order": 0, "duplicates": 0, "foreign": 0, "ring_drops": 0,
        "latency_ns": null, "interrupted": false, "threads": [], "iface": null
    }))
    .unwrap();
    (tx, rx)
}

/// A port with its (rx_dropped, tx_dropped).
fn port(role: &str, ns: &str, iface: &str, dropped: (u64, u64)) -> IfaceCounters {
    IfaceCounters {
        host: None,
        role: role.into(),
        ns: Some(ns.into()),
        iface: iface.into(),
        counters: IfCounters {
            rx_dropped: dropped.0,
            tx_dropped: dropped.1,
            rx_packets: 1000,
            tx_packets: 1000,
            ..IfCounters::default()
        },
    }
}

fn event(ns: &str, iface: &str, reason: &str, frames: u64) -> HostDrop {
    HostDrop {
        host: None,
        drop: NamedDrop {
            netns: ns.into(),
            iface: iface.into(),
            reason: reason.into(),
            location: "f".into(),
            frames,
        },
    }
}

fn places(d: &Drops) -> Vec<(Side, &str, &str, &str, u64)> {
    d.places
        .iter()
        .map(|p| {
            (
                p.side,
                p.iface.as_str(),
                p.layer.as_str(),
                p.reason.as_str(),
                p.frames,
            )
        })
        .collect()
}

#[test]
fn each_direction_keeps_the_drops_of_its_own_way_through_the_ports() {
    let (fwd, rev) = (view("gen", "rcv", "r0"), view("rcv", "gen", "g0"));
    // Forward: 1000 sent, 970 received: d0's backlog refused 30 coming in.
    // Reverse: 1000 sent, 500 received: the DUT's firewall dropped 400
    // coming in at d1, and g0's backlog refused 100 that d0 sent (d0
    // counts them in its tx_dropped too: one loss, at g0).
    let (ftx, frx) = ends(1000, 970);
    let (rtx, rrx) = ends(1000, 500);
    let ifaces = [
        port("gen", "gen", "g0", (100, 0)),
        port("dut_in", "dut", "d0", (30, 100)),
        port("dut_out", "dut", "d1", (0, 0)),
        port("rcv", "rcv", "r0", (0, 0)),
    ];
    let kernel = [
        event("dut", "d1", "NETFILTER_DROP", 400),
        // The reverse receiver's stack frees every frame it counted: no
        // loss of either direction.
        event("gen", "g0", "NOT_SPECIFIED", 500),
        // At no lab port of the DUT: either direction's.
        event("dut", "lo", "NO_SOCKET", 5),
    ];
    let c = BothCounters {
        ends: [(&ftx, &frx), (&rtx, &rrx)],
        ifaces: &ifaces,
        qdiscs: &[],
        ethtool: &[],
        softnet: &[],
    };
    let d = reconcile_both([&fwd, &rev], Some(&kernel), &[], &c);
    assert_eq!(
        places(&d.forward),
        [(Side::Dut, "d0", "interface", "rx_dropped", 30)]
    );
    assert_eq!(
        (
            d.forward.lost,
            d.forward.dut,
            d.forward.tester,
            d.forward.unexplained
        ),
        (30, 30, 0, 0)
    );
    assert_eq!(
        places(&d.reverse),
        [
            (Side::Dut, "d1", "kernel", "NETFILTER_DROP", 400),
            (Side::Tester, "g0", "interface", "rx_dropped", 100),
        ]
    );
    assert_eq!(
        (
            d.reverse.lost,
            d.reverse.dut,
            d.reverse.tester,
            d.reverse.unexplained
        ),
        (500, 400, 100, 0)
    );
    // The total is the sum; nothing was left for the loopback's event.
    assert_eq!(
        (
            d.total.lost,
            d.total.dut,
            d.total.tester,
            d.total.unexplained
        ),
        (530, 430, 100, 0)
    );
    assert_eq!(d.total.places.len(), 3);
}

#[test]
fn what_no_direction_says_is_placed_in_the_total_only() {
    let (fwd, rev) = (view("gen", "rcv", "r0"), view("rcv", "gen", "g0"));
    // Both directions lost 10 that no port counted; the DUT's loopback
    // saw 15 dropped.
    let (ftx, frx) = ends(100, 90);
    let (rtx, rrx) = ends(100, 90);
    let ifaces = [
        port("gen", "gen", "g0", (0, 0)),
        port("dut_in", "dut", "d0", (0, 0)),
        port("dut_out", "dut", "d1", (0, 0)),
        port("rcv", "rcv", "r0", (0, 0)),
    ];
    let kernel = [event("dut", "lo", "IP_RPFILTER", 15)];
    let c = BothCounters {
        ends: [(&ftx, &frx), (&rtx, &rrx)],
        ifaces: &ifaces,
        qdiscs: &[],
        ethtool: &[],
        softnet: &[],
    };
    let d = reconcile_both([&fwd, &rev], Some(&kernel), &[], &c);
    assert_eq!((d.forward.unexplained, d.reverse.unexplained), (10, 10));
    assert!(d.forward.places.is_empty() && d.reverse.places.is_empty());
    assert_eq!(
        places(&d.total),
        [(Side::Dut, "lo", "kernel", "IP_RPFILTER", 15)]
    );
    assert_eq!(
        (d.total.lost, d.total.dut, d.total.unexplained),
        (20, 15, 5)
    );
}

#[test]
fn a_qdisc_and_a_transmit_count_the_frames_going_out() {
    for (role, out, way) in [
        ("gen", true, Way::Forward),
        ("gen", false, Way::Reverse),
        ("dut_in", false, Way::Forward),
        ("dut_in", true, Way::Reverse),
        ("dut_out", true, Way::Forward),
        ("rcv", true, Way::Reverse),
    ] {
        assert_eq!(way_at(role, out), Some(way), "{role} {out}");
    }
    assert_eq!(way_at("dut3", true), None);
    assert!(leaving("QDISC_DROP") && leaving("NEIGH_FAILED") && leaving("TC_EGRESS"));
    assert!(!leaving("NETFILTER_DROP") && !leaving("CPU_BACKLOG") && !leaving("IP_RPFILTER"));
    for (a, b) in [("gen", "rcv"), ("dut_in", "dut_out"), ("dut3", "dut3")] {
        assert_eq!(
            (mirror_role(a), mirror_role(b)),
            (b.to_string(), a.to_string())
        );
    }
}
