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

mod msgs;

pub use msgs::KINDS;

use msgs::{gen, Msg, DROPPED};
use netlink_packet_core::{NLMSG_ERROR, NLM_F_ACK_TLVS};
use netlink_sys::{protocols::NETLINK_GENERIC, Socket, SocketAddr};
use std::collections::BTreeMap;
use std::fs;
use std::time::Duration;

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
