//! `waiters N`: N threads blocked in as many different kernel wait paths
//! as a process can reach alone, round robin, so that a task list's wchan
//! column names many functions, as on a real machine, not one.

use std::os::fd::RawFd;
use std::time::Duration;

/// One way to block, forever or for a day.
type Wait = fn() -> ();

/// A pipe whose write end stays open: reads and polls on it block.
fn pipe() -> (RawFd, RawFd) {
    let mut p = [0; 2];
    // SAFETY: pipe(2) writes two descriptors into the array.
    unsafe { libc::pipe(p.as_mut_ptr()) };
    (p[0], p[1])
}

fn nanosleep() {
    std::thread::sleep(Duration::from_secs(86_400));
}

fn pipe_read() {
    let (r, _w) = pipe();
    let mut b = [0u8; 1];
    // SAFETY: read(2) into a local buffer from our pipe.
    unsafe { libc::read(r, b.as_mut_ptr().cast(), 1) };
}

fn poll() {
    let (r, _w) = pipe();
    let mut p = libc::pollfd {
        fd: r,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) on one local pollfd.
    unsafe { libc::poll(&mut p, 1, -1) };
}

fn select() {
    let (r, _w) = pipe();
    // An fd_set holds descriptors below FD_SETSIZE only.
    if !(0..libc::FD_SETSIZE as RawFd).contains(&r) {
        return;
    }
    // SAFETY: an fd_set zeroed then set for one descriptor below
    // FD_SETSIZE (checked above); select(2) with no timeout.
    unsafe {
        let mut set: libc::fd_set = std::mem::zeroed();
        libc::FD_SET(r, &mut set);
        libc::select(
            r + 1,
            &mut set,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
    }
}

fn epoll() {
    let (r, _w) = pipe();
    // SAFETY: epoll_create1(2), epoll_ctl(2) and epoll_wait(2) on our
    // descriptors and local structures.
    unsafe {
        let ep = libc::epoll_create1(0);
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: 0,
        };
        libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, r, &mut ev);
        libc::epoll_wait(ep, &mut ev, 1, -1);
    }
}

fn futex() {
    let word = std::sync::atomic::AtomicU32::new(0);
    // SAFETY: FUTEX_WAIT on a local word that nobody changes.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            0u32,
            std::ptr::null::<libc::timespec>(),
        )
    };
}

fn sigtimedwait() {
    // SAFETY: a local signal set; SIGRTMIN+1 is blocked in this thread
    // only, and nothing sends it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGRTMIN() + 1);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::sigtimedwait(&set, std::ptr::null_mut(), std::ptr::null());
    }
}

fn msgrcv() {
    // SAFETY: a private message queue and a local buffer.
    unsafe {
        let q = libc::msgget(libc::IPC_PRIVATE, 0o600);
        let mut buf = [0u8; 64];
        libc::msgrcv(q, buf.as_mut_ptr().cast(), 32, 0, 0);
    }
}

fn semop() {
    // SAFETY: a private semaphore (value 0) and a local sembuf.
    unsafe {
        let s = libc::semget(libc::IPC_PRIVATE, 1, 0o600);
        let mut op = libc::sembuf {
            sem_num: 0,
            sem_op: -1,
            sem_flg: 0,
        };
        libc::semop(s, &mut op, 1);
    }
}

fn unix_recv() {
    let mut sv = [0; 2];
    // SAFETY: socketpair(2) into a local array, recv(2) into a local buffer.
    unsafe {
        libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, sv.as_mut_ptr());
        let mut b = [0u8; 1];
        libc::recv(sv[0], b.as_mut_ptr().cast(), 1, 0);
    }
}

fn unix_accept() {
    // SAFETY: an abstract unix socket of our own, listened on and
    // accepted from; the address is a local structure.
    unsafe {
        let s = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
        let mut a: libc::sockaddr_un = std::mem::zeroed();
        a.sun_family = libc::AF_UNIX as libc::sa_family_t;
        // Autobind: an abstract address the kernel picks.
        libc::bind(s, (&a as *const libc::sockaddr_un).cast(), 2);
        libc::listen(s, 1);
        libc::accept(s, std::ptr::null_mut(), std::ptr::null_mut());
    }
}

fn eventfd() {
    // SAFETY: read(2) of eight bytes from our own eventfd (count 0).
    unsafe {
        let e = libc::eventfd(0, 0);
        let mut v = 0u64;
        libc::read(e, (&mut v as *mut u64).cast(), 8);
    }
}

fn clock_nanosleep() {
    let ts = libc::timespec {
        tv_sec: 86_400,
        tv_nsec: 0,
    };
    // SAFETY: clock_nanosleep(2) on CLOCK_MONOTONIC with a local timespec.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}

fn wait_child() {
    // SAFETY: fork(2): the child sleeps; this thread waits for it.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            libc::pause();
            libc::_exit(0);
        }
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

const WAITS: &[(&str, Wait)] = &[
    ("nanosleep", nanosleep),
    ("pipe read", pipe_read),
    ("poll", poll),
    ("select", select),
    ("epoll_wait", epoll),
    ("futex", futex),
    ("sigtimedwait", sigtimedwait),
    ("msgrcv", msgrcv),
    ("semop", semop),
    ("unix recv", unix_recv),
    ("unix accept", unix_accept),
    ("eventfd read", eventfd),
    ("clock_nanosleep", clock_nanosleep),
];

/// Starts `count` threads, thread i in wait i mod the ways above (a few
/// `wait_child` ones each add a process), then sleeps; every wait that
/// ends is entered again.
pub fn waiters(count: u32) -> Result<(), String> {
    // Pipes, sockets and event fds: more than the default 1,024.
    let lim = libc::rlimit {
        rlim_cur: 65_536,
        rlim_max: 65_536,
    };
    // SAFETY: setrlimit(2) with a local structure.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(format!(
            "RLIMIT_NOFILE 65536: {}",
            std::io::Error::last_os_error()
        ));
    }
    let forks = count.min(64);
    for i in 0..count {
        let (_, wait) = WAITS[i as usize % WAITS.len()];
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            // A wait that fails (a limit reached) ends in nanosleep.
            .spawn(move || loop {
                wait();
                nanosleep();
            })
            .map_err(|e| format!("waiter thread {i}: {e}"))?;
    }
    for i in 0..forks {
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| loop {
                wait_child();
                nanosleep();
            })
            .map_err(|e| format!("waiter fork thread {i}: {e}"))?;
    }
    let ways: Vec<&str> = WAITS.iter().map(|(n, _)| *n).collect();
    eprintln!(
        "kfast-shim-guest: {count} waiter threads in {} ways ({}), {forks} waiting for a child",
        ways.len(),
        ways.join(", ")
    );
    loop {
        std::thread::sleep(Duration::from_secs(86_400));
    }
}
