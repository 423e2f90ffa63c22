//! The drop tracer (`crates/io/bpf/droptrace.c`) on the running kernel:
//! which drops it counts. Needs root (BPF, namespaces) and the kernel's BTF.
//!
//! The drops are made by hand: a UDP datagram carrying the test payload's
//! magic sent to a port nobody listens on, over a namespace's loopback, is
//! freed by the kernel as NO_SOCKET in that namespace. Every packet stays
//! in namespaces the test creates.

mod common;

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use common::Netns;
use pktlab_io::droptrace::{
    netns_inode, DropCounts, DropTracer, TraceOptions, BACKLOG_REASON, MAX_WATCHED,
};

/// Sends `n` datagrams whose payload starts with the test magic (0x504C)
/// to 127.0.0.1:9 in `ns`, where nothing listens.
fn drop_in(ns: &Netns, n: usize) {
    ns.run(|| {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..n {
            s.send_to(&[0x50, 0x4c, 0, 0, 0, 0, 0, 1], "127.0.0.1:9")
                .unwrap();
        }
    });
}

/// The test frames counted in namespace `inode` since `before`, once the
/// count has stopped growing (loopback frames are dropped a moment after
/// they are sent, in the receiving CPU's softirq).
fn counted_in(t: &DropTracer, before: &DropCounts, inode: u32) -> u64 {
    let count = || -> u64 {
        t.read()
            .unwrap()
            .since(before)
            .frames
            .iter()
            .filter(|(k, _)| k.netns == inode)
            .map(|(_, n)| n)
            .sum()
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut last = count();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = count();
        if now == last || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

#[test]
fn a_watched_tracer_counts_its_namespaces_only() {
    let (a, b) = (Netns::new(), Netns::new());
    let (ia, ib) = (
        netns_inode(Some(&a.name)).unwrap(),
        netns_inode(Some(&b.name)).unwrap(),
    );
    let mut t = DropTracer::start_with(TraceOptions {
        all: false,
        backlog_counted: true,
    })
    .unwrap();
    // The kernel names its reasons (Linux 5.17 on): the backlog's
    // refusals are left to the counters.
    assert_eq!(t.counted(), [BACKLOG_REASON.to_string()]);

    t.watch(&[ia]).unwrap();
    let before = t.read().unwrap();
    drop_in(&a, 5);
    drop_in(&b, 7);
    assert_eq!(counted_in(&t, &before, ia), 5);
    assert_eq!(counted_in(&t, &before, ib), 0);

    // Watching nothing in particular: every namespace again.
    t.watch(&[]).unwrap();
    let before = t.read().unwrap();
    drop_in(&b, 3);
    assert_eq!(counted_in(&t, &before, ib), 3);

    // Both, among others that do not exist.
    t.watch(&[1, ib, 2, ia]).unwrap();
    let before = t.read().unwrap();
    drop_in(&a, 2);
    drop_in(&b, 4);
    assert_eq!(
        (counted_in(&t, &before, ia), counted_in(&t, &before, ib)),
        (2, 4)
    );

    let too_many = vec![ia; MAX_WATCHED + 1];
    assert_eq!(
        t.watch(&too_many).unwrap_err().to_string(),
        format!(
            "the drop tracer watches at most {MAX_WATCHED} namespaces, not {}",
            MAX_WATCHED + 1
        )
    );
}

#[test]
fn a_plain_tracer_counts_every_reason_and_a_place_names_it() {
    let a = Netns::new();
    let ia = netns_inode(Some(&a.name)).unwrap();
    let t = DropTracer::start(false).unwrap();
    assert!(t.counted().is_empty());
    let before = t.read().unwrap();
    drop_in(&a, 4);
    assert_eq!(counted_in(&t, &before, ia), 4);
    let grew = t.read().unwrap().since(&before);
    let mut places = pktlab_io::droptrace::Places::load();
    let named: Vec<_> = places
        .name(&grew)
        .into_iter()
        .filter(|p| p.netns == a.name)
        .collect();
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(
        (
            named[0].iface.as_str(),
            named[0].reason.as_str(),
            named[0].frames
        ),
        ("lo", "NO_SOCKET", 4)
    );
}
