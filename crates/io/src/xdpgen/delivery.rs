//! The delivery contract: what must hold before a single frame is sent,
//! so that every frame the program redirects reaches the TX interface's
//! other side (each rule below was found by a frame going missing).
//!
//! 1. The TX device takes redirected frames: its xdp-features have
//!    NDO_XMIT. A veth has it only while its peer has GRO on or an XDP
//!    program (the peer needs its NAPI); without it every redirect fails
//!    (EOPNOTSUPP) and no interface counter moves.
//! 2. For a veth, the peer's NAPI drains its 256-slot ring inline, on the
//!    generating CPU, after every live-frames batch. That needs a batch of
//!    at most 128 (the ring frees slots lazily), no threaded NAPI on the
//!    peer, and one peer RX queue per generating CPU, the CPU numbers
//!    distinct modulo the peer's queue count (veth picks the ring by
//!    `smp_processor_id() % queues`).
//! 3. Every frame fits the MTU of the TX device and of a veth's peer, and
//!    a live-frames page (no jumbo frames).
//!
//! The facts are gathered in [`gather`]; [`check`] is pure, so every
//! message is unit-tested. What cannot be checked (a peer in a namespace
//! without a name) is left to the run-time accounting, which sees every
//! frame that failed to go out.

use std::os::fd::AsRawFd;

use super::netlink;
use crate::ethtool;
use crate::iface::Iface;
use crate::IoError;

/// The longest frame (bytes without FCS) BPF_PROG_RUN takes in live-frames
/// mode: a 4 KiB page less XDP_PACKET_HEADROOM (256), the test run's
/// `struct xdp_page_head` (112 bytes on Linux 6.18) and the aligned
/// `skb_shared_info` (320). Longer data_in is refused with EINVAL (which
/// [`XdpGen::run`](super::XdpGen::run) also explains, should another
/// kernel's structs be larger).
pub const MAX_LIVE_FRAME_LEN: usize = 4096 - 256 - 112 - 320;
/// The largest live-frames batch the kernel takes (TEST_XDP_MAX_BATCH).
pub const MAX_BATCH: u32 = 256;
/// The largest batch a veth peer's ring absorbs between two NAPI polls.
pub const MAX_VETH_BATCH: u32 = 128;

/// What the generator asks of the interface.
#[derive(Clone, Debug)]
pub struct Demand<'a> {
    /// CPUs of the generating threads, one each.
    pub cpus: &'a [usize],
    pub batch: u32,
    /// The longest frame, without FCS.
    pub max_len: usize,
    pub vlan: bool,
}

/// The TX interface as the checks see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxFacts {
    pub name: String,
    pub mtu: u32,
    pub veth: bool,
    /// `None` when the kernel cannot say (before Linux 6.3).
    pub xdp_features: Option<u64>,
    pub peer: Peer,
}

/// A veth's other end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Peer {
    /// Not a veth.
    None,
    Known(PeerFacts),
    /// A veth whose peer could not be looked at, and why.
    Unknown(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerFacts {
    pub name: String,
    /// The named network namespace it lives in; `None`: the TX interface's.
    pub netns: Option<String>,
    pub mtu: u32,
    pub rx_queues: u32,
    /// `None` when the kernel cannot say.
    pub threaded: Option<bool>,
}

impl PeerFacts {
    /// `d0 (namespace pktlab-dut)` or `vb`.
    fn describe(&self) -> String {
        match &self.netns {
            Some(ns) => format!("{} (namespace {ns})", self.name),
            None => self.name.clone(),
        }
    }

    /// A command run where the peer lives.
    fn command(&self, cmd: &str) -> String {
        match &self.netns {
            Some(ns) => format!("ip netns exec {ns} {cmd}"),
            None => cmd.to_string(),
        }
    }
}

/// Refuses what cannot deliver every frame, with one line naming what to
/// change: [`IoError::XdpSetting`] (exit code 2) when the command line's
/// settings are the cause, [`IoError::XdpDelivery`] (1) when the system is.
pub fn check(tx: &TxFacts, want: &Demand<'_>) -> Result<(), IoError> {
    let name = &tx.name;
    if let Some(features) = tx.xdp_features {
        if features & netlink::XDP_ACT_NDO_XMIT == 0 {
            let hint = match &tx.peer {
                Peer::Known(p) => format!(
                    "turn GRO on on its veth peer {}: {}, or attach an XDP program there",
                    p.describe(),
                    p.command(&format!("ethtool -K {} gro on", p.name))
                ),
                _ if tx.veth => {
                    "turn GRO on on its veth peer (ethtool -K PEER gro on), or attach an XDP program there"
                        .to_string()
                }
                _ => "its driver cannot transmit redirected frames: use --io afxdp or afpacket".to_string(),
            };
            return Err(IoError::XdpDelivery(format!(
                "{name} does not accept XDP-redirected frames (xdp-features {features:#x} lack ndo-xmit): {hint}"
            )));
        }
    }
    if want.batch == 0 || want.batch > MAX_BATCH {
        return Err(IoError::XdpSetting(format!(
            "invalid batch {} for --io xdp: XDP live frames take 1 to {MAX_BATCH} frames per flush",
            want.batch
        )));
    }
    if tx.veth && want.batch > MAX_VETH_BATCH {
        return Err(IoError::XdpSetting(format!(
            "batch {} is too large for veth {name}: its peer's 256-slot ring overflows above {MAX_VETH_BATCH} frames per flush; use --batch {MAX_VETH_BATCH} or less (64 is best)",
            want.batch
        )));
    }
    let size = want.max_len + 4;
    if want.max_len > MAX_LIVE_FRAME_LEN {
        return Err(IoError::XdpSetting(format!(
            "frames of {size} bytes are too large for XDP live frames (at most {} bytes): use --io afxdp or afpacket for jumbo frames",
            MAX_LIVE_FRAME_LEN + 4
        )));
    }
    // The MTU counts the bytes after the Ethernet header (and VLAN tag).
    let l3_len = want.max_len - 14 - if want.vlan { 4 } else { 0 };
    let fit = |mtu: u32| mtu as usize + 14 + if want.vlan { 4 } else { 0 } + 4;
    if l3_len > tx.mtu as usize {
        return Err(IoError::XdpSetting(format!(
            "frames of {size} bytes do not fit the MTU {} of {name}: use frames of at most {} bytes or raise the MTU",
            tx.mtu,
            fit(tx.mtu)
        )));
    }
    let Peer::Known(peer) = &tx.peer else {
        return Ok(());
    };
    if l3_len > peer.mtu as usize {
        return Err(IoError::XdpSetting(format!(
            "frames of {size} bytes do not fit the MTU {} of {name}'s veth peer {}: use frames of at most {} bytes or raise its MTU",
            peer.mtu,
            peer.describe(),
            fit(peer.mtu)
        )));
    }
    if peer.threaded == Some(true) {
        return Err(IoError::XdpDelivery(format!(
            "{name}'s veth peer {} polls in threaded NAPI mode, which cannot keep up with redirected frames: turn it off: {}",
            peer.describe(),
            peer.command(&format!("sh -c 'echo 0 > /sys/class/net/{}/threaded'", peer.name))
        )));
    }
    let threads = want.cpus.len() as u32;
    let queues = peer.rx_queues.max(1);
    if threads > queues {
        return Err(IoError::XdpSetting(format!(
            "-p {threads} needs {threads} receive queues on {name}'s veth peer {}, which has {queues}: use -p {queues}, or veths with {threads} queues (pktlab lab up --queues {threads})",
            peer.describe()
        )));
    }
    for (i, a) in want.cpus.iter().enumerate() {
        if let Some(b) = want.cpus[..i]
            .iter()
            .find(|b| *b % queues as usize == a % queues as usize)
        {
            return Err(IoError::XdpSetting(format!(
                "CPUs {b} and {a} would share receive queue {} of {name}'s veth peer {} ({queues} queues): pick CPUs that differ modulo {queues} (--cpus)",
                a % queues as usize,
                peer.describe()
            )));
        }
    }
    Ok(())
}

/// Gathers the facts about `iface` (in the calling thread's namespace).
pub fn gather(iface: &Iface) -> Result<TxFacts, IoError> {
    let name = iface.name.as_str();
    let sys = |op: &str, e: std::io::Error| IoError::sys(op, name, e);
    let xdp_features =
        netlink::xdp_features(iface.index).map_err(|e| sys("reading the XDP features", e))?;
    let veth = ethtool::driver(name)?.as_deref() == Some("veth");
    let peer = if veth { find_peer(iface)? } else { Peer::None };
    Ok(TxFacts {
        name: name.to_string(),
        mtu: iface.mtu,
        veth,
        xdp_features,
        peer,
    })
}

/// Looks at a veth's peer: here, or in the named namespace whose id the
/// link carries (`ip netns` names, as the built-in lab uses).
fn find_peer(iface: &Iface) -> Result<Peer, IoError> {
    let name = iface.name.as_str();
    let link =
        netlink::link_facts(iface.index).map_err(|e| IoError::sys("reading the link", name, e))?;
    let Some(peer_index) = link.link else {
        return Ok(Peer::Unknown(format!("{name} reports no peer")));
    };
    let Some(nsid) = link.link_netnsid else {
        return peer_facts(peer_index, None).map(Peer::Known);
    };
    let Ok(dir) = std::fs::read_dir("/var/run/netns") else {
        return Ok(Peer::Unknown(format!(
            "{name}'s peer is in a namespace without a name"
        )));
    };
    for entry in dir.flatten() {
        let Ok(file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        if netlink::nsid_of(file.as_raw_fd()).ok().flatten() != Some(nsid) {
            continue;
        }
        let ns = entry.file_name().to_string_lossy().into_owned();
        // Entering the namespace is per thread: do it in a thread of its own.
        let facts = std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: setns on this short-lived thread only; the
                // descriptor stays open for the call.
                if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    return Err(IoError::last_os(
                        "entering the namespace of the veth peer of",
                        name,
                    ));
                }
                peer_facts(peer_index, Some(ns))
            })
            .join()
            .map_err(|_| IoError::Other("the veth peer lookup panicked".into()))?
        })?;
        return Ok(Peer::Known(facts));
    }
    Ok(Peer::Unknown(format!(
        "{name}'s peer is in a namespace without a name"
    )))
}

/// Facts about interface `index` of the calling thread's namespace.
fn peer_facts(index: u32, netns: Option<String>) -> Result<PeerFacts, IoError> {
    let name = if_name(index)?;
    let sys = |op: &str, e: std::io::Error| IoError::sys(op, &name, e);
    let link = netlink::link_facts(index).map_err(|e| sys("reading the link", e))?;
    let threaded = netlink::napi_threaded(index).map_err(|e| sys("reading the NAPI state", e))?;
    let rx_queues = ethtool::channels(&name)?
        .map(|c| c.rx_queues())
        .filter(|&n| n > 0)
        .unwrap_or(1);
    Ok(PeerFacts {
        name,
        netns,
        mtu: link.mtu,
        rx_queues,
        threaded,
    })
}

fn if_name(index: u32) -> Result<String, IoError> {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: `buf` has the IF_NAMESIZE bytes if_indextoname writes at most.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return Err(IoError::NoSuchInterface(format!("ifindex {index}")));
    }
    // SAFETY: if_indextoname wrote a NUL-terminated name into `buf`.
    let c = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Ok(c.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn veth(features: Option<u64>, peer: Peer) -> TxFacts {
        TxFacts {
            name: "g0".into(),
            mtu: 1500,
            veth: true,
            xdp_features: features,
            peer,
        }
    }

    fn d0(queues: u32, threaded: Option<bool>) -> Peer {
        Peer::Known(PeerFacts {
            name: "d0".into(),
            netns: Some("pktlab-dut".into()),
            mtu: 1500,
            rx_queues: queues,
            threaded,
        })
    }

    fn demand(cpus: &[usize], batch: u32, max_len: usize) -> Demand<'_> {
        Demand {
            cpus,
            batch,
            max_len,
            vlan: false,
        }
    }

    const OK: Option<u64> = Some(0x3f);

    #[test]
    fn a_good_setup_passes() {
        check(&veth(OK, d0(2, Some(false))), &demand(&[0, 1], 64, 60)).unwrap();
        check(
            &veth(None, Peer::Unknown("x".into())),
            &demand(&[0], 128, 1514),
        )
        .unwrap();
        // A VLAN tag does not count against the MTU.
        let mut d = demand(&[0], 64, 1518);
        d.vlan = true;
        check(&veth(OK, d0(1, None)), &d).unwrap();
    }

    #[test]
    fn each_refusal_names_what_to_change() {
        let cases: Vec<(TxFacts, Demand<'_>, bool, &str)> = vec![
            (
                veth(Some(0x23), d0(1, None)),
                demand(&[0], 64, 60),
                false,
                "g0 does not accept XDP-redirected frames (xdp-features 0x23 lack ndo-xmit): turn GRO on on its veth peer d0 (namespace pktlab-dut): ip netns exec pktlab-dut ethtool -K d0 gro on, or attach an XDP program there",
            ),
            (
                TxFacts {
                    veth: false,
                    peer: Peer::None,
                    ..veth(Some(0x3), Peer::None)
                },
                demand(&[0], 64, 60),
                false,
                "g0 does not accept XDP-redirected frames (xdp-features 0x3 lack ndo-xmit): its driver cannot transmit redirected frames: use --io afxdp or afpacket",
            ),
            (
                veth(OK, d0(1, None)),
                demand(&[0], 256, 60),
                true,
                "batch 256 is too large for veth g0: its peer's 256-slot ring overflows above 128 frames per flush; use --batch 128 or less (64 is best)",
            ),
            (
                veth(OK, d0(1, None)),
                demand(&[0], 300, 60),
                true,
                "invalid batch 300 for --io xdp: XDP live frames take 1 to 256 frames per flush",
            ),
            (
                veth(OK, d0(1, None)),
                demand(&[0], 64, 1515),
                true,
                "frames of 1519 bytes do not fit the MTU 1500 of g0: use frames of at most 1518 bytes or raise the MTU",
            ),
            (
                veth(OK, d0(1, None)),
                demand(&[0], 64, 9014),
                true,
                "frames of 9018 bytes are too large for XDP live frames (at most 3412 bytes): use --io afxdp or afpacket for jumbo frames",
            ),
            (
                veth(OK, d0(1, Some(true))),
                demand(&[0], 64, 60),
                false,
                "g0's veth peer d0 (namespace pktlab-dut) polls in threaded NAPI mode, which cannot keep up with redirected frames: turn it off: ip netns exec pktlab-dut sh -c 'echo 0 > /sys/class/net/d0/threaded'",
            ),
            (
                veth(OK, d0(1, None)),
                demand(&[0, 1], 64, 60),
                true,
                "-p 2 needs 2 receive queues on g0's veth peer d0 (namespace pktlab-dut), which has 1: use -p 1, or veths with 2 queues (pktlab lab up --queues 2)",
            ),
            (
                veth(OK, d0(2, None)),
                demand(&[1, 3], 64, 60),
                true,
                "CPUs 1 and 3 would share receive queue 1 of g0's veth peer d0 (namespace pktlab-dut) (2 queues): pick CPUs that differ modulo 2 (--cpus)",
            ),
        ];
        for (facts, want, usage, msg) in cases {
            let e = check(&facts, &want).unwrap_err();
            assert_eq!(e.to_string(), msg);
            assert_eq!(e.is_usage(), usage, "{msg}");
        }
        // The peer's own MTU counts too.
        let mut p = d0(1, None);
        if let Peer::Known(f) = &mut p {
            f.mtu = 1000;
        }
        let e = check(&veth(OK, p), &demand(&[0], 64, 1100)).unwrap_err();
        assert!(
            e.to_string().contains("MTU 1000 of g0's veth peer d0"),
            "{e}"
        );
    }
}
