//! Hostile input: whatever bytes /proc (or a future netlink peer) hands
//! over, parsing answers with the fields read or an error that says what
//! was wrong, and rendering stays within the room procps grants.

use nps::procfs::{parse_stat, parse_status};
use nps::render::columns::{lookup, COLUMNS, OUTBUF_SIZE};
use nps::render::escape::{lib_escape, ps_escape};
use nps::render::{Charset, Column, Ctx, Layout, Names, TtyNamer};
use nps::{Global, Task, Wchan};
use proptest::prelude::*;

fn charset() -> impl Strategy<Value = Charset> {
    prop_oneof![Just(Charset::Bytes), Just(Charset::Utf8)]
}

proptest! {
    /// Any bytes get an answer that says what was read: a stat error
    /// names what was missing or malformed; a stat success took the name
    /// from between the first '(' and the last ')', as procps does; a
    /// status error names a line the input has.
    #[test]
    fn stat_and_status_answer_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut t = Task::empty(1, 1);
        match parse_stat(&bytes, &mut t) {
            Ok(()) => {
                let open = bytes.iter().position(|&b| b == b'(');
                let close = bytes.iter().rposition(|&b| b == b')');
                prop_assert!(matches!((open, close), (Some(o), Some(c)) if o < c));
                let (o, c) = (open.unwrap_or(0), close.unwrap_or(0));
                prop_assert_eq!(&t.comm[..], &bytes[o + 1..c]);
                prop_assert!(t.nlwp != 0, "stat2proc: nlwp 0 reads as 1");
            }
            Err(e) => prop_assert!(
                ["no '(' ", "no ')' ", "nothing after ", "fields after ", "field "]
                    .iter()
                    .any(|p| e.starts_with(p)),
                "unexplained stat error {:?}",
                e
            ),
        }
        let mut t = Task::empty(1, 1);
        if let Err(e) = parse_status(&bytes, &mut t) {
            let line: Option<usize> = e
                .strip_prefix("line ")
                .and_then(|r| r.split(':').next())
                .and_then(|n| n.parse().ok());
            let lines = bytes.split(|&b| b == b'\n').count();
            prop_assert!(
                line.is_some_and(|n| (1..=lines).contains(&n)),
                "status error {:?} names no line of {}",
                e,
                lines
            );
        }
    }

    /// A well-formed stat line, whatever its name's bytes (parentheses,
    /// newlines, invalid UTF-8 included): every field procps reads comes
    /// back as written.
    #[test]
    fn stat_reads_back_every_field_whatever_the_name(
        comm in proptest::collection::vec(any::<u8>(), 0..40),
        state in proptest::sample::select(b"RSDZTtWXxKPI".to_vec()),
        ids in proptest::array::uniform6(any::<i32>()),
        counts in proptest::array::uniform8(any::<u64>()),
        nice in -20i32..20,
        nlwp in 0i32..100_000,
        processor in 0i32..4096,
        rt in proptest::array::uniform2(any::<u32>()),
    ) {
        let [ppid, pgid, sid, tty_nr, tpgid, priority] = ids;
        let [flags, min_flt, maj_flt, utime, stime, start_time, vsize, rss] = counts;
        let mut text = b"7 (".to_vec();
        text.extend_from_slice(&comm);
        text.extend_from_slice(
            format!(
                ") {} {ppid} {pgid} {sid} {tty_nr} {tpgid} {flags} {min_flt} 0 {maj_flt} 0 \
                 {utime} {stime} 5 6 {priority} {nice} {nlwp} 0 {start_time} {vsize} {rss} \
                 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 {processor} {} {} 0 0 0\n",
                state as char, rt[0], rt[1]
            )
            .as_bytes(),
        );
        let mut t = Task::empty(7, 7);
        let r = parse_stat(&text, &mut t);
        prop_assert!(r.is_ok(), "{:?}", r);
        prop_assert_eq!(&t.comm, &comm);
        prop_assert_eq!(t.state, state);
        prop_assert_eq!(
            (t.ppid, t.pgid, t.sid, t.tty_nr, t.tpgid, t.priority),
            (ppid, pgid, sid, tty_nr, tpgid, priority)
        );
        prop_assert_eq!(
            (t.flags, t.min_flt, t.maj_flt, t.utime, t.stime),
            (flags, min_flt, maj_flt, utime, stime)
        );
        prop_assert_eq!((t.cutime, t.cstime), (5, 6));
        prop_assert_eq!((t.start_time, t.vsize, t.rss), (start_time, vsize, rss));
        prop_assert_eq!((t.nice, t.processor), (nice, processor));
        prop_assert_eq!(t.nlwp, nlwp.max(1), "stat2proc: nlwp 0 reads as 1");
        prop_assert_eq!((t.rt_priority, t.policy), (rt[0], rt[1]));
    }

    #[test]
    fn escapes_stay_in_bounds(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        cells in 0usize..40,
        cs in charset(),
    ) {
        // Bytes mode needs no locale; UTF-8 mode asks glibc, whose C-locale
        // answers are still bounded.
        let lib = lib_escape(&bytes, 64, cs);
        prop_assert!(lib.len() <= 63);
        // In UTF-8 mode libproc2 trusts lead bytes, so a control character
        // hidden as a "continuation" passes this first escaper (ps's second
        // one catches it); in byte mode nothing unprintable passes.
        if cs == Charset::Bytes {
            prop_assert!(!lib.iter().any(|&b| b < 0x20 || b == 0x7f));
        }
        let mut out = Vec::new();
        let used = ps_escape(&mut out, &bytes, OUTBUF_SIZE, cells, cs);
        prop_assert!(used <= cells);
        if cs == Charset::Bytes {
            prop_assert_eq!(out.len(), used);
            prop_assert!(out.iter().all(|&b| (0x20..0x7f).contains(&b)));
        }
    }

    #[test]
    fn any_task_renders_in_any_column(
        comm in proptest::collection::vec(any::<u8>(), 0..80),
        cmdline in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
        wchan in proptest::collection::vec(any::<u8>(), 0..80),
        nums in proptest::array::uniform8(any::<i32>()),
        big in proptest::array::uniform4(any::<u64>()),
        screen in 1usize..300,
    ) {
        let mut t = Task::empty(nums[0], nums[1]);
        t.comm = comm;
        t.cmdline = cmdline;
        t.wchan = Wchan::Symbol(wchan);
        t.ppid = nums[2];
        t.pgid = nums[3];
        t.sid = nums[4];
        t.tty_nr = nums[5];
        t.tpgid = nums[6];
        t.nice = nums[7];
        t.nlwp = nums[7];
        t.utime = big[0] >> 12;
        t.stime = big[1] >> 12;
        t.start_time = big[2] >> 12;
        t.vm_rss_kib = big[3] >> 12;
        t.uid = [nums[2] as u32; 4];
        let g = Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 1_700_000_000,
            mem_total_kib: 1 + (big[3] >> 40),
            uptime_centis: big[0] >> 20,
            pid_max: Some(4194304),
        };
        let mut tty = TtyNamer::new("/nonexistent");
        let mut names = Names::new();
        let mut ctx = Ctx { global: &g, charset: Charset::Bytes, tty: &mut tty, names: &mut names, now: 1_800_000_000 , forest: Default::default(),
        environ: false,};
        let cols: Vec<Column> = COLUMNS
            .iter()
            .map(|d| {
                let d = lookup(d.spec).unwrap();
                Column { name: d.head.into(), width: d.width, just: d.just, kind: d.kind }
            })
            .collect();
        let layout = Layout::new(cols, screen);
        let mut out = Vec::new();
        layout.line(None, &mut ctx, &mut out);
        layout.line(Some(&t), &mut ctx, &mut out);
        // wchan is printed raw, as procps prints it, so a hostile name may
        // hold newlines; the lines still end and stay bounded.
        prop_assert_eq!(out.last(), Some(&b'\n'));
        prop_assert!(out.len() < 4 * OUTBUF_SIZE);
    }

    /// Only the cells Kind::may_print_nul() names are scanned for a NUL:
    /// no other cell may hold one, whatever the task holds.
    #[test]
    fn only_named_cells_hold_a_nul(
        comm in proptest::collection::vec(prop_oneof![Just(0u8), any::<u8>()], 0..80),
        cmdline in proptest::option::of(proptest::collection::vec(prop_oneof![Just(0u8), any::<u8>()], 0..120)),
        wchan in proptest::collection::vec(prop_oneof![Just(0u8), any::<u8>()], 0..80),
        state in prop_oneof![Just(0u8), any::<u8>()],
        nums in proptest::array::uniform4(any::<i32>()),
        room in prop_oneof![0usize..20, Just(OUTBUF_SIZE - 1)],
        cs in charset(),
    ) {
        let mut t = Task::empty(nums[0], nums[1]);
        t.comm = comm;
        t.cmdline = cmdline;
        t.wchan = Wchan::Symbol(wchan);
        t.state = state;
        t.tty_nr = nums[2];
        t.uid = [nums[3] as u32; 4];
        t.gid = t.uid;
        let g = Global {
            hertz: 100,
            page_size: 4096,
            boot_time: 1_700_000_000,
            mem_total_kib: 1,
            uptime_centis: 0,
            pid_max: Some(4194304),
        };
        let mut tty = TtyNamer::new("/nonexistent");
        let mut names = Names::new();
        let mut ctx = Ctx { global: &g, charset: cs, tty: &mut tty, names: &mut names, now: 1_800_000_000 , forest: Default::default(),
        environ: false,};
        for d in COLUMNS {
            let mut out = Vec::new();
            d.kind.render(&t, &mut ctx, room, &mut out);
            if !d.kind.may_print_nul(&t) {
                prop_assert!(!out.contains(&0), "{}: {:?}", d.spec, out);
            }
        }
    }
}
