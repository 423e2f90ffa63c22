//! One netlink request and its answers, for the interface queries of
//! [`crate::iface`] and [`crate::xdpgen`].
//!
//! `netlink-sys` owns the socket; `netlink-packet-core` frames the messages
//! (header, flags, NLMSG_ERROR / NLMSG_DONE); the protocol crates
//! (`netlink-packet-route`, `netlink-packet-generic`) give the payload
//! types. A netlink socket belongs to the network namespace of the thread
//! that opens it, so a thread that called `setns(CLONE_NEWNET)` asks its new
//! namespace.

use std::fmt::Debug;
use std::io;

use netlink_packet_core::{
    DecodeError, NetlinkBuffer, NetlinkDeserializable, NetlinkHeader, NetlinkMessage,
    NetlinkPayload, NetlinkSerializable, NLM_F_ACK, NLM_F_REQUEST,
};
pub(crate) use netlink_sys::protocols::{NETLINK_GENERIC, NETLINK_ROUTE};

/// Why a request failed, so that each caller can word it.
#[derive(Debug)]
pub(crate) enum RequestError {
    Send(io::Error),
    Recv(io::Error),
    /// An answer that does not decode (the decoder's reason, which can
    /// quote whole attributes, is not kept: messages stay one line).
    Malformed,
    /// The kernel refused the request (NLMSG_ERROR with an errno).
    Kernel(io::Error),
}

impl From<RequestError> for io::Error {
    fn from(e: RequestError) -> io::Error {
        match e {
            RequestError::Send(e) | RequestError::Recv(e) | RequestError::Kernel(e) => e,
            RequestError::Malformed => io::Error::other("malformed netlink answer"),
        }
    }
}

/// A netlink socket of one protocol in the calling thread's namespace.
pub(crate) struct Socket(netlink_sys::Socket);

impl Socket {
    pub(crate) fn open(protocol: isize) -> io::Result<Socket> {
        let sock = netlink_sys::Socket::new(protocol)?;
        // Strict checking makes the kernel honour dump filters (the NAPI
        // dump's ifindex); older kernels ignore the option, which is fine.
        let _ = sock.set_netlink_get_strict_chk(true);
        Ok(Socket(sock))
    }

    /// Sends `payload` as one request (NLM_F_REQUEST | NLM_F_ACK | `flags`)
    /// and collects the payloads of its answers until the ack, the end of a
    /// dump, or an error.
    pub(crate) fn request<I>(&self, payload: I, flags: u16) -> Result<Vec<I>, RequestError>
    where
        I: NetlinkSerializable + NetlinkDeserializable<Error = DecodeError> + Debug,
    {
        self.exchange(payload, flags).map_err(|(e, _)| e)
    }

    /// [`Socket::request`] that also keeps the kernel's own words for a
    /// refusal (its extended ack message, such as "Peer MTU is too large to
    /// set XDP"), when it gives some.
    pub(crate) fn request_explained<I>(
        &self,
        payload: I,
        flags: u16,
    ) -> Result<Vec<I>, (RequestError, Option<String>)>
    where
        I: NetlinkSerializable + NetlinkDeserializable<Error = DecodeError> + Debug,
    {
        // Older kernels refuse the option; their errors then have no text.
        let _ = self.0.set_ext_ack(true);
        self.exchange(payload, flags)
    }

    fn exchange<I>(&self, payload: I, flags: u16) -> Result<Vec<I>, (RequestError, Option<String>)>
    where
        I: NetlinkSerializable + NetlinkDeserializable<Error = DecodeError> + Debug,
    {
        const SEQ: u32 = 0x706b_746c;
        let bare = |e| (e, None);
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_ACK | flags;
        header.sequence_number = SEQ;
        let mut msg = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(payload));
        msg.finalize();
        let mut buf = vec![0u8; msg.buffer_len()];
        msg.serialize(&mut buf);
        self.0
            .send(&buf, 0)
            .map_err(|e| bare(RequestError::Send(e)))?;

        let mut out = Vec::new();
        loop {
            let datagram = match self.0.recv_from_full() {
                Ok((datagram, _)) => datagram,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(bare(RequestError::Recv(e))),
            };
            let mut rest = &datagram[..];
            while !rest.is_empty() {
                let frame =
                    NetlinkBuffer::new_checked(rest).map_err(|_| bare(RequestError::Malformed))?;
                let len = frame.length() as usize;
                let seq = frame.sequence_number();
                if seq == SEQ {
                    let answer = NetlinkMessage::<I>::deserialize(&rest[..len])
                        .map_err(|_| bare(RequestError::Malformed))?;
                    match answer.payload {
                        NetlinkPayload::InnerMessage(m) => out.push(m),
                        NetlinkPayload::Done(_) => return Ok(out),
                        NetlinkPayload::Error(e) => {
                            return match e.code {
                                None => Ok(out),
                                Some(code) => Err((
                                    RequestError::Kernel(io::Error::from_raw_os_error(-code.get())),
                                    extack_message(answer.header.flags, &e.header),
                                )),
                            };
                        }
                        _ => {}
                    }
                }
                rest = &rest[((len + 3) & !3).min(rest.len())..];
            }
        }
    }
}

/// The extended ack's message (NLMSGERR_ATTR_MSG) in the payload of an
/// NLMSG_ERROR after its error code: the request's header, the request's
/// own payload unless the kernel capped it, then attributes.
fn extack_message(flags: u16, after_code: &[u8]) -> Option<String> {
    const NLM_F_CAPPED: u16 = 0x100;
    const NLM_F_ACK_TLVS: u16 = 0x200;
    const NLMSGERR_ATTR_MSG: u16 = 1;
    const HEADER: usize = 16;
    if flags & NLM_F_ACK_TLVS == 0 || after_code.len() < HEADER {
        return None;
    }
    let skip = if flags & NLM_F_CAPPED != 0 {
        HEADER
    } else {
        let len = u32::from_ne_bytes(after_code[0..4].try_into().ok()?) as usize;
        (len + 3) & !3
    };
    let mut attrs = after_code.get(skip..)?;
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let kind = u16::from_ne_bytes([attrs[2], attrs[3]]) & 0x3fff;
        if len < 4 || len > attrs.len() {
            return None;
        }
        if kind == NLMSGERR_ATTR_MSG {
            let text = &attrs[4..len];
            let text = text.split(|&b| b == 0).next().unwrap_or_default();
            let text = String::from_utf8_lossy(text).trim().to_string();
            return (!text.is_empty()).then_some(text);
        }
        attrs = &attrs[((len + 3) & !3).min(attrs.len())..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_route::link::{LinkAttribute, LinkMessage};
    use netlink_packet_route::RouteNetlinkMessage;

    #[test]
    fn loopback_answers_in_this_namespace() {
        let sock = Socket::open(NETLINK_ROUTE).unwrap();
        let mut get = LinkMessage::default();
        get.header.index = 1;
        let answers = sock.request(RouteNetlinkMessage::GetLink(get), 0).unwrap();
        let [RouteNetlinkMessage::NewLink(lo)] = answers.as_slice() else {
            panic!("{answers:?}");
        };
        assert_eq!(lo.header.index, 1);
        assert!(lo
            .attributes
            .contains(&LinkAttribute::IfName("lo".to_string())));
    }

    #[test]
    fn kernel_refusals_carry_the_errno() {
        let sock = Socket::open(NETLINK_ROUTE).unwrap();
        let mut get = LinkMessage::default();
        get.header.index = u32::MAX >> 1; // no such ifindex
        let e = sock
            .request(RouteNetlinkMessage::GetLink(get), 0)
            .unwrap_err();
        let RequestError::Kernel(e) = e else {
            panic!("{e:?}");
        };
        assert_eq!(e.raw_os_error(), Some(libc::ENODEV));
    }

    #[test]
    fn extended_acks_give_the_kernels_words() {
        // An NLMSG_ERROR's payload after the code: a capped request header
        // (16 bytes) and one NLMSGERR_ATTR_MSG attribute, as the kernel
        // writes them.
        let mut after = vec![0u8; 16];
        after[0..4].copy_from_slice(&40u32.to_ne_bytes());
        let text = b"Peer MTU is too large to set XDP\0";
        let len = (4 + text.len()) as u16;
        after.extend_from_slice(&len.to_ne_bytes());
        after.extend_from_slice(&1u16.to_ne_bytes());
        after.extend_from_slice(text);
        assert_eq!(
            extack_message(0x300, &after).as_deref(),
            Some("Peer MTU is too large to set XDP")
        );
        // Without the TLV flag there is nothing to read.
        assert_eq!(extack_message(0x100, &after), None);
        // Not capped: the request's 40 bytes come first.
        let mut full = vec![0u8; 40];
        full[0..4].copy_from_slice(&40u32.to_ne_bytes());
        full.extend_from_slice(&after[16..]);
        assert_eq!(
            extack_message(0x200, &full).as_deref(),
            Some("Peer MTU is too large to set XDP")
        );
    }
}
