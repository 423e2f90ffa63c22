//! Queueing disciplines' drop counters, as `tc -s qdisc` shows them: an
//! rtnetlink RTM_GETQDISC dump (built and decoded by
//! `netlink-packet-route`, sent through [`crate::netlink`]) in the calling
//! thread's network namespace.
//!
//! Only each interface's root qdisc is read: a classful root (htb, tbf,
//! mq, ...) already counts its children's drops, so adding the children
//! would count the same frames twice.

use netlink_packet_core::NLM_F_DUMP;
use netlink_packet_route::tc::{TcAttribute, TcHandle, TcMessage, TcStats2};
use netlink_packet_route::RouteNetlinkMessage;

use crate::netlink::{self, RequestError};
use crate::sys;
use crate::IoError;

/// A root qdisc's counters (`tc -s qdisc`: dropped, overlimits).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QdiscCounters {
    /// `pfifo_fast`, `tbf`, `fq_codel`, ...
    pub kind: String,
    /// Frames the qdisc dropped.
    pub drops: u64,
    /// Times a frame met a full rate or queue (throttling, not loss).
    pub overlimits: u64,
}

impl QdiscCounters {
    /// `self - earlier`, saturating at 0 (a qdisc replaced during a run
    /// starts again from 0).
    pub fn delta(&self, earlier: &QdiscCounters) -> QdiscCounters {
        QdiscCounters {
            kind: self.kind.clone(),
            drops: self.drops.saturating_sub(earlier.drops),
            overlimits: self.overlimits.saturating_sub(earlier.overlimits),
        }
    }
}

/// The root qdisc of each of `names` in the calling thread's namespace, in
/// `names` order; None for an interface without one (a `noqueue` device,
/// such as a veth by default, queues and drops nothing there).
pub fn read_roots(names: &[&str]) -> Result<Vec<Option<QdiscCounters>>, IoError> {
    let what = names.join(", ");
    let indexes = names
        .iter()
        .map(|n| sys::if_index(n))
        .collect::<Result<Vec<u32>, IoError>>()?;
    let sock = netlink::Socket::open(netlink::NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", &what, e))?;
    let answers = sock
        .request(
            RouteNetlinkMessage::GetQueueDiscipline(TcMessage::default()),
            NLM_F_DUMP,
        )
        .map_err(|e| match e {
            RequestError::Send(e) => {
                IoError::sys("sending a netlink RTM_GETQDISC request", &what, e)
            }
            RequestError::Recv(e) => {
                IoError::sys("reading the netlink RTM_GETQDISC answer", &what, e)
            }
            RequestError::Malformed => {
                IoError::Other(format!("malformed netlink qdisc answer for {what}"))
            }
            RequestError::Kernel(e) => IoError::sys("dumping the qdiscs", &what, e),
        })?;
    let roots: Vec<(u32, QdiscCounters)> = answers
        .iter()
        .filter_map(|m| match m {
            RouteNetlinkMessage::NewQueueDiscipline(q) if q.header.parent == TcHandle::ROOT => {
                Some((q.header.index as u32, counters(&q.attributes)))
            }
            _ => None,
        })
        // `noqueue` is listed as a root but is no queue: it never drops.
        .filter(|(_, q)| q.kind != "noqueue")
        .collect();
    Ok(indexes
        .iter()
        .map(|i| roots.iter().find(|r| r.0 == *i).map(|r| r.1.clone()))
        .collect())
}

/// The counters in a qdisc's attributes: TCA_STATS2's queue statistics,
/// or the older TCA_STATS.
fn counters(attributes: &[TcAttribute]) -> QdiscCounters {
    let kind = attributes
        .iter()
        .find_map(|a| match a {
            TcAttribute::Kind(k) => Some(k.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let queue = attributes.iter().find_map(|a| match a {
        TcAttribute::Stats2(s) => s.iter().find_map(|s| match s {
            TcStats2::Queue(q) => Some((q.drops, q.overlimits)),
            _ => None,
        }),
        _ => None,
    });
    let old = || {
        attributes.iter().find_map(|a| match a {
            TcAttribute::Stats(s) => Some((s.drops, s.overlimits)),
            _ => None,
        })
    };
    let (drops, overlimits) = queue.or_else(old).unwrap_or_default();
    QdiscCounters {
        kind,
        drops: u64::from(drops),
        overlimits: u64::from(overlimits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_route::tc::{TcStats, TcStatsQueue};

    #[test]
    fn stats2_first_then_the_old_stats() {
        // Both structs are non-exhaustive: set the fields on defaults.
        let mut queue = TcStatsQueue::default();
        (queue.drops, queue.overlimits) = (7, 9);
        let mut old = TcStats::default();
        (old.drops, old.overlimits) = (1, 2);
        let both = [
            TcAttribute::Kind("tbf".into()),
            TcAttribute::Stats(old),
            TcAttribute::Stats2(vec![TcStats2::Queue(queue)]),
        ];
        let want = |drops, overlimits| QdiscCounters {
            kind: "tbf".into(),
            drops,
            overlimits,
        };
        assert_eq!(counters(&both), want(7, 9));
        assert_eq!(counters(&both[..2]), want(1, 2));
        assert_eq!(counters(&both[..1]), want(0, 0));
        assert_eq!(want(10, 12).delta(&want(7, 9)), want(3, 3));
        assert_eq!(want(1, 1).delta(&want(7, 9)), want(0, 0));
    }

    #[test]
    fn loopback_has_a_root_or_none_and_a_missing_name_is_an_error() {
        // `lo` is noqueue on most systems; whatever it has, the dump decodes.
        let roots = read_roots(&["lo"]).unwrap();
        assert_eq!(roots.len(), 1);
        assert!(matches!(
            read_roots(&["pktlab-none0"]),
            Err(IoError::NoSuchInterface(_))
        ));
    }
}
