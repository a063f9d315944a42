//! The message generator: seeded random nproc requests, each with one
//! defect of a known kind (see the table in `super`).

use netlink_packet_core::{NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST};
use nproc_proto::{attr, BITMAP_WORDS_MAX, CMD_MAX, FIELD_ID_MAX};

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
/// The kind cut inside the genl header or an attribute.
pub const TRUNCATED: usize = 5;
/// The kind that must get no answer.
pub const DROPPED: usize = 7;

/// One generated message.
pub struct Msg {
    /// The datagram.
    pub bytes: Vec<u8>,
    /// Its index in [`KINDS`].
    pub kind: usize,
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

/// One message for family id `family`.
pub fn gen(rng: &mut fastrand::Rng, family: u16) -> Msg {
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
