//! Malformed requests, each of which the kernel must refuse with an
//! error (and the extack text where it gives one), never an oops: unknown
//! commands, unknown field ids, bitmaps of the wrong size, bad scopes and
//! pids, unknown or reply-only attributes, attributes on commands that take
//! none, and do/dump mismatches.

use nproc_genl::{Client, Error};
use nproc_proto::{attr, field_id, Cmd, Scope, BITMAP_WORDS_MAX};

/// Attribute type and raw payload.
type Attrs = Vec<(u16, Vec<u8>)>;

/// One case: its name, the command, the attributes, dump or do.
pub type Case = (&'static str, u8, Attrs, bool);

fn u32b(v: u32) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}

/// The cases.
pub fn cases() -> Vec<Case> {
    let tgid = u32b(1 << field_id::TGID);
    let tasks = Cmd::GetTasks as u8;
    vec![
        ("unknown command 0", 0, vec![], true),
        ("unknown command 200", 200, vec![], false),
        ("GET_TASKS without fields", tasks, vec![], true),
        ("field id 0", tasks, vec![(attr::FIELDS, u32b(1))], true),
        (
            "field id 63",
            tasks,
            vec![(
                attr::FIELDS,
                [0u32.to_ne_bytes(), (1u32 << 31).to_ne_bytes()].concat(),
            )],
            true,
        ),
        (
            "bitmap of 3 bytes",
            tasks,
            vec![(attr::FIELDS, vec![2, 0, 0])],
            true,
        ),
        (
            "bitmap too long",
            tasks,
            vec![(attr::FIELDS, vec![0; BITMAP_WORDS_MAX * 4 + 4])],
            true,
        ),
        (
            "scope 9",
            tasks,
            vec![(attr::FIELDS, tgid.clone()), (attr::SCOPE, u32b(9))],
            true,
        ),
        (
            "pid scope without pid",
            tasks,
            vec![
                (attr::FIELDS, tgid.clone()),
                (attr::SCOPE, u32b(Scope::Pid as u32)),
            ],
            true,
        ),
        (
            "pid 0",
            tasks,
            vec![
                (attr::FIELDS, tgid.clone()),
                (attr::SCOPE, u32b(Scope::Pid as u32)),
                (attr::PID, u32b(0)),
            ],
            true,
        ),
        (
            "pid without its scope",
            tasks,
            vec![(attr::FIELDS, tgid.clone()), (attr::PID, u32b(1))],
            true,
        ),
        (
            "pid of 2 bytes",
            tasks,
            vec![
                (attr::FIELDS, tgid.clone()),
                (attr::SCOPE, u32b(Scope::Pid as u32)),
                (attr::PID, vec![1, 0]),
            ],
            true,
        ),
        (
            "reply attribute in a request",
            tasks,
            vec![(attr::FIELDS, tgid.clone()), (attr::TASK, vec![])],
            true,
        ),
        (
            "attribute 99",
            tasks,
            vec![(attr::FIELDS, tgid.clone()), (99, u32b(0))],
            true,
        ),
        (
            "GET_GLOBAL with an attribute",
            Cmd::GetGlobal as u8,
            vec![(attr::PID, u32b(1))],
            false,
        ),
        (
            "GET_FIELDS with an attribute",
            Cmd::GetFields as u8,
            vec![(attr::SCOPE, u32b(1))],
            true,
        ),
        ("GET_GLOBAL as a dump", Cmd::GetGlobal as u8, vec![], true),
        (
            "GET_TASKS as a do",
            tasks,
            vec![(attr::FIELDS, tgid)],
            false,
        ),
    ]
}

/// Sends every case; prints how the kernel answered each and returns the
/// number accepted (each one a failure).
pub fn run(c: &mut Client) -> usize {
    let mut accepted = 0;
    for (name, cmd, attrs, dump) in cases() {
        match c.raw_request(cmd, &attrs, dump) {
            Ok(n) => {
                accepted += 1;
                println!("badreq: FAIL {name}: accepted ({n} replies)");
            }
            Err(e @ (Error::Kernel { .. } | Error::PermissionDenied { .. })) => {
                println!("badreq: {name}: {e}")
            }
            Err(e) => {
                accepted += 1;
                println!("badreq: FAIL {name}: no kernel error but {e}");
            }
        }
    }
    accepted
}
