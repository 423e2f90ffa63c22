//! Traffic from the receiver's side and both ways on the built-in lab
//! (needs root). Each test makes a lab with its own prefix (`gl<pid>x<n>`,
//! removed on drop, also when the test fails).

mod common;

use common::Lab;
use pktlab_engine::StopSignal;
use pktlab_lab::LabSpec;
use pktlab_loss::tracer::Tracer;
use pktlab_remote::endpoint::BenchIo;
use pktlab_trial::target::Target;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::{Shape, TrialSettings, Trials};
use std::time::Duration;

fn builtin_target(lab: &Lab) -> Target {
    // The DUT's reset lines run this pktlab (`pktlab knob`).
    std::env::set_var(pktlab_lab::dut::PKTLAB_ENV, common::PKTLAB);
    Target::builtin(LabSpec {
        prefix: lab.prefix.clone(),
        queues: 1,
        cpus: None,
    })
    .unwrap()
    .0
}

/// A counter of one watched port over the trial.
fn counter(result: &pktlab_trial::trial::TrialResult, iface: &str, rx: bool) -> u64 {
    let c = result
        .lab_counters
        .iter()
        .find(|c| c.iface == iface)
        .unwrap_or_else(|| panic!("no counters of {iface}"));
    if rx {
        c.counters.rx_packets
    } else {
        c.counters.tx_packets
    }
}

#[test]
fn a_one_way_trial_from_r0_reaches_g0_through_the_dut() {
    let _serial = common::one_at_a_time();
    let lab = Lab::up();
    let forward = builtin_target(&lab);
    let back = forward.reversed().unwrap();
    assert_eq!(back.gen.iface, "r0");
    assert_eq!(back.gen.netns.as_deref(), Some(lab.ns("rcv").as_str()));
    assert_eq!(back.rcv.iface, "g0");
    assert_eq!(back.rcv.netns.as_deref(), Some(lab.ns("gen").as_str()));
    let settings = TrialSettings {
        duration: Duration::from_secs(3),
        trim_head: 0,
        trim_tail: 0,
        interval: Duration::from_millis(500),
    };
    let stop = StopSignal::new();
    let tracer = Tracer::off();
    let trials = Trials::for_target(&back, BenchIo::Afpacket, &settings, &stop, &tracer);
    // 20 000 frames at 20 kpps: one second, well inside the 3 s trial.
    let shape = Shape {
        count: Some(20_000),
        ..Shape::default()
    };
    let traffic = Traffic::inet4().reversed();
    let r = trials
        .run_shaped(&traffic, Some(20_000.0), shape, &mut |_| {})
        .unwrap();
    assert_eq!(r.tx.packets, 20_000);
    assert_eq!(r.rx.packets - r.rx.foreign, 20_000, "{:?}", r.rx);
    assert_eq!((r.lost, r.rx.lost, r.rx.duplicates), (0, 0, 0));
    // 100 sources x 20 destinations, every one seen at g0.
    assert_eq!((r.rx.flows, r.rx.streams), (2000, 2000));
    // The frames went r0 -> d1 -> d0 -> g0: each port counted them (and
    // perhaps a neighbour message or two of the lab's own).
    for (iface, rx) in [("r0", false), ("d1", true), ("d0", false), ("g0", true)] {
        let n = counter(&r, iface, rx);
        assert!((20_000..20_010).contains(&n), "{iface}: {n}");
    }
    // Nothing went the forward way.
    for (iface, rx) in [("g0", false), ("d0", true), ("d1", false), ("r0", true)] {
        let n = counter(&r, iface, rx);
        assert!(n < 10, "{iface}: {n}");
    }
    assert_eq!(
        r.lab_counters
            .iter()
            .map(|c| (c.role.as_str(), c.iface.as_str()))
            .collect::<Vec<_>>(),
        [
            ("gen", "r0"),
            ("dut_in", "d1"),
            ("dut_out", "d0"),
            ("rcv", "g0")
        ]
    );
}
