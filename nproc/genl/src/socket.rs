//! The generic netlink socket: family resolution, one request, its replies.

use netlink_packet_core::{
    DoneBuffer, ErrorBuffer, NLMSG_DONE, NLMSG_ERROR, NLM_F_ACK_TLVS, NLM_F_DUMP, NLM_F_MULTIPART,
    NLM_F_REQUEST,
};
use netlink_sys::protocols::NETLINK_GENERIC;
use netlink_sys::{Socket, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use crate::attrs::Attrs;
use crate::decode::extack_message;
use crate::nlmsg::Nlmsgs;
use crate::Error;

/// The kernel sends dump chunks of up to 32 KiB (and more when the reader
/// offers more); 64 KiB never truncates one.
const RECV_BUF: usize = 64 * 1024;

/// errno values of socket(2) on a kernel without (generic) netlink.
const EPROTONOSUPPORT: i32 = 93;
const EAFNOSUPPORT: i32 = 97;

/// `NLMSG_HDRLEN`: length, type, flags, sequence number, port id.
const NLMSG_HDRLEN: usize = 16;
/// The genl header: cmd, version, reserved.
const GENL_HDRLEN: usize = 4;
/// `NLA_HDRLEN`.
const NLA_HDRLEN: usize = 4;

/// The generic netlink controller (include/uapi/linux/genetlink.h):
/// `GENL_ID_CTRL`, `CTRL_CMD_GETFAMILY`, its version (`genl_ctrl`'s) and
/// the attributes a family lookup sends and reads.
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_VERSION: u8 = 2;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_VERSION: u16 = 3;

/// One generic netlink request, as the kernel reads it: `nlmsghdr`,
/// `genlmsghdr`, then each attribute (`nlattr`, value, zeroes up to a
/// multiple of 4). The port id is left 0: the kernel knows the sender.
/// `None` when an attribute does not fit `nla_len`.
fn encode_request(
    family: u16,
    flags: u16,
    seq: u32,
    (cmd, version): (u8, u8),
    attrs: &[(u16, &[u8])],
) -> Option<Vec<u8>> {
    let mut m = Vec::with_capacity(64);
    m.extend_from_slice(&[0; NLMSG_HDRLEN]);
    m.extend_from_slice(&[cmd, version, 0, 0]);
    for (kind, value) in attrs {
        let nla_len = u16::try_from(NLA_HDRLEN + value.len()).ok()?;
        m.extend_from_slice(&nla_len.to_ne_bytes());
        m.extend_from_slice(&kind.to_ne_bytes());
        m.extend_from_slice(value);
        m.resize(m.len().next_multiple_of(4), 0);
    }
    let len = u32::try_from(m.len()).ok()?;
    m[0..4].copy_from_slice(&len.to_ne_bytes());
    m[4..6].copy_from_slice(&family.to_ne_bytes());
    m[6..8].copy_from_slice(&flags.to_ne_bytes());
    m[8..12].copy_from_slice(&seq.to_ne_bytes());
    Some(m)
}

/// What a request's caller is handed for each reply message: its type and
/// its payload.
type OnMessage<'a> = dyn FnMut(u16, &[u8]) -> Result<(), Error> + 'a;

/// A connected generic netlink socket and the resolved family id.
pub(crate) struct GenlSocket {
    sock: Socket,
    family_id: u16,
    seq: u32,
    buf: Vec<u8>,
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |err| Error::Io { what, err }
}

impl GenlSocket {
    /// Opens the socket and resolves `family`: its id and version.
    pub(crate) fn open(family: &str) -> Result<(Self, u32), Error> {
        let mut sock = Socket::new(NETLINK_GENERIC).map_err(|e| {
            // A kernel without generic netlink has no nproc either.
            if matches!(e.raw_os_error(), Some(EPROTONOSUPPORT | EAFNOSUPPORT)) {
                Error::NoFamily
            } else {
                Error::Io {
                    what: "socket(AF_NETLINK, NETLINK_GENERIC)",
                    err: e,
                }
            }
        })?;
        sock.bind_auto().map_err(io("bind(netlink)"))?;
        sock.connect(&SocketAddr::new(0, 0))
            .map_err(io("connect(netlink)"))?;
        // Error messages carry the kernel's extack text, not our request.
        sock.set_ext_ack(true)
            .map_err(io("setsockopt(NETLINK_EXT_ACK)"))?;
        sock.set_cap_ack(true)
            .map_err(io("setsockopt(NETLINK_CAP_ACK)"))?;
        let mut s = Self {
            sock,
            family_id: 0,
            seq: 0,
            buf: Vec::with_capacity(RECV_BUF),
        };
        let version = s.resolve(family)?;
        Ok((s, version))
    }

    /// Takes over `fd`, a generic netlink socket set up by
    /// [`GenlSocket::open`] (in this process or another) whose family id
    /// is `family_id`.
    pub(crate) fn from_fd(fd: OwnedFd, family_id: u16) -> Self {
        // SAFETY: `fd` is an owned descriptor, given up to the socket.
        let sock = unsafe { Socket::from_raw_fd(fd.into_raw_fd()) };
        Self {
            sock,
            family_id,
            seq: 0,
            buf: Vec::with_capacity(RECV_BUF),
        }
    }

    /// The socket's descriptor.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// The resolved family id.
    pub(crate) fn family_id(&self) -> u16 {
        self.family_id
    }

    /// Asks the controller for `family` (`CTRL_CMD_GETFAMILY`) and keeps
    /// its id; returns its version. The reply is read with this crate's
    /// attribute walker for the two attributes used: it also lists the
    /// family's operations and policies, which a full decode (such as
    /// `netlink-packet-generic`'s `GenlCtrl`) would turn into owned values
    /// at every start of `nps`.
    fn resolve(&mut self, family: &str) -> Result<u32, Error> {
        let mut name = Vec::with_capacity(family.len() + 1);
        name.extend_from_slice(family.as_bytes());
        name.push(0);
        let (mut id, mut version) = (None, 0);
        let what = "CTRL_CMD_GETFAMILY";
        self.exchange(
            GENL_ID_CTRL,
            (CTRL_CMD_GETFAMILY, CTRL_VERSION),
            &[(CTRL_ATTR_FAMILY_NAME, &name)],
            false,
            what,
            &mut |attrs| {
                for a in Attrs::new(attrs, what) {
                    let a = a?;
                    match (a.kind, a.value) {
                        (CTRL_ATTR_FAMILY_ID, &[a, b]) => id = Some(u16::from_ne_bytes([a, b])),
                        (CTRL_ATTR_VERSION, &[a, b, c, d]) => {
                            version = u32::from_ne_bytes([a, b, c, d])
                        }
                        (CTRL_ATTR_FAMILY_ID | CTRL_ATTR_VERSION, v) => {
                            return Err(Error::Decode(format!(
                                "{what}: attribute {} of {} bytes",
                                a.kind,
                                v.len()
                            )))
                        }
                        _ => {}
                    }
                }
                Ok(())
            },
        )
        .map_err(|e| match e {
            // The controller answers ENOENT for a family it does not know.
            Error::Kernel { errno: 2, .. } => Error::NoFamily,
            e => e,
        })?;
        self.family_id = id.ok_or_else(|| Error::Decode(format!("{what}: no family id")))?;
        Ok(version)
    }

    /// Sends `cmd` with `attrs` (a dump when `dump`) and calls `on_payload`
    /// with the attributes of every reply message.
    ///
    /// The callbacks here and below are `dyn`: one copy of the receive
    /// loop serves the family lookup and every request, where generic ones
    /// would compile (and a run of `nps` execute) a copy per caller. An
    /// indirect call per message costs less than that code at every start.
    pub(crate) fn request(
        &mut self,
        cmd: u8,
        attrs: &[(u16, Vec<u8>)],
        dump: bool,
        name: &'static str,
        on_payload: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let seq = self.send_only(cmd, attrs, dump, name)?;
        self.recv_family(seq, name, on_payload)
    }

    /// Sends `cmd` at `version` to `family` with `attrs` (a dump when
    /// `dump`) and calls `on_payload` with the attributes of every reply
    /// message, which must come from that family.
    fn exchange(
        &mut self,
        family: u16,
        cmd: (u8, u8),
        attrs: &[(u16, &[u8])],
        dump: bool,
        name: &'static str,
        on_payload: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let seq = self.send_request(family, cmd, attrs, dump, name)?;
        self.recv_payloads(family, seq, name, on_payload)
    }

    /// Sends `cmd` at `version` to `family` with `attrs` (a dump when
    /// `dump`); returns the request's sequence number.
    fn send_request(
        &mut self,
        family: u16,
        cmd: (u8, u8),
        attrs: &[(u16, &[u8])],
        dump: bool,
        name: &'static str,
    ) -> Result<u32, Error> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let flags = NLM_F_REQUEST | if dump { NLM_F_DUMP } else { 0 };
        let tx = encode_request(family, flags, seq, cmd, attrs)
            .ok_or_else(|| Error::Decode(format!("{name}: an attribute too long to send")))?;
        self.sock.send(&tx, 0).map_err(io("send(netlink)"))?;
        Ok(seq)
    }

    /// Sends a request of this socket's family without reading the
    /// replies: [`GenlSocket::recv_family`] reads them, perhaps in another
    /// process the socket was handed to.
    pub(crate) fn send_only(
        &mut self,
        cmd: u8,
        attrs: &[(u16, Vec<u8>)],
        dump: bool,
        name: &'static str,
    ) -> Result<u32, Error> {
        let attrs: Vec<(u16, &[u8])> = attrs.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        self.send_request(
            self.family_id,
            (cmd, nproc_proto::FAMILY_VERSION),
            &attrs,
            dump,
            name,
        )
    }

    /// Reads the replies of this socket's family to request `seq`.
    pub(crate) fn recv_family(
        &mut self,
        seq: u32,
        name: &'static str,
        on_payload: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.recv_payloads(self.family_id, seq, name, on_payload)
    }

    /// Reads the replies to request `seq`, which must come from `family`,
    /// and calls `on_payload` with the attributes of each.
    fn recv_payloads(
        &mut self,
        family: u16,
        seq: u32,
        name: &'static str,
        on_payload: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.recv_replies(seq, name, &mut |kind, payload| {
            if kind != family {
                return Err(Error::Decode(format!(
                    "{name}: message of type {kind} in the reply"
                )));
            }
            let attrs = payload
                .get(GENL_HDRLEN..)
                .ok_or_else(|| Error::Decode(format!("{name}: short genl header")))?;
            on_payload(attrs)
        })
    }

    /// Reads the replies to request `seq` until its end: `NLMSG_DONE` for a
    /// dump, the one reply otherwise (or an `NLMSG_ERROR`). Calls
    /// `on_message` with the type and the payload of each other message.
    fn recv_replies(
        &mut self,
        seq: u32,
        name: &'static str,
        on_message: &mut OnMessage<'_>,
    ) -> Result<(), Error> {
        loop {
            self.buf.clear();
            let n = self
                .sock
                .recv(&mut self.buf, 0)
                .map_err(io("recv(netlink)"))?;
            for nl in Nlmsgs::new(self.buf.get(..n).unwrap_or_default(), name) {
                let nl = nl?;
                if nl.seq != seq {
                    continue; // a late answer to an earlier request
                }
                match nl.kind {
                    NLMSG_DONE => {
                        let done = DoneBuffer::new_checked(nl.payload)
                            .map_err(|e| Error::Decode(format!("{name}: {e}")))?;
                        if done.code() < 0 {
                            let msg = extack_message(done.extended_ack());
                            return Err(Error::from_kernel(name, done.code(), msg));
                        }
                        return Ok(());
                    }
                    NLMSG_ERROR => {
                        let err = ErrorBuffer::new_checked(nl.payload)
                            .map_err(|e| Error::Decode(format!("{name}: {e}")))?;
                        let code = err.code().map_or(0, |c| c.get());
                        if code == 0 {
                            return Ok(()); // an ACK
                        }
                        // With NETLINK_CAP_ACK the payload is our request's
                        // header only, then the extack attributes.
                        let msg = if nl.flags & NLM_F_ACK_TLVS != 0 {
                            extack_message(err.payload().get(16..).unwrap_or_default())
                        } else {
                            None
                        };
                        return Err(Error::from_kernel(name, code, msg));
                    }
                    _ => {
                        on_message(nl.kind, nl.payload)?;
                        if nl.flags & NLM_F_MULTIPART == 0 {
                            return Ok(()); // the one reply of a do request
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_core::{DefaultNla, Emitable, NetlinkMessage};
    use netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
    use netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};
    use netlink_packet_generic::{GenlFamily, GenlMessage};

    /// `msg` as the rust-netlink crates serialize it.
    fn reference<T>(mut msg: NetlinkMessage<T>, flags: u16, seq: u32) -> Vec<u8>
    where
        T: netlink_packet_core::NetlinkSerializable + std::fmt::Debug,
    {
        msg.header.flags = flags;
        msg.header.sequence_number = seq;
        msg.finalize();
        let mut buf = vec![0; msg.buffer_len()];
        msg.serialize(&mut buf);
        buf
    }

    #[test]
    fn a_family_lookup_is_the_controllers_own() {
        let mut genl = GenlMessage::from_payload(GenlCtrl {
            cmd: GenlCtrlCmd::GetFamily,
            nlas: vec![GenlCtrlAttrs::FamilyName("nproc".into())],
        });
        genl.finalize();
        let want = reference(NetlinkMessage::from(genl), NLM_F_REQUEST, 7);
        let got = encode_request(
            GENL_ID_CTRL,
            NLM_F_REQUEST,
            7,
            (CTRL_CMD_GETFAMILY, CTRL_VERSION),
            &[(CTRL_ATTR_FAMILY_NAME, b"nproc\0")],
        );
        assert_eq!(got, Some(want));
    }

    #[derive(Debug)]
    struct Raw {
        cmd: u8,
        nlas: Vec<DefaultNla>,
    }

    impl GenlFamily for Raw {
        fn family_name() -> &'static str {
            "nproc"
        }
        fn command(&self) -> u8 {
            self.cmd
        }
        fn version(&self) -> u8 {
            1
        }
    }

    impl Emitable for Raw {
        fn buffer_len(&self) -> usize {
            self.nlas.as_slice().buffer_len()
        }
        fn emit(&self, buffer: &mut [u8]) {
            self.nlas.as_slice().emit(buffer)
        }
    }

    #[test]
    fn requests_match_the_generic_builders_padding_included() {
        let attrs: [(u16, &[u8]); 3] = [
            (1, &[0xff, 0, 0, 0, 1, 0, 0, 0]),
            (2, &[1, 0, 0, 0]),
            (3, b"ab"),
        ];
        let mut genl = GenlMessage::from_payload(Raw {
            cmd: 2,
            nlas: attrs
                .iter()
                .map(|(k, v)| DefaultNla::new(*k, v.to_vec()))
                .collect(),
        });
        genl.set_resolved_family_id(0x1d);
        genl.finalize();
        let flags = NLM_F_REQUEST | NLM_F_DUMP;
        let want = reference(NetlinkMessage::from(genl), flags, 0xfffe);
        assert_eq!(
            encode_request(0x1d, flags, 0xfffe, (2, 1), &attrs),
            Some(want)
        );
        assert_eq!(
            encode_request(0x1d, 0, 1, (2, 1), &[]).map(|m| m.len()),
            Some(20)
        );
    }

    #[test]
    fn an_attribute_longer_than_nla_len_is_refused() {
        let big = vec![0; usize::from(u16::MAX)];
        assert_eq!(encode_request(0x1d, 0, 1, (2, 1), &[(1, &big)]), None);
        let most = vec![0; usize::from(u16::MAX) - NLA_HDRLEN];
        assert!(encode_request(0x1d, 0, 1, (2, 1), &[(1, &most)]).is_some());
    }
}
