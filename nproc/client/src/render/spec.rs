//! Single specifiers and macros: src/ps/sortformat.c `do_one_spec()` for
//! the columns nps prints, and output.c's `macro_array`.

use super::columns::{lookup, Just, COLUMNS};
use super::known::{known, Just as KJust, Known};
use super::layout::Column;

/// procps_pid_length(): the digits of pid_max, 5 when unknown.
pub fn pid_length(pid_max: Option<u64>) -> usize {
    pid_max.map_or(5, |m| m.to_string().len())
}

/// do_one_spec() for a column nps prints: the column (its width at least
/// a header override's length) and whether it is `CF_PIDMAX` (widened to
/// pid_max's digits once known). `None` when nps has no such column.
pub fn one_spec(spec: &str, header: Option<&[u8]>) -> Option<(Column, bool)> {
    let def = lookup(spec)?;
    let w1 = if def.pidmax {
        def.head.len()
    } else {
        def.width
    };
    let (name, width) = match header {
        Some(h) => (h.to_vec(), w1.max(h.len())),
        None => (def.head.into(), w1),
    };
    let col = Column {
        name,
        width,
        just: def.just,
        kind: def.kind,
    };
    Some((col, def.pidmax))
}

/// do_one_spec() for a `format_array` row nps has no row of its own for,
/// but whose printer it has under another specifier (`atime` prints as
/// `time`, `tty8` as `tname`, every `pr_nop` row as `-`): the column as
/// the row describes it, and its `CF_PIDMAX`.
pub fn by_printer(row: &Known, header: Option<&[u8]>) -> Option<(Column, bool)> {
    let kind = COLUMNS
        .iter()
        .find(|c| known(c.spec).is_some_and(|k| k.printer == row.printer))?
        .kind;
    let just = match row.just {
        KJust::R => Just::Right,
        KJust::L => Just::Left,
        KJust::U => Just::Unlimited,
        KJust::N => Just::User,
        KJust::W => Just::Wchan,
        KJust::S => return None,
    };
    let w1 = if row.pidmax {
        row.head.len()
    } else {
        row.width
    };
    let (name, width) = match header {
        Some(h) => (h.to_vec(), w1.max(h.len())),
        None => (row.head.into(), w1),
    };
    Some((
        Column {
            name,
            width,
            just,
            kind,
        },
        row.pidmax,
    ))
}

/// macro_array: a format name standing for a list of specifiers.
pub fn macro_spec(name: &str) -> Option<&'static str> {
    const MACROS: &[(&str, &str)] = &[
        ("DFMT", "pid,tname,state,cputime,cmd"),
        ("DefBSD", "pid,tname,stat,bsdtime,args"),
        ("DefSysV", "pid,tname,time,cmd"),
        ("END_BSD", "state,tname,cputime,comm"),
        ("END_SYS5", "state,tname,time,command"),
        ("F5FMT", "uname,pid,ppid,c,start,tname,time,cmd"),
        ("FB_", "pid,tt,stat,time,command"),
        ("FB_j", "user,pid,ppid,pgid,sess,jobc,stat,tt,time,command"),
        (
            "FB_l",
            "uid,pid,ppid,cpu,pri,nice,vsz,rss,wchan,stat,tt,time,command",
        ),
        (
            "FB_u",
            "user,pid,pcpu,pmem,vsz,rss,tt,stat,start,time,command",
        ),
        (
            "FB_v",
            "pid,stat,time,sl,re,pagein,vsz,rss,lim,tsiz,pcpu,pmem,command",
        ),
        ("FD_", "pid,tty,time,comm"),
        ("FD_f", "user,pid,ppid,start_time,tty,time,comm"),
        ("FD_fj", "user,pid,ppid,start_time,tty,time,pgid,sid,comm"),
        ("FD_j", "pid,tty,time,pgid,sid,comm"),
        (
            "FD_l",
            "flags,state,uid,pid,ppid,priority,nice,vsz,wchan,tty,time,comm",
        ),
        (
            "FD_lj",
            "flags,state,uid,pid,ppid,priority,nice,vsz,wchan,tty,time,pgid,sid,comm",
        ),
        (
            "FL5FMT",
            "f,state,uid,pid,ppid,pcpu,pri,nice,rss,wchan,start,time,command",
        ),
        ("FLASK_context", "pid,context,command"),
        ("HP_", "pid,tty,time,comm"),
        ("HP_f", "user,pid,ppid,cpu,stime,tty,time,args"),
        (
            "HP_fl",
            "flags,state,user,pid,ppid,cpu,intpri,nice,addr,sz,wchan,stime,tty,time,args",
        ),
        (
            "HP_l",
            "flags,state,uid,pid,ppid,cpu,intpri,nice,addr,sz,wchan,tty,time,comm",
        ),
        ("J390", "pid,sid,pgrp,tname,atime,args"),
        (
            "JFMT",
            "user,pid,ppid,pgid,sess,jobc,state,tname,cputime,command",
        ),
        (
            "L5FMT",
            "f,state,uid,pid,ppid,c,pri,nice,addr,sz,wchan,tt,time,ucmd",
        ),
        (
            "LFMT",
            "uid,pid,ppid,cp,pri,nice,vsz,rss,wchan,state,tname,cputime,command",
        ),
        (
            "OL_X",
            "pid,start_stack,esp,eip,timeout,alarm,stat,tname,bsdtime,args",
        ),
        (
            "OL_j",
            "ppid,pid,pgid,sid,tname,tpgid,stat,uid,bsdtime,args",
        ),
        (
            "OL_l",
            "flags,uid,pid,ppid,priority,nice,vsz,rss,wchan,stat,tname,bsdtime,args",
        ),
        (
            "OL_m",
            "pid,tname,majflt,minflt,m_trs,m_drs,m_size,m_swap,rss,m_share,vm_lib,m_dt,args",
        ),
        (
            "OL_s",
            "uid,pid,pending,sig_block,sig_ignore,caught,stat,tname,bsdtime,args",
        ),
        (
            "OL_u",
            "user,pid,pcpu,pmem,vsz,rss,tname,stat,start_time,bsdtime,args",
        ),
        (
            "OL_v",
            "pid,tname,stat,bsdtime,maj_flt,m_trs,m_drs,rss,pmem,args",
        ),
        ("RD_", "pid,tname,state,bsdtime,comm"),
        ("RD_f", "uid,pid,ppid,start_time,tname,bsdtime,args"),
        (
            "RD_fj",
            "uid,pid,ppid,start_time,tname,bsdtime,pgid,sid,args",
        ),
        ("RD_j", "pid,tname,state,bsdtime,pgid,sid,comm"),
        (
            "RD_l",
            "flags,state,uid,pid,ppid,priority,nice,wchan,tname,bsdtime,comm",
        ),
        (
            "RD_lj",
            "flags,state,uid,pid,ppid,priority,nice,wchan,tname,bsdtime,pgid,sid,comm",
        ),
        (
            "RUSAGE",
            "minflt,majflt,nswap,inblock,oublock,msgsnd,msgrcv,nsigs,nvcsw,nivcsw",
        ),
        ("SCHED", "user,pcpu,pri,usrpri,nice,psxpri,psr,policy,pset"),
        (
            "SFMT",
            "uid,pid,cursig,sig,sigmask,sigignore,sigcatch,stat,tname,command",
        ),
        ("Std_f", "uid_hack,pid,ppid,c,stime,tname,time,cmd"),
        (
            "Std_fl",
            "f,s,uid_hack,pid,ppid,c,opri,ni,addr,sz,wchan,stime,tname,time,cmd",
        ),
        (
            "Std_l",
            "f,s,uid,pid,ppid,c,opri,ni,addr,sz,wchan,tname,time,ucmd",
        ),
        ("THREAD", "user,pcpu,pri,scnt,wchan,usertime,systime"),
        (
            "UFMT",
            "uname,pid,pcpu,pmem,vsz,rss,tt,state,start,time,command",
        ),
        (
            "VFMT",
            "pid,tt,state,time,sl,pagein,vsz,rss,pcpu,pmem,command",
        ),
    ];
    MACROS
        .binary_search_by(|(n, _)| n.as_bytes().cmp(name.as_bytes()))
        .ok()
        .map(|i| MACROS[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// by_printer() relies on nps's columns printing by their printer
    /// alone: two rows with one printer have one kind.
    #[test]
    fn a_printer_is_one_kind() {
        for a in COLUMNS {
            for b in COLUMNS {
                let (pa, pb) = (known(a.spec).unwrap(), known(b.spec).unwrap());
                if pa.printer == pb.printer {
                    assert_eq!(a.kind, b.kind, "{} {}", a.spec, b.spec);
                }
            }
        }
    }

    #[test]
    fn specs_and_macros() {
        let (c, pidmax) = one_spec("pid", None).unwrap();
        assert!(pidmax && c.width == 3);
        let (c, _) = one_spec("comm", Some(b"NAME_OF_IT_ALL_LONG")).unwrap();
        assert_eq!((&c.name[..], c.width), (&b"NAME_OF_IT_ALL_LONG"[..], 19));
        assert!(one_spec("label", None).is_none());
        let (c, _) = by_printer(known("atime").unwrap(), None).unwrap();
        assert_eq!((c.kind, c.width), (crate::render::Kind::Time, 8));
        let (c, _) = by_printer(known("acflag").unwrap(), None).unwrap();
        assert_eq!(c.kind, crate::render::Kind::Nop);
        assert!(by_printer(known("pss").unwrap(), None).is_none());
        assert_eq!(macro_spec("OL_u").map(|m| m.split(',').count()), Some(11));
        assert!(macro_spec("OL_q").is_none());
        assert_eq!(pid_length(Some(4194304)), 7);
        assert_eq!(pid_length(None), 5);
    }
}
