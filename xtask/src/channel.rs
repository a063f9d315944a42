//! Decode the guest's result channel (ttyS1).
//!
//! Framing (text; the host ignores `\r`):
//! `KFAST-BEGIN <name>` / base64 lines / `KFAST-END <name>`, then
//! `KFAST-VERDICT <ok | reason>`.

use crate::Result;

/// Parsed result channel.
pub struct Channel {
    /// The decoded `capture.tar.gz`, if the frame was complete.
    pub archive: Option<Vec<u8>>,
    /// The guest's verdict line (after the marker), if any.
    pub verdict: Option<String>,
}

fn b64_val(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Decode base64, ignoring whitespace; stops at padding.
pub fn base64_decode(text: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            break;
        }
        let v = b64_val(c).ok_or_else(|| format!("bad base64 byte {c:#x}"))?;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Parse the raw result channel.
pub fn parse(raw: &[u8]) -> Result<Channel> {
    let text = String::from_utf8_lossy(raw).replace('\r', "");
    let mut archive = None;
    if let Some(start) = text.find("KFAST-BEGIN capture.tar.gz\n") {
        let body = &text[start + "KFAST-BEGIN capture.tar.gz\n".len()..];
        if let Some(end) = body.find("KFAST-END capture.tar.gz") {
            archive = Some(base64_decode(&body[..end])?);
        }
    }
    let verdict = text
        .lines()
        .find_map(|l| l.strip_prefix(crate::qemu::VERDICT))
        .map(|v| v.trim().to_string());
    Ok(Channel { archive, verdict })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_framed_base64() {
        let raw = b"noise\r\nKFAST-BEGIN capture.tar.gz\r\naGVs\r\nbG8=\r\nKFAST-END capture.tar.gz\r\nKFAST-VERDICT ok\r\n";
        let ch = parse(raw).unwrap();
        assert_eq!(ch.archive.unwrap(), b"hello");
        assert_eq!(ch.verdict.as_deref(), Some("ok"));
    }
}
