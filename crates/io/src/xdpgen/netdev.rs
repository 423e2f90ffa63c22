//! The "netdev" generic netlink family (Linux 6.3+; the kernel's
//! `Documentation/netlink/specs/netdev.yaml`), as far as the generator
//! needs it: a device's XDP features (`dev-get`) and its NAPI instances
//! (`napi-get`).
//!
//! No crate defines this family, so it is defined here the way
//! `netlink-packet-generic` asks a family to be: a payload type that
//! implements [`GenlFamily`], `Emitable` and
//! `ParseableParametrized<[u8], GenlHeader>`, with `netlink-packet-core`'s
//! `Nla` for the attributes. The two commands use different attribute
//! sets, so the command in the generic header picks the decoder.

use netlink_packet_core::{
    emit_u32, emit_u64, parse_u32, parse_u64, DecodeError, DefaultNla, Emitable, Nla, NlaBuffer,
    NlasIterator, Parseable, ParseableParametrized,
};
use netlink_packet_generic::{GenlFamily, GenlHeader};

const NETDEV_CMD_DEV_GET: u8 = 1;
const NETDEV_CMD_NAPI_GET: u8 = 11;
const NETDEV_A_DEV_IFINDEX: u16 = 1;
const NETDEV_A_DEV_XDP_FEATURES: u16 = 3;
const NETDEV_A_NAPI_IFINDEX: u16 = 1;
const NETDEV_A_NAPI_PID: u16 = 4;

/// A request to, or an answer of, the netdev family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NetdevMessage {
    /// `dev-get`: one device's facts.
    DevGet(Vec<DevAttr>),
    /// `napi-get`: NAPI instances (dumped, filtered by ifindex).
    NapiGet(Vec<NapiAttr>),
}

/// An attribute of the `dev` set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DevAttr {
    Ifindex(u32),
    /// `enum netdev_xdp_act` bits.
    XdpFeatures(u64),
    Other(DefaultNla),
}

/// An attribute of the `napi` set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NapiAttr {
    Ifindex(u32),
    /// The pid of the NAPI's kernel thread: present only in threaded mode.
    Pid(u32),
    Other(DefaultNla),
}

impl GenlFamily for NetdevMessage {
    fn family_name() -> &'static str {
        "netdev"
    }

    fn command(&self) -> u8 {
        match self {
            NetdevMessage::DevGet(_) => NETDEV_CMD_DEV_GET,
            NetdevMessage::NapiGet(_) => NETDEV_CMD_NAPI_GET,
        }
    }

    fn version(&self) -> u8 {
        1
    }
}

impl Emitable for NetdevMessage {
    fn buffer_len(&self) -> usize {
        match self {
            NetdevMessage::DevGet(a) => a.as_slice().buffer_len(),
            NetdevMessage::NapiGet(a) => a.as_slice().buffer_len(),
        }
    }

    fn emit(&self, buffer: &mut [u8]) {
        match self {
            NetdevMessage::DevGet(a) => a.as_slice().emit(buffer),
            NetdevMessage::NapiGet(a) => a.as_slice().emit(buffer),
        }
    }
}

impl ParseableParametrized<[u8], GenlHeader> for NetdevMessage {
    fn parse_with_param(buf: &[u8], header: GenlHeader) -> Result<Self, DecodeError> {
        match header.cmd {
            NETDEV_CMD_DEV_GET => Ok(NetdevMessage::DevGet(parse_attrs(buf)?)),
            NETDEV_CMD_NAPI_GET => Ok(NetdevMessage::NapiGet(parse_attrs(buf)?)),
            cmd => Err(DecodeError::from(format!("unknown netdev command {cmd}"))),
        }
    }
}

fn parse_attrs<A>(buf: &[u8]) -> Result<Vec<A>, DecodeError>
where
    A: for<'a> Parseable<NlaBuffer<&'a [u8]>>,
{
    NlasIterator::new(buf)
        .map(|nla| nla.and_then(|nla| A::parse(&nla)))
        .collect()
}

impl Nla for DevAttr {
    fn value_len(&self) -> usize {
        match self {
            DevAttr::Ifindex(_) => 4,
            DevAttr::XdpFeatures(_) => 8,
            DevAttr::Other(nla) => nla.value_len(),
        }
    }

    fn kind(&self) -> u16 {
        match self {
            DevAttr::Ifindex(_) => NETDEV_A_DEV_IFINDEX,
            DevAttr::XdpFeatures(_) => NETDEV_A_DEV_XDP_FEATURES,
            DevAttr::Other(nla) => nla.kind(),
        }
    }

    fn emit_value(&self, buffer: &mut [u8]) {
        // The buffer is value_len() long, so the emitters cannot fail.
        match self {
            DevAttr::Ifindex(v) => emit_u32(buffer, *v).expect("4-byte value"),
            DevAttr::XdpFeatures(v) => emit_u64(buffer, *v).expect("8-byte value"),
            DevAttr::Other(nla) => nla.emit_value(buffer),
        }
    }
}

impl<'a> Parseable<NlaBuffer<&'a [u8]>> for DevAttr {
    fn parse(nla: &NlaBuffer<&'a [u8]>) -> Result<Self, DecodeError> {
        let v = nla.value();
        Ok(match nla.kind() {
            NETDEV_A_DEV_IFINDEX => DevAttr::Ifindex(parse_u32(v)?),
            NETDEV_A_DEV_XDP_FEATURES => DevAttr::XdpFeatures(parse_u64(v)?),
            kind => DevAttr::Other(DefaultNla::new(kind, v.to_vec())),
        })
    }
}

impl Nla for NapiAttr {
    fn value_len(&self) -> usize {
        match self {
            NapiAttr::Ifindex(_) | NapiAttr::Pid(_) => 4,
            NapiAttr::Other(nla) => nla.value_len(),
        }
    }

    fn kind(&self) -> u16 {
        match self {
            NapiAttr::Ifindex(_) => NETDEV_A_NAPI_IFINDEX,
            NapiAttr::Pid(_) => NETDEV_A_NAPI_PID,
            NapiAttr::Other(nla) => nla.kind(),
        }
    }

    fn emit_value(&self, buffer: &mut [u8]) {
        match self {
            NapiAttr::Ifindex(v) | NapiAttr::Pid(v) => emit_u32(buffer, *v).expect("4-byte value"),
            NapiAttr::Other(nla) => nla.emit_value(buffer),
        }
    }
}

impl<'a> Parseable<NlaBuffer<&'a [u8]>> for NapiAttr {
    fn parse(nla: &NlaBuffer<&'a [u8]>) -> Result<Self, DecodeError> {
        let v = nla.value();
        Ok(match nla.kind() {
            NETDEV_A_NAPI_IFINDEX => NapiAttr::Ifindex(parse_u32(v)?),
            NETDEV_A_NAPI_PID => NapiAttr::Pid(parse_u32(v)?),
            kind => NapiAttr::Other(DefaultNla::new(kind, v.to_vec())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_generic::GenlMessage;

    /// A netlink attribute as the kernel lays it out: length, type,
    /// value, padding to 4 bytes.
    fn nla(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut v = ((4 + value.len()) as u16).to_ne_bytes().to_vec();
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(value);
        v.resize(v.len().next_multiple_of(4), 0);
        v
    }

    #[test]
    fn dev_get_request_bytes() {
        let mut msg = GenlMessage::from_payload(NetdevMessage::DevGet(vec![DevAttr::Ifindex(7)]));
        msg.set_resolved_family_id(0x1d);
        let mut buf = vec![0; msg.buffer_len()];
        msg.emit(&mut buf);
        let mut want = vec![NETDEV_CMD_DEV_GET, 1, 0, 0];
        want.extend(nla(1, &7u32.to_ne_bytes()));
        assert_eq!(buf, want);
        assert_eq!(msg.family_id(), 0x1d);
    }

    #[test]
    fn dev_get_answer_decodes() {
        // ifindex 7, the pad attribute the kernel puts before a u64, then
        // xdp-features basic | redirect | ndo-xmit (0b111).
        let mut body = nla(1, &7u32.to_ne_bytes());
        body.extend(nla(2, &[]));
        body.extend(nla(3, &7u64.to_ne_bytes()));
        let header = GenlHeader {
            cmd: NETDEV_CMD_DEV_GET,
            version: 1,
        };
        let msg = NetdevMessage::parse_with_param(&body, header).unwrap();
        assert_eq!(
            msg,
            NetdevMessage::DevGet(vec![
                DevAttr::Ifindex(7),
                DevAttr::Other(DefaultNla::new(2, vec![])),
                DevAttr::XdpFeatures(7),
            ])
        );
    }

    #[test]
    fn napi_answer_decodes_with_its_own_attribute_set() {
        // Type 3 is xdp-features in the dev set but irq in the napi set.
        let mut body = nla(1, &4u32.to_ne_bytes());
        body.extend(nla(3, &33u32.to_ne_bytes()));
        body.extend(nla(4, &1234u32.to_ne_bytes()));
        let header = GenlHeader {
            cmd: NETDEV_CMD_NAPI_GET,
            version: 1,
        };
        let msg = NetdevMessage::parse_with_param(&body, header).unwrap();
        assert_eq!(
            msg,
            NetdevMessage::NapiGet(vec![
                NapiAttr::Ifindex(4),
                NapiAttr::Other(DefaultNla::new(3, 33u32.to_ne_bytes().to_vec())),
                NapiAttr::Pid(1234),
            ])
        );
    }

    #[test]
    fn bad_answers_are_errors() {
        let header = GenlHeader {
            cmd: NETDEV_CMD_DEV_GET,
            version: 1,
        };
        // xdp-features must be 8 bytes.
        let short = nla(3, &7u32.to_ne_bytes());
        assert!(NetdevMessage::parse_with_param(&short, header).is_err());
        // An attribute longer than the buffer.
        let truncated = &nla(1, &7u32.to_ne_bytes())[..6];
        assert!(NetdevMessage::parse_with_param(truncated, header).is_err());
        let unknown = GenlHeader {
            cmd: 99,
            version: 1,
        };
        assert!(NetdevMessage::parse_with_param(&[], unknown).is_err());
    }
}
