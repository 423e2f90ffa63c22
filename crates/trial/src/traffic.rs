//! Traffic profiles: what the generator sends in a trial.

use pktlab_wire::flow::{self, FlowOrder, FlowSet};
use pktlab_wire::frame::FrameSpec;
use pktlab_wire::mac::MacAddr;
use pktlab_wire::range::Family;
use pktlab_wire::rfc4814::PortMode;
use pktlab_wire::size::SizeMix;

use crate::TrialError;

/// A named traffic profile.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Traffic {
    /// `inet4`, `inet6`, `inet4-1518`, ...
    pub name: String,
    pub src: String,
    pub dst: String,
    pub sizes: String,
    /// Requested rate in pps; None: as fast as the generator can.
    pub rate_pps: Option<f64>,
    /// Generator threads.
    pub threads: usize,
    /// RFC 4814 pseudorandom ports from this seed; None: the ranges' ports.
    /// (Absent from results written before it existed.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rfc4814_seed: Option<u64>,
    /// Each round of the flows in a pseudorandom order from this seed
    /// (every flow once per round); None: in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// Sent both ways: the reverse stream's ranges, from the receiver's
    /// port to the generator's (None: one way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<ReverseRanges>,
}

/// The ranges of a traffic's reverse stream.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReverseRanges {
    pub src: String,
    pub dst: String,
}

impl Traffic {
    /// The built-in lab's 2000 flows of 64-byte IPv4 frames at full speed:
    /// the pkt-gen command of BSDRP's forwarding lab.
    pub fn inet4() -> Traffic {
        Traffic {
            name: "inet4".into(),
            src: flow::LAB_SRC_V4.into(),
            dst: flow::LAB_DST_V4.into(),
            sizes: "64".into(),
            rate_pps: None,
            threads: 1,
            reverse: None,
            rfc4814_seed: None,
            order_seed: None,
        }
    }

    /// The IPv6 twin of [`Traffic::inet4`], with the smallest frame that
    /// holds IPv6, UDP and the test payload.
    pub fn inet6() -> Traffic {
        Traffic {
            name: "inet6".into(),
            src: flow::LAB_SRC_V6.into(),
            dst: flow::LAB_DST_V6.into(),
            sizes: pktlab_wire::frame::min_frame_size(Family::Inet6, false).to_string(),
            rate_pps: None,
            threads: 1,
            reverse: None,
            rfc4814_seed: None,
            order_seed: None,
        }
    }

    /// The same traffic sent back from the receiver's side, one way: its
    /// source range is this one's destination range and its destination
    /// range this one's source range (the name gets `-reverse`).
    pub fn reversed(&self) -> Traffic {
        Traffic {
            name: format!("{}-reverse", self.name),
            src: self.dst.clone(),
            dst: self.src.clone(),
            reverse: None,
            ..self.clone()
        }
    }

    /// This traffic sent both ways, its reverse stream on the mirrored
    /// ranges ([`Traffic::reversed`]).
    pub fn both_ways(&self) -> Traffic {
        Traffic {
            reverse: Some(ReverseRanges {
                src: self.dst.clone(),
                dst: self.src.clone(),
            }),
            ..self.clone()
        }
    }

    /// The reverse stream of a traffic sent both ways, as a one-way
    /// traffic from the receiver's port (None: one way only).
    pub fn reverse_stream(&self) -> Option<Traffic> {
        self.reverse.as_ref().map(|r| Traffic {
            name: format!("{}-reverse", self.name),
            src: r.src.clone(),
            dst: r.dst.clone(),
            reverse: None,
            ..self.clone()
        })
    }

    /// The frames for this traffic between two MACs.
    pub fn frame_spec(&self, src_mac: [u8; 6], dst_mac: [u8; 6]) -> Result<FrameSpec, TrialError> {
        let flows = FlowSet::new(self.src.parse()?, self.dst.parse()?)?;
        let sizes: SizeMix = self.sizes.parse()?;
        let spec = FrameSpec {
            src_mac: MacAddr(src_mac),
            dst_mac: MacAddr(dst_mac),
            vlan: None,
            ttl: 64,
            flows,
            order: match self.order_seed {
                None => FlowOrder::Sequential,
                Some(seed) => FlowOrder::Random { seed },
            },
            sizes,
            ports: match self.rfc4814_seed {
                None => PortMode::Ranges,
                Some(seed) => PortMode::Rfc4814 { seed },
            },
        };
        spec.validate()?;
        // Campaigns have no --allow-public: they send to the lab's ranges.
        pktlab_wire::safety::check_destinations(&spec.flows).map_err(|e| match e {
            pktlab_wire::WireError::PublicDestination { addr, in_range } => {
                TrialError::Usage(format!(
                    "traffic profile '{}': destination {addr}{in_range} is outside the benchmark, \
                     private and documentation ranges, where campaigns never send",
                    self.name
                ))
            }
            e => e.into(),
        })?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reverse_traffic_swaps_the_ranges() {
        let back = Traffic::inet4().reversed();
        assert_eq!(back.name, "inet4-reverse");
        assert_eq!(back.src, "198.19.10.1:2000-198.19.10.100");
        assert_eq!(back.dst, "198.18.10.1:2000-198.18.10.20");
        assert_eq!(
            (back.sizes.as_str(), back.rate_pps, back.threads),
            ("64", None, 1)
        );
        // 100 sources x 20 destinations: the forward traffic's 2000 flows.
        let spec = back
            .frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .unwrap();
        assert_eq!(spec.flows.count(), 2000);
        assert_eq!(back.reverse, None);
    }

    #[test]
    fn a_traffic_both_ways_has_a_reverse_stream() {
        assert_eq!(Traffic::inet6().reverse_stream(), None);
        let both = Traffic::inet6().both_ways();
        let back = both.reverse_stream().unwrap();
        assert_eq!(back.src, "[2001:2:0:8000::1]:2000-[2001:2:0:8000::64]:2000");
        assert_eq!(back.dst, "[2001:2::1]:2000-[2001:2::14]:2000");
        assert_eq!(
            (back.name.as_str(), back.reverse.as_ref()),
            ("inet6-reverse", None)
        );
        // Recorded with its ranges; a one-way traffic's record has none.
        let text = serde_json::to_string(&both).unwrap();
        assert!(
            text.contains(r#""reverse":{"src":"[2001:2:0:8000::1]"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Traffic>(&text).unwrap(), both);
        let one = serde_json::to_string(&Traffic::inet6()).unwrap();
        assert!(!one.contains("reverse"), "{one}");
    }

    /// Results written before RFC 4814 ports existed have no
    /// `rfc4814_seed`: they still read, as the ranges' ports, and a profile
    /// with the ranges' ports writes nothing new.
    #[test]
    fn old_profiles_read_and_ranges_write_no_seed() {
        let old = r#"{"name":"inet4","src":"198.18.10.1:2000-198.18.10.20","dst":"198.19.10.1:2000-198.19.10.100","sizes":"64","rate_pps":null,"threads":1}"#;
        let t: Traffic = serde_json::from_str(old).unwrap();
        assert_eq!(t, Traffic::inet4());
        assert_eq!(serde_json::to_string(&t).unwrap(), old);
        let spec = t
            .frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .unwrap();
        assert_eq!(spec.ports, PortMode::Ranges);
        let t = Traffic {
            rfc4814_seed: Some(3),
            ..Traffic::inet6()
        };
        let text = serde_json::to_string(&t).unwrap();
        assert!(text.ends_with(r#""threads":1,"rfc4814_seed":3}"#), "{text}");
        assert_eq!(serde_json::from_str::<Traffic>(&text).unwrap(), t);
        let spec = t
            .frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .unwrap();
        assert_eq!(spec.ports, PortMode::Rfc4814 { seed: 3 });
        assert_eq!(spec.order, FlowOrder::Sequential);
        let t = Traffic {
            order_seed: Some(9),
            ..Traffic::inet4()
        };
        let spec = t
            .frame_spec([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .unwrap();
        assert_eq!(spec.order, FlowOrder::Random { seed: 9 });
        assert_eq!(t.reverse_stream(), None);
        assert_eq!(t.both_ways().reverse_stream().unwrap().order_seed, Some(9));
    }
}
