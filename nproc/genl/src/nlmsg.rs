//! Walking the netlink messages (`struct nlmsghdr`,
//! include/uapi/linux/netlink.h) of one `recv()`.
//!
//! The rules are those of `netlink_packet_core::NetlinkBuffer::new_checked`,
//! which this replaces for reading: a header of 16 bytes (length, type,
//! flags, sequence number, port id), a length of at least 16 that fits in
//! what is left, the payload up to that length, the next message at the
//! length rounded up to 4 (or the end of the buffer), and nothing after
//! the first malformed message. The difference is cost: a dump is one
//! message per task, and the generic buffer's accessors each parse their
//! field out of line through a checked slice (and `payload()` reads the
//! length again), about 175 instructions per message in QEMU's exec log
//! of `nps -eo`, 3% of all it executes per task; this is one bounds check
//! and five loads.

use crate::Error;

/// `NLMSG_HDRLEN`.
const NLMSG_HDRLEN: usize = 16;

/// One message: the header fields a reader acts on, and its payload,
/// borrowed from the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Nlmsg<'a> {
    /// `nlmsg_type`.
    pub(crate) kind: u16,
    /// `nlmsg_flags`.
    pub(crate) flags: u16,
    /// `nlmsg_seq`.
    pub(crate) seq: u32,
    /// The `nlmsg_len - NLMSG_HDRLEN` bytes after the header.
    pub(crate) payload: &'a [u8],
}

/// The messages of a buffer, in order; a malformed one is an
/// [`Error::Decode`] naming `what`, and ends the walk.
pub(crate) struct Nlmsgs<'a> {
    rest: &'a [u8],
    what: &'a str,
}

impl<'a> Nlmsgs<'a> {
    /// The messages in `buf`, which `what` names in errors.
    pub(crate) fn new(buf: &'a [u8], what: &'a str) -> Self {
        Nlmsgs { rest: buf, what }
    }

    #[cold]
    fn fail(&mut self, msg: std::fmt::Arguments<'_>) -> Option<Result<Nlmsg<'a>, Error>> {
        self.rest = &[];
        Some(Err(Error::Decode(format!("{}: {msg}", self.what))))
    }
}

impl<'a> Iterator for Nlmsgs<'a> {
    type Item = Result<Nlmsg<'a>, Error>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest;
        if rest.is_empty() {
            return None;
        }
        let Some(h) = rest.first_chunk::<NLMSG_HDRLEN>() else {
            let n = rest.len();
            return self.fail(format_args!(
                "{n} trailing bytes, less than a message header"
            ));
        };
        let [l0, l1, l2, l3, t0, t1, f0, f1, s0, s1, s2, s3, ..] = *h;
        let len = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
        if len < NLMSG_HDRLEN {
            return self.fail(format_args!("message of length {len}"));
        }
        let Some(payload) = rest.get(NLMSG_HDRLEN..len) else {
            let n = rest.len();
            return self.fail(format_args!(
                "message of length {len} in the last {n} bytes"
            ));
        };
        self.rest = rest.get(len.next_multiple_of(4)..).unwrap_or_default();
        Some(Ok(Nlmsg {
            kind: u16::from_ne_bytes([t0, t1]),
            flags: u16::from_ne_bytes([f0, f1]),
            seq: u32::from_ne_bytes([s0, s1, s2, s3]),
            payload,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_core::NetlinkBuffer;

    /// A message as read: type, flags, sequence number, payload.
    type Read = (u16, u16, u32, Vec<u8>);

    fn msg(kind: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut v = ((NLMSG_HDRLEN + payload.len()) as u32)
            .to_ne_bytes()
            .to_vec();
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(&flags.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&77u32.to_ne_bytes());
        v.extend_from_slice(payload);
        v.resize(v.len().next_multiple_of(4), 0);
        v
    }

    /// What `netlink_packet_core` reads from `buf`, walked as this module
    /// walks it; `Err(())` where `new_checked` refuses.
    fn reference(buf: &[u8]) -> Result<Vec<Read>, ()> {
        let mut out = Vec::new();
        let mut rest = buf;
        while !rest.is_empty() {
            let nl = NetlinkBuffer::new_checked(rest).map_err(|_| ())?;
            let len = nl.length() as usize;
            out.push((
                nl.message_type(),
                nl.flags(),
                nl.sequence_number(),
                nl.payload().to_vec(),
            ));
            rest = rest.get(len.next_multiple_of(4)..).unwrap_or_default();
        }
        Ok(out)
    }

    fn walk(buf: &[u8]) -> Result<Vec<Read>, String> {
        Nlmsgs::new(buf, "test")
            .map(|m| m.map(|m| (m.kind, m.flags, m.seq, m.payload.to_vec())))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_what_the_generic_buffer_reads() {
        let mut buf = msg(0x1d, 2, 9, b"abcde");
        buf.extend(msg(3, 0, 10, &[]));
        buf.extend(msg(2, 0x100, 11, &[1, 2, 3, 4]));
        let got = walk(&buf).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (0x1d, 2, 9, b"abcde".to_vec()));
        assert_eq!(Ok(got), reference(&buf));
        // The last message's padding may be missing.
        let buf = msg(1, 0, 1, b"abc");
        assert_eq!(walk(&buf[..19]), Ok(reference(&buf[..19]).unwrap()));
    }

    #[test]
    fn a_malformed_message_is_an_error_and_ends_the_walk() {
        let good = msg(1, 0, 1, b"abcd");
        // A length past the end.
        let mut buf = good.clone();
        buf.extend(msg(2, 0, 2, b"abcdefgh"));
        buf.truncate(buf.len() - 1);
        let e = walk(&buf).unwrap_err();
        assert!(
            e.contains("test: message of length 24 in the last 23"),
            "{e}"
        );
        assert!(reference(&buf).is_err());
        // A length below the header.
        let mut bad = good.clone();
        bad.extend(msg(2, 0, 2, b""));
        bad[20..24].copy_from_slice(&8u32.to_ne_bytes());
        assert!(walk(&bad).unwrap_err().contains("message of length 8"));
        assert!(reference(&bad).is_err());
        // Bytes that are not a header.
        let mut buf = good.clone();
        buf.extend([1, 2, 3]);
        assert!(walk(&buf).unwrap_err().contains("3 trailing bytes"));
        assert!(reference(&buf).is_err());
        // Nothing after the error.
        let mut it = Nlmsgs::new(&bad[20..], "t");
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
    }
}
