//! The generic netlink socket: family resolution, one request, its replies.

use netlink_packet_core::{
    DefaultNla, DoneBuffer, Emitable, ErrorBuffer, NetlinkBuffer, NetlinkMessage, NetlinkPayload,
    NLMSG_DONE, NLMSG_ERROR, NLM_F_ACK_TLVS, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
use netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};
use netlink_packet_generic::{GenlFamily, GenlMessage};
use netlink_sys::protocols::NETLINK_GENERIC;
use netlink_sys::{Socket, SocketAddr};

use crate::decode::extack_message;
use crate::Error;

/// The kernel sends dump chunks of up to 32 KiB (and more when the reader
/// offers more); 64 KiB never truncates one.
const RECV_BUF: usize = 64 * 1024;

/// errno values of socket(2) on a kernel without (generic) netlink.
const EPROTONOSUPPORT: i32 = 93;
const EAFNOSUPPORT: i32 = 97;

/// The genl header: cmd, version, reserved.
const GENL_HDRLEN: usize = 4;

/// A request to the nproc family: its command and attributes.
#[derive(Debug)]
struct NprocRequest {
    cmd: u8,
    attrs: Vec<DefaultNla>,
}

impl GenlFamily for NprocRequest {
    fn family_name() -> &'static str {
        nproc_proto::FAMILY_NAME
    }
    fn command(&self) -> u8 {
        self.cmd
    }
    fn version(&self) -> u8 {
        nproc_proto::FAMILY_VERSION
    }
}

impl Emitable for NprocRequest {
    fn buffer_len(&self) -> usize {
        self.attrs.as_slice().buffer_len()
    }
    fn emit(&self, buffer: &mut [u8]) {
        self.attrs.as_slice().emit(buffer)
    }
}

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

    /// The resolved family id.
    pub(crate) fn family_id(&self) -> u16 {
        self.family_id
    }

    fn resolve(&mut self, family: &str) -> Result<u32, Error> {
        let mut genl = GenlMessage::from_payload(GenlCtrl {
            cmd: GenlCtrlCmd::GetFamily,
            nlas: vec![GenlCtrlAttrs::FamilyName(family.into())],
        });
        genl.finalize();
        let mut msg = NetlinkMessage::from(genl);
        msg.header.flags = NLM_F_REQUEST;
        let seq = self.send(msg)?;
        let (mut id, mut version) = (None, 0);
        self.recv_replies(seq, "CTRL_CMD_GETFAMILY", |frame| {
            let m = NetlinkMessage::<GenlMessage<GenlCtrl>>::deserialize(frame)
                .map_err(|e| Error::Decode(format!("CTRL_CMD_GETFAMILY: {e}")))?;
            if let NetlinkPayload::InnerMessage(g) = m.payload {
                for nla in g.payload.nlas {
                    match nla {
                        GenlCtrlAttrs::FamilyId(v) => id = Some(v),
                        GenlCtrlAttrs::Version(v) => version = v,
                        _ => {}
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| match e {
            // The controller answers ENOENT for a family it does not know.
            Error::Kernel { errno: 2, .. } => Error::NoFamily,
            e => e,
        })?;
        self.family_id =
            id.ok_or_else(|| Error::Decode("CTRL_CMD_GETFAMILY: no family id".into()))?;
        Ok(version)
    }

    fn send<T>(&mut self, mut msg: NetlinkMessage<T>) -> Result<u32, Error>
    where
        T: netlink_packet_core::NetlinkSerializable + std::fmt::Debug,
    {
        self.seq = self.seq.wrapping_add(1);
        msg.header.sequence_number = self.seq;
        msg.finalize();
        let mut tx = vec![0u8; msg.buffer_len()];
        msg.serialize(&mut tx);
        self.sock.send(&tx, 0).map_err(io("send(netlink)"))?;
        Ok(self.seq)
    }

    /// Sends `cmd` with `attrs` (a dump when `dump`) and calls `on_payload`
    /// with the attributes of every reply message.
    pub(crate) fn request<F>(
        &mut self,
        cmd: u8,
        attrs: &[(u16, Vec<u8>)],
        dump: bool,
        name: &'static str,
        mut on_payload: F,
    ) -> Result<(), Error>
    where
        F: FnMut(&[u8]) -> Result<(), Error>,
    {
        let attrs = attrs
            .iter()
            .map(|(k, v)| DefaultNla::new(*k, v.clone()))
            .collect();
        let mut genl = GenlMessage::from_payload(NprocRequest { cmd, attrs });
        genl.set_resolved_family_id(self.family_id);
        genl.finalize();
        let mut msg = NetlinkMessage::from(genl);
        msg.header.flags = NLM_F_REQUEST | if dump { NLM_F_DUMP } else { 0 };
        let seq = self.send(msg)?;
        let family_id = self.family_id;
        self.recv_replies(seq, name, |frame| {
            let nl = NetlinkBuffer::new_checked(frame)
                .map_err(|e| Error::Decode(format!("{name}: {e}")))?;
            if nl.message_type() != family_id {
                return Err(Error::Decode(format!(
                    "{name}: message of type {} in the reply",
                    nl.message_type()
                )));
            }
            let payload = nl.payload();
            let attrs = payload
                .get(GENL_HDRLEN..)
                .ok_or_else(|| Error::Decode(format!("{name}: short genl header")))?;
            on_payload(attrs)
        })
    }

    /// Reads the replies to request `seq` until its end: `NLMSG_DONE` for a
    /// dump, the one reply otherwise (or an `NLMSG_ERROR`). Calls
    /// `on_frame` with each other message, whole.
    fn recv_replies<F>(
        &mut self,
        seq: u32,
        name: &'static str,
        mut on_frame: F,
    ) -> Result<(), Error>
    where
        F: FnMut(&[u8]) -> Result<(), Error>,
    {
        loop {
            self.buf.clear();
            let n = self
                .sock
                .recv(&mut self.buf, 0)
                .map_err(io("recv(netlink)"))?;
            let mut rest = self.buf.get(..n).unwrap_or_default();
            while !rest.is_empty() {
                let nl = NetlinkBuffer::new_checked(rest)
                    .map_err(|e| Error::Decode(format!("{name}: {e}")))?;
                let len = nl.length() as usize;
                // nlmsg_len is checked against the buffer by new_checked;
                // messages are 4-byte aligned.
                let frame = rest.get(..len).unwrap_or(rest);
                rest = rest.get(len.next_multiple_of(4)..).unwrap_or_default();
                if nl.sequence_number() != seq {
                    continue; // a late answer to an earlier request
                }
                match nl.message_type() {
                    NLMSG_DONE => {
                        let done = DoneBuffer::new_checked(nl.payload())
                            .map_err(|e| Error::Decode(format!("{name}: {e}")))?;
                        if done.code() < 0 {
                            let msg = extack_message(done.extended_ack());
                            return Err(Error::from_kernel(name, done.code(), msg));
                        }
                        return Ok(());
                    }
                    NLMSG_ERROR => {
                        let err = ErrorBuffer::new_checked(nl.payload())
                            .map_err(|e| Error::Decode(format!("{name}: {e}")))?;
                        let code = err.code().map_or(0, |c| c.get());
                        if code == 0 {
                            return Ok(()); // an ACK
                        }
                        // With NETLINK_CAP_ACK the payload is our request's
                        // header only, then the extack attributes.
                        let msg = if nl.flags() & NLM_F_ACK_TLVS != 0 {
                            extack_message(err.payload().get(16..).unwrap_or_default())
                        } else {
                            None
                        };
                        return Err(Error::from_kernel(name, code, msg));
                    }
                    _ => {
                        on_frame(frame)?;
                        if nl.flags() & netlink_packet_core::NLM_F_MULTIPART == 0 {
                            return Ok(()); // the one reply of a do request
                        }
                    }
                }
            }
        }
    }
}
