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
            rfc4814_seed: None,
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
            rfc4814_seed: None,
        }
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
            order: FlowOrder::Sequential,
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
    }
}
