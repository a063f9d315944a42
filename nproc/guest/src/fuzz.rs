//! Random malformed messages: a seeded generator frames nproc requests
//! with random flags, commands, versions, attributes and lengths, each
//! carrying at least one defect the kernel must refuse (so "each gets an
//! error" is a property of every message, not of most):
//!
//! | kind          | defect                                              |
//! |---------------|-----------------------------------------------------|
//! | `command`     | a command id the family does not have               |
//! | `attribute`   | an attribute type 0 or above `attr::MAX`            |
//! | `do-dump`     | a dump-only command as a do, or the reverse         |
//! | `bitmap`      | a field bitmap of bad or no length, unknown bits    |
//! | `scope-pid`   | a scope out of range, or a scope/pid of bad length  |
//! | `truncated`   | `nlmsg_len` (and the datagram) cut inside the genl  |
//! |               | header or strictly inside an attribute              |
//! | `nla-len`     | an attribute whose `nla_len` is < 4 or overruns     |
//! | `dropped`     | `nlmsg_len` larger than the datagram                |
//!
//! The first seven must each get exactly one `NLMSG_ERROR` with a negative
//! code. `dropped` must get no answer at all: `netlink_rcv_skb()` drops a
//! datagram shorter than the length its header claims without a reply
//! (and `netlink_sendmsg()` refuses an empty one with `ENODATA`).
//! The kernel handles a request inside `sendmsg()`, so its answer is
//! queued when `send` returns and a non-blocking read sees it.
//!
//! Leaks: the active objects of the slab caches a netlink request
//! allocates from (`kmalloc-*`, `skbuff_*`) are summed from
//! /proc/slabinfo after a warm-up and again after the run (and a second
//! to let RCU-deferred frees finish); the growth must stay under one
//! object per 100 messages, far below the one-per-message a leak on any
//! path would show.

use netlink_packet_core::{NLMSG_ERROR, NLM_F_ACK, NLM_F_ACK_TLVS, NLM_F_DUMP, NLM_F_REQUEST};
use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};
use nproc_proto::{attr, BITMAP_WORDS_MAX, CMD_MAX, FIELD_ID_MAX};
use std::collections::BTreeMap;
use std::fs;
use std::time::Duration;

/// The kinds of defect, in the table's order.
pub const KINDS: [&str; 8] = [
    "command",
    "attribute",
    "do-dump",
    "bitmap",
    "scope-pid",
    "truncated",
    "nla-len",
    "dropped",
];
const TRUNCATED: usize = 5;
const DROPPED: usize = 7;

/// One generated message.
struct Msg {
    bytes: Vec<u8>,
    kind: usize,
}

fn nla(ty: u16, payload: &[u8]) -> Vec<u8> {
    let len = 4 + payload.len();
    let mut v = Vec::with_capacity(len.next_multiple_of(4));
    v.extend_from_slice(&(len as u16).to_ne_bytes());
    v.extend_from_slice(&ty.to_ne_bytes());
    v.extend_from_slice(payload);
    v.resize(len.next_multiple_of(4), 0);
    v
}

fn random_bytes(rng: &mut fastrand::Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.u8(..)).collect()
}

/// A payload length: the sizes validation cares about, or anything.
fn random_len(rng: &mut fastrand::Rng) -> usize {
    match rng.u8(..4) {
        0 => rng.usize(0..9),
        1 => *rng.choice(&[12, 16, 28, 32, 36, 64]).unwrap_or(&4),
        _ => rng.usize(0..300),
    }
}

/// A field bitmap of valid shape (1 to 8 words, known bits only, not
/// empty).
fn good_bitmap(rng: &mut fastrand::Rng) -> Vec<u8> {
    let words = rng.usize(1..=BITMAP_WORDS_MAX);
    let mut w = vec![0u32; words];
    for _ in 0..rng.usize(1..6) {
        let id = rng.u16(1..=FIELD_ID_MAX);
        let i = usize::from(id / 32);
        if w.len() <= i {
            w.resize(i + 1, 0);
        }
        w[i] |= 1 << (id % 32);
    }
    w.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// Random attributes of the request's own types (valid or not).
fn random_attrs(rng: &mut fastrand::Rng, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..rng.usize(0..=max) {
        let ty = rng.u16(attr::FIELDS..=attr::PID);
        let payload = match rng.u8(..3) {
            0 => good_bitmap(rng),
            1 => rng.u32(0..6).to_ne_bytes().to_vec(),
            _ => {
                let n = random_len(rng);
                random_bytes(rng, n)
            }
        };
        out.extend(nla(ty, &payload));
    }
    out
}

/// Frames a message; `attrs` is the genl payload after the genl header.
fn frame(rng: &mut fastrand::Rng, family: u16, cmd: u8, dump: bool, attrs: &[u8]) -> Vec<u8> {
    let len = 16 + 4 + attrs.len();
    // genl_header_check() refuses a non-zero reserved field and any flag
    // but request, ack, echo and the two dump bits together before the
    // family sees the message: set those rarely (1 in 16), so that most
    // messages reach the attribute and command checks behind them.
    let mut flags = NLM_F_REQUEST | NLM_F_ACK | if rng.bool() { 0x8 } else { 0 };
    if dump {
        flags |= NLM_F_DUMP;
    }
    if rng.u8(..16) == 0 {
        // atomic, the old append/create bits, or the root bit alone
        flags |= *rng.choice(&[0x10u16, 0x20, 0x100, 0x800]).unwrap_or(&0x10);
    }
    let reserved = if rng.u8(..16) == 0 { rng.u16(1..) } else { 0 };
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&(len as u32).to_ne_bytes());
    v.extend_from_slice(&family.to_ne_bytes());
    v.extend_from_slice(&flags.to_ne_bytes());
    v.extend_from_slice(&rng.u32(..).to_ne_bytes()); // seq, replaced later
    v.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel
    v.push(cmd);
    v.push(rng.u8(..3)); // version: genl does not check it
    v.extend_from_slice(&reserved.to_ne_bytes());
    v.extend_from_slice(attrs);
    v
}

/// Whether `cmd` is a dump-only command (GET_FIELDS, GET_TASKS).
fn is_dump_cmd(cmd: u8) -> bool {
    cmd == nproc_proto::Cmd::GetFields as u8 || cmd == nproc_proto::Cmd::GetTasks as u8
}

/// The right do/dump for a known command.
fn right_mode(cmd: u8) -> bool {
    is_dump_cmd(cmd)
}

fn gen(rng: &mut fastrand::Rng, family: u16) -> Msg {
    let kind = rng.usize(..KINDS.len());
    let tasks = nproc_proto::Cmd::GetTasks as u8;
    let bytes = match kind {
        0 => {
            let cmd = if rng.bool() { 0 } else { rng.u8(CMD_MAX + 1..) };
            let attrs = random_attrs(rng, 4);
            let dump = rng.bool();
            frame(rng, family, cmd, dump, &attrs)
        }
        1 => {
            let cmd = rng.u8(1..=CMD_MAX);
            let mut attrs = random_attrs(rng, 2);
            let ty = if rng.u8(..4) == 0 {
                0
            } else {
                rng.u16(attr::MAX + 1..=0x3fff)
            };
            let flag = *rng.choice(&[0u16, 0x8000, 0x4000]).unwrap_or(&0);
            let n = random_len(rng);
            attrs.extend(nla(ty | flag, &random_bytes(rng, n)));
            attrs.extend(random_attrs(rng, 2));
            frame(rng, family, cmd, right_mode(cmd), &attrs)
        }
        2 => {
            let cmd = rng.u8(1..=CMD_MAX);
            let attrs = random_attrs(rng, 3);
            frame(rng, family, cmd, !right_mode(cmd), &attrs)
        }
        3 => {
            let mut attrs = Vec::new();
            if rng.bool() {
                attrs.extend(nla(attr::SCOPE, &rng.u32(1..=2).to_ne_bytes()));
            }
            let bad = match rng.u8(..4) {
                0 => {
                    // A length that is not whole words, or 0.
                    let mut n = rng.usize(0..=BITMAP_WORDS_MAX * 4);
                    if n.is_multiple_of(4) && n > 0 {
                        n -= 1;
                    }
                    random_bytes(rng, n)
                }
                1 => {
                    let words = BITMAP_WORDS_MAX + rng.usize(1..8);
                    random_bytes(rng, words * 4)
                }
                // Empty: an all-zero bitmap of whole words is a valid
                // request for no fields, an empty attribute is not.
                2 => Vec::new(),
                _ => {
                    // An unknown id: 0, or above this version's largest.
                    let mut b = good_bitmap(rng);
                    let id = if rng.bool() {
                        0
                    } else {
                        rng.u16(FIELD_ID_MAX + 1..(BITMAP_WORDS_MAX * 32) as u16)
                    };
                    b.resize(BITMAP_WORDS_MAX * 4, 0);
                    let w = usize::from(id / 32) * 4;
                    let bit = (1u32 << (id % 32)).to_ne_bytes();
                    for (i, x) in bit.iter().enumerate() {
                        b[w + i] |= x;
                    }
                    b
                }
            };
            attrs.extend(nla(attr::FIELDS, &bad));
            frame(rng, family, tasks, true, &attrs)
        }
        4 => {
            let mut attrs = nla(attr::FIELDS, &good_bitmap(rng));
            if rng.bool() {
                let scope = loop {
                    let s = rng.u32(..);
                    if !(1..=4).contains(&s) {
                        break s;
                    }
                };
                attrs.extend(nla(attr::SCOPE, &scope.to_ne_bytes()));
            } else {
                let ty = *rng.choice(&[attr::SCOPE, attr::PID]).unwrap_or(&attr::PID);
                let n = *rng.choice(&[0usize, 1, 2, 3, 5, 8]).unwrap_or(&0);
                if ty == attr::PID {
                    attrs.extend(nla(attr::SCOPE, &3u32.to_ne_bytes()));
                }
                attrs.extend(nla(ty, &random_bytes(rng, n)));
            }
            frame(rng, family, tasks, true, &attrs)
        }
        TRUNCATED => {
            // A well-formed request, even a valid one, then cut.
            let mut attrs = nla(attr::FIELDS, &good_bitmap(rng));
            attrs.extend(nla(attr::SCOPE, &rng.u32(1..=2).to_ne_bytes()));
            let mut m = frame(rng, family, tasks, true, &attrs);
            let cut = if rng.u8(..4) == 0 {
                rng.usize(17..20)
            } else {
                // Strictly inside one attribute's nla_len.
                let (start, len) = if rng.bool() {
                    (20, attrs.len() - 8)
                } else {
                    (20 + attrs.len() - 8, 8)
                };
                start + rng.usize(1..len)
            };
            m.truncate(cut);
            m[..4].copy_from_slice(&(cut as u32).to_ne_bytes());
            m
        }
        6 => {
            let mut attrs = random_attrs(rng, 2);
            let n = rng.usize(0..16);
            let mut bad = nla(rng.u16(attr::FIELDS..=attr::PID), &random_bytes(rng, n));
            let len = if rng.bool() {
                rng.u16(0..4)
            } else {
                rng.u16(bad.len() as u16 + 1..)
            };
            bad[..2].copy_from_slice(&len.to_ne_bytes());
            attrs.extend(bad);
            let cmd = rng.u8(1..=CMD_MAX);
            frame(rng, family, cmd, right_mode(cmd), &attrs)
        }
        _ => {
            let attrs = random_attrs(rng, 3);
            let (cmd, dump) = (rng.u8(..), rng.bool());
            let mut m = frame(rng, family, cmd, dump, &attrs);
            if m.len() > 16 && rng.bool() {
                let claim = m.len() as u32 + rng.u32(1..1000);
                m[..4].copy_from_slice(&claim.to_ne_bytes());
            } else {
                m.truncate(rng.usize(0..16));
            }
            m
        }
    };
    Msg { bytes, kind }
}

/// What the run saw.
#[derive(Debug, Default)]
pub struct Stats {
    /// Messages sent per kind.
    pub sent: [u64; KINDS.len()],
    /// Errors by errno.
    pub errnos: BTreeMap<i32, u64>,
    /// Errors that carried an extack text.
    pub with_text: u64,
    /// The same by errno.
    pub texts: BTreeMap<i32, u64>,
    /// A few texts per errno.
    pub samples: BTreeMap<i32, Vec<String>>,
    /// Empty datagrams, refused by `sendmsg()` with `ENODATA`.
    pub empty: u64,
    /// Failures (at most 20 kept), and their count.
    pub fails: Vec<String>,
    /// Number of failures.
    pub nfails: u64,
    /// Watched slab objects before and after.
    pub slab: (u64, u64),
    /// /proc/meminfo Slab before and after, kB.
    pub meminfo_slab: (u64, u64),
}

impl Stats {
    fn fail(&mut self, s: String) {
        self.nfails += 1;
        if self.fails.len() < 20 {
            self.fails.push(s);
        }
    }
}

/// Active objects of the caches netlink requests allocate from.
pub fn slab_objects() -> Option<u64> {
    let text = fs::read_to_string("/proc/slabinfo").ok()?;
    Some(
        text.lines()
            .filter(|l| l.starts_with("kmalloc-") || l.starts_with("skbuff_"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum(),
    )
}

fn meminfo_slab() -> u64 {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Slab:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Sends one message and checks the answer against its kind.
fn one(sock: &mut Socket, m: &mut Msg, seq: u32, st: &mut Stats) {
    if m.bytes.len() >= 12 {
        m.bytes[8..12].copy_from_slice(&seq.to_ne_bytes());
    }
    st.sent[m.kind] += 1;
    match sock.send(&m.bytes, 0) {
        Ok(_) => {}
        // netlink_sendmsg() refuses an empty datagram itself.
        Err(e) if m.bytes.is_empty() && e.raw_os_error() == Some(libc::ENODATA) => {
            st.empty += 1;
            return;
        }
        Err(e) => {
            st.fail(format!("{}: send: {e}", KINDS[m.kind]));
            return;
        }
    }
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut errors = Vec::new();
    let mut others = 0;
    loop {
        buf.clear();
        match sock.recv(&mut buf, libc::MSG_DONTWAIT) {
            Ok(n) => {
                let mut rest = &buf[..n];
                while rest.len() >= 16 {
                    let len = u32::from_ne_bytes(rest[..4].try_into().unwrap_or_default()) as usize;
                    let ty = u16::from_ne_bytes([rest[4], rest[5]]);
                    let flags = u16::from_ne_bytes([rest[6], rest[7]]);
                    let frame = &rest[..len.clamp(16, rest.len())];
                    if ty == NLMSG_ERROR && frame.len() >= 20 {
                        let code = i32::from_ne_bytes(frame[16..20].try_into().unwrap_or_default());
                        // NETLINK_CAP_ACK: the request's header only, then
                        // the extack attributes.
                        let text = (flags & NLM_F_ACK_TLVS != 0)
                            .then(|| {
                                nproc_genl::extack_message(frame.get(36..).unwrap_or_default())
                            })
                            .flatten();
                        errors.push((code, text));
                    } else {
                        others += 1;
                    }
                    rest = rest
                        .get(len.max(16).next_multiple_of(4)..)
                        .unwrap_or_default();
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => {
                st.fail(format!("{}: recv: {e}", KINDS[m.kind]));
                return;
            }
        }
    }
    let hex = || {
        m.bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    if m.kind == DROPPED {
        if !errors.is_empty() || others > 0 {
            st.fail(format!(
                "dropped: answered {errors:?} (+{others} messages): {}",
                hex()
            ));
        }
        return;
    }
    match errors.as_slice() {
        [(code, text)] if *code < 0 && others == 0 => {
            *st.errnos.entry(-code).or_default() += 1;
            if let Some(t) = text {
                st.with_text += 1;
                *st.texts.entry(-code).or_default() += 1;
                let s = st.samples.entry(-code).or_default();
                if s.len() < 3 && !s.contains(t) {
                    s.push(t.clone());
                }
            }
        }
        _ => st.fail(format!(
            "{}: answered {errors:?} and {others} other messages: {}",
            KINDS[m.kind],
            hex()
        )),
    }
}

/// Sends `count` random messages from `seed` (after 1,000 warm-up ones).
pub fn run(family: u16, seed: u64, count: u64) -> std::io::Result<Stats> {
    let mut sock = Socket::new(NETLINK_GENERIC)?;
    sock.bind_auto()?;
    sock.connect(&SocketAddr::new(0, 0))?;
    sock.set_ext_ack(true)?;
    sock.set_cap_ack(true)?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut st = Stats::default();
    let mut seq = 0u32;
    for _ in 0..1000 {
        seq = seq.wrapping_add(1);
        one(&mut sock, &mut gen(&mut rng, family), seq, &mut st);
    }
    std::thread::sleep(Duration::from_millis(500));
    let s0 = slab_objects().unwrap_or(0);
    let m0 = meminfo_slab();
    st = Stats::default();
    for _ in 0..count {
        seq = seq.wrapping_add(1);
        one(&mut sock, &mut gen(&mut rng, family), seq, &mut st);
    }
    std::thread::sleep(Duration::from_secs(1));
    st.slab = (s0, slab_objects().unwrap_or(0));
    st.meminfo_slab = (m0, meminfo_slab());
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_framed_and_seeded() {
        let mut a = fastrand::Rng::with_seed(7);
        let mut b = fastrand::Rng::with_seed(7);
        for _ in 0..2000 {
            let (x, y) = (gen(&mut a, 30), gen(&mut b, 30));
            assert_eq!(x.bytes, y.bytes);
            if x.kind == DROPPED {
                let claimed = x
                    .bytes
                    .get(..4)
                    .map(|l| u32::from_ne_bytes(l.try_into().unwrap()) as usize);
                assert!(x.bytes.len() < 16 || claimed.unwrap() > x.bytes.len());
            } else {
                let len = u32::from_ne_bytes(x.bytes[..4].try_into().unwrap()) as usize;
                assert_eq!(len, x.bytes.len(), "{}", KINDS[x.kind]);
                assert_eq!(u16::from_ne_bytes([x.bytes[4], x.bytes[5]]), 30);
            }
        }
    }

    #[test]
    fn truncation_is_inside_an_attribute_or_the_header() {
        let mut r = fastrand::Rng::with_seed(1);
        let mut n = 0;
        while n < 200 {
            let m = gen(&mut r, 30);
            if m.kind != TRUNCATED {
                continue;
            }
            n += 1;
            let len = m.bytes.len();
            assert!(len > 16);
            if len >= 20 {
                // Walk the attributes: the last one must overrun the end.
                let mut off = 20;
                let mut overran = false;
                while off + 4 <= len {
                    let l = u16::from_ne_bytes([m.bytes[off], m.bytes[off + 1]]) as usize;
                    if off + l > len {
                        overran = true;
                        break;
                    }
                    off += l.next_multiple_of(4);
                }
                assert!(overran || off < len, "cut at a boundary: {len}");
            }
        }
    }
}
