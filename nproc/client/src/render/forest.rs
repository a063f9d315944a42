//! The ASCII-art tree before a command (src/ps/output.c
//! `forest_helper()`), from the prefix display.c's `show_tree()` keeps.

/// The forest state shared by the tree walk and the command columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forest {
    /// `b'u'` (`-H`: two blanks per level), `b'g'`/`b'b'` (`--forest`,
    /// `f`: ` \_ ` art), or 0 (no forest).
    pub style: u8,
    /// `forest_prefix`: one of `+`, `L`, `|`, ` ` per level.
    pub prefix: Vec<u8>,
}

impl Forest {
    /// Whether a command column gets a prefix.
    pub fn active(&self) -> bool {
        !self.prefix.is_empty()
    }

    /// forest_helper(): the art for the current prefix, four (or, for
    /// `-H`, two) cells per level while they fit in `room` (its
    /// `rightward`: the caller bounds it by ps's output buffer).
    pub fn art(&self, mut room: usize, out: &mut Vec<u8>) -> usize {
        let start = out.len();
        let step = if self.style == b'u' { 2 } else { 4 };
        for &p in &self.prefix {
            if room < step {
                break;
            }
            if self.style == b'u' {
                out.extend_from_slice(b"  ");
            } else {
                out.extend_from_slice(match p {
                    b' ' => b"    ",
                    b'|' => b" |  ",
                    _ => b" \\_ ",
                });
            }
            room -= step;
        }
        out.len() - start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn art() {
        let f = Forest {
            style: b'g',
            prefix: b"|L".to_vec(),
        };
        let mut out = Vec::new();
        assert_eq!(f.art(100, &mut out), 8);
        assert_eq!(out, b" |   \\_ ");
        let mut out = Vec::new();
        assert_eq!(f.art(5, &mut out), 4);
        let h = Forest {
            style: b'u',
            prefix: b"+ ".to_vec(),
        };
        let mut out = Vec::new();
        assert_eq!(h.art(3, &mut out), 2);
        assert!(!Forest::default().active());
    }
}
