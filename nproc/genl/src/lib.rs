//! nproc-genl: a synchronous client of `nproc`, the generic netlink family
//! of `CONFIG_NPROC` that dumps process information (see `nproc-proto` for
//! the wire format).
//!
//! ```no_run
//! use nproc_genl::{Client, TaskRequest};
//! use nproc_proto::Scope;
//!
//! let mut client = Client::connect()?;
//! let req = TaskRequest::from_names(&["tgid", "state", "comm", "wchan"], Scope::Processes)?;
//! client.for_each_task(&req, |task| println!("{task:?}"))?;
//! # Ok::<(), nproc_genl::Error>(())
//! ```
//!
//! # Why the rust-netlink crates
//!
//! `netlink-sys` gives the socket (bind, connect, the `NETLINK_EXT_ACK` and
//! `NETLINK_CAP_ACK` options) and `netlink-packet-core` the reading of
//! reply frames: `NLMSG_DONE`, `NLMSG_ERROR` and their extended acks. They
//! are the crates `rtnetlink`, `ethtool` and `wl-nl80211` build on, kept by
//! one organisation, and usable without an async runtime: a `ps` makes one
//! request and reads one dump, so a synchronous client is the whole need.
//! `neli` would also do (it resolves families and iterates dumps for
//! you), but decodes every attribute into its own typed buffers; here the
//! task attributes are decoded straight from the receive buffer with the
//! `nproc-proto` table: [`TaskView`] allocates nothing, [`Record`] one
//! buffer per string value. Reading attributes is this crate's own short
//! walk (`attrs.rs`), not `netlink-packet-core`'s iterator: same rules, a
//! fifth of the instructions, and a dump decodes some 80,000 of them.
//!
//! Requests (a header and at most three attributes) are written by this
//! crate too, and the family is resolved with one `CTRL_CMD_GETFAMILY`
//! read by the same walk, rather than through `netlink-packet-generic`'s
//! typed messages: `nps` starts once per listing, and every distinct piece
//! of code a run executes is paged in, and under an emulator translated
//! again, at each start; those types' builders and a full decode of the
//! controller's reply (the family's operations and policies included) are
//! code that two attributes do not need. The tests check the encoder
//! against those crates.
//!
//! What this crate adds: family resolution with a clear error when the
//! kernel lacks `CONFIG_NPROC`, the three commands, and decoding of their
//! replies with the `nproc-proto` table (a value whose length does not
//! match its table type is an error naming the field).

#![deny(missing_docs)]

mod attrs;
mod decode;
mod error;
mod nlmsg;
mod nul;
mod socket;

pub use decode::{
    extack_message, task_bytes, task_number, task_string, FieldInfo, Record, TaskView, Value,
    ValueRef,
};
pub use error::Error;

use nproc_proto::{attr, task_field_by_name, Cmd, FieldBitmap, Scope};
use socket::GenlSocket;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;

/// A `GET_TASKS` request: which fields, which tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRequest {
    /// The fields to send.
    pub fields: FieldBitmap,
    /// Which tasks.
    pub scope: Scope,
    /// The pid of [`Scope::Pid`] and [`Scope::Children`].
    pub pid: Option<u32>,
}

impl TaskRequest {
    /// A request for the fields named `names` (the names of
    /// `nproc_proto::TASK_FIELDS`, as `GET_FIELDS` also sends them).
    pub fn from_names<S: AsRef<str>>(names: &[S], scope: Scope) -> Result<Self, Error> {
        let mut fields = FieldBitmap::default();
        for name in names {
            let name = name.as_ref();
            let d = task_field_by_name(name).ok_or_else(|| Error::UnknownField(name.into()))?;
            // Every id of the table fits the bitmap (nproc-proto's tests).
            fields.set(d.id);
        }
        Ok(Self {
            fields,
            scope,
            pid: None,
        })
    }

    /// The same request for the tasks of `scope` around `pid`.
    pub fn with_pid(mut self, scope: Scope, pid: u32) -> Self {
        self.scope = scope;
        self.pid = Some(pid);
        self
    }

    fn attrs(&self) -> Vec<(u16, Vec<u8>)> {
        let mut a = vec![
            (attr::FIELDS, self.fields.to_ne_bytes().to_vec()),
            (attr::SCOPE, (self.scope as u32).to_ne_bytes().to_vec()),
        ];
        if let Some(pid) = self.pid {
            a.push((attr::PID, pid.to_ne_bytes().to_vec()));
        }
        a
    }
}

/// A connection to the kernel's `nproc` family.
///
/// The kernel answers `GET_TASKS` and `GET_GLOBAL` as the procfs mount
/// whose root directory the request names ([`attr::PROCFS_FD`]) shows the
/// reader: its pid namespace, `hidepid=`, `gid=` and `subset=pid`. Each
/// such request carries the descriptor this client holds.
pub struct Client {
    sock: GenlSocket,
    version: u32,
    procfs: Option<OwnedFd>,
}

impl Client {
    /// Opens `/proc` (the procfs the caller's `/proc` is) and a generic
    /// netlink socket, and resolves the `nproc` family.
    ///
    /// [`Error::NoFamily`] when the kernel has no `nproc` family (built
    /// without `CONFIG_NPROC`); [`Error::Io`] when `/proc` cannot be
    /// opened, for then the kernel would show nothing either.
    pub fn connect() -> Result<Self, Error> {
        Self::connect_with_procfs(Some(open_procfs(Path::new("/proc"))?))
    }

    /// As [`Client::connect`], with the procfs root directory `procfs`
    /// (see [`open_procfs`]); `None` sends requests without one, which
    /// the kernel refuses: for tests of that refusal.
    pub fn connect_with_procfs(procfs: Option<OwnedFd>) -> Result<Self, Error> {
        let (sock, version) = GenlSocket::open(nproc_proto::FAMILY_NAME)?;
        Ok(Self {
            sock,
            version,
            procfs,
        })
    }

    /// A client over `sock`, a socket another [`Client`] opened (inherited
    /// across exec, or received by `SCM_RIGHTS`), naming `procfs`: for tests
    /// of the kernel's rule that only the socket's opener is answered.
    /// `family_id` is the opener's [`Client::family_id`]: resolving it
    /// again would read, and so consume, the replies of a dump already
    /// under way on the socket.
    pub fn from_fds(sock: OwnedFd, procfs: Option<OwnedFd>, family_id: u16) -> Self {
        Self {
            sock: GenlSocket::from_fd(sock, family_id),
            version: u32::from(nproc_proto::FAMILY_VERSION),
            procfs,
        }
    }

    /// The netlink socket's descriptor and the procfs one (to hand on).
    pub fn raw_fds(&self) -> (RawFd, Option<RawFd>) {
        (
            self.sock.raw_fd(),
            self.procfs.as_ref().map(|f| f.as_raw_fd()),
        )
    }

    /// Sends `GET_TASKS` without reading the dump; returns its sequence
    /// number for [`Client::recv_tasks`].
    pub fn send_tasks(&mut self, req: &TaskRequest) -> Result<u32, Error> {
        let attrs = self.task_attrs(req);
        self.sock
            .send_only(Cmd::GetTasks as u8, &attrs, true, "GET_TASKS")
    }

    /// Reads the dump of the `GET_TASKS` request `seq`, calling `f` with
    /// each task.
    pub fn recv_tasks<F: FnMut(Record)>(&mut self, seq: u32, mut f: F) -> Result<(), Error> {
        self.sock.recv_family(seq, "GET_TASKS", &mut |payload| {
            if !payload.is_empty() {
                f(decode::task(payload)?);
            }
            Ok(())
        })
    }

    /// The [`attr::PROCFS_FD`] attribute, when this client holds a procfs.
    fn procfs_attr(&self) -> Option<(u16, Vec<u8>)> {
        let fd = self.procfs.as_ref()?.as_raw_fd();
        Some((attr::PROCFS_FD, fd.to_ne_bytes().to_vec()))
    }

    /// `req`'s attributes and the procfs descriptor.
    fn task_attrs(&self, req: &TaskRequest) -> Vec<(u16, Vec<u8>)> {
        let mut a = req.attrs();
        a.extend(self.procfs_attr());
        a
    }

    /// The family version the kernel registered.
    pub fn kernel_version(&self) -> u32 {
        self.version
    }

    /// The family id the controller resolved (`nlmsg_type` of requests):
    /// for test clients that frame their own, malformed, messages.
    pub fn family_id(&self) -> u16 {
        self.sock.family_id()
    }

    /// `GET_FIELDS`: every task field and global item the kernel serves.
    pub fn fields(&mut self) -> Result<Vec<FieldInfo>, Error> {
        let mut out = Vec::new();
        self.sock.request(
            Cmd::GetFields as u8,
            &[],
            true,
            "GET_FIELDS",
            &mut |payload| {
                out.push(decode::field_info(payload)?);
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// `GET_GLOBAL`: the global items, `(id, value)` in id order.
    pub fn global(&mut self) -> Result<Vec<(u16, Value)>, Error> {
        let mut out = None;
        let attrs: Vec<_> = self.procfs_attr().into_iter().collect();
        self.sock.request(
            Cmd::GetGlobal as u8,
            &attrs,
            false,
            "GET_GLOBAL",
            &mut |payload| {
                out = Some(decode::global(payload)?);
                Ok(())
            },
        )?;
        out.ok_or_else(|| Error::Decode("GET_GLOBAL: no reply".into()))
    }

    /// `GET_TASKS`: calls `f` with each task as it is decoded.
    pub fn for_each_task<F: FnMut(Record)>(
        &mut self,
        req: &TaskRequest,
        mut f: F,
    ) -> Result<(), Error> {
        let attrs = self.task_attrs(req);
        self.sock.request(
            Cmd::GetTasks as u8,
            &attrs,
            true,
            "GET_TASKS",
            &mut |payload| {
                // The dump's first message carries no task: it is built in
                // the sender's sendmsg(), before the kernel knows who reads.
                if !payload.is_empty() {
                    f(decode::task(payload)?);
                }
                Ok(())
            },
        )
    }

    /// `GET_TASKS`, undecoded: calls `f` with a [`TaskView`] of each
    /// task's message, which borrows the receive buffer; an error from
    /// `f` ends the dump with it.
    pub fn for_each_task_view<F>(&mut self, req: &TaskRequest, mut f: F) -> Result<(), Error>
    where
        F: FnMut(TaskView<'_>) -> Result<(), Error>,
    {
        let attrs = self.task_attrs(req);
        self.sock.request(
            Cmd::GetTasks as u8,
            &attrs,
            true,
            "GET_TASKS",
            &mut |payload| {
                if payload.is_empty() {
                    return Ok(()); // the first message: no task
                }
                f(decode::task_view(payload)?)
            },
        )
    }

    /// Sends any command with any attributes (raw payloads) and counts
    /// the reply messages: for tests of the kernel's validation, which
    /// must answer malformed requests with an error, never an oops.
    pub fn raw_request(
        &mut self,
        cmd: u8,
        attrs: &[(u16, Vec<u8>)],
        dump: bool,
    ) -> Result<usize, Error> {
        let mut n = 0;
        self.sock
            .request(cmd, attrs, dump, "raw request", &mut |_| {
                n += 1;
                Ok(())
            })?;
        Ok(n)
    }

    /// `GET_TASKS`: every task, in the kernel's order (tgid, or tid in the
    /// threads scope).
    pub fn tasks(&mut self, req: &TaskRequest) -> Result<Vec<Record>, Error> {
        let mut out = Vec::new();
        self.for_each_task(req, |r| out.push(r))?;
        Ok(out)
    }
}

/// Opens the procfs root directory `path` for the kernel to judge
/// requests by: read-only, as a directory (an `O_PATH` descriptor is
/// refused by the kernel, as it proves no right to read).
pub fn open_procfs(path: &Path) -> Result<OwnedFd, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_DIRECTORY: a file that is not a directory fails here, clearly.
    File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(path)
        .map(OwnedFd::from)
        .map_err(|err| Error::Io {
            what: "opening /proc (nproc answers what /proc shows)",
            err,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nproc_proto::field_id;

    #[test]
    fn request_from_names() {
        let r = TaskRequest::from_names(&["tgid", "wchan"], Scope::Processes).unwrap();
        assert!(r.fields.contains(field_id::TGID));
        assert!(r.fields.contains(field_id::WCHAN));
        assert!(!r.fields.contains(field_id::COMM));
        let a = r.attrs();
        assert_eq!(a.len(), 2, "no pid attribute without a pid");
        assert_eq!(a[1], (attr::SCOPE, 1u32.to_ne_bytes().to_vec()));
        let r = r.with_pid(Scope::Children, 7);
        let a = r.attrs();
        assert_eq!(
            a[1],
            (attr::SCOPE, (Scope::Children as u32).to_ne_bytes().to_vec())
        );
        assert_eq!(a[2], (attr::PID, 7u32.to_ne_bytes().to_vec()));
    }

    #[test]
    fn unknown_field_name() {
        let e = TaskRequest::from_names(&["tgid", "nosuch"], Scope::Threads).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown field `nosuch` (the kernel's fields: --fields)"
        );
    }

    #[test]
    fn error_texts() {
        assert_eq!(
            Error::NoFamily.to_string(),
            "kernel has no nproc family (CONFIG_NPROC): use ps"
        );
        let e = Error::from_kernel("GET_TASKS", -1, Some("no".into()));
        assert_eq!(e.to_string(), "nproc GET_TASKS: permission denied: no");
        let e = Error::from_kernel("GET_TASKS", -22, Some("unknown field id 63".into()));
        assert!(matches!(e, Error::Kernel { errno: 22, .. }));
        assert!(e.to_string().ends_with(": unknown field id 63"), "{e}");
    }
}
