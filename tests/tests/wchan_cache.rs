//! The wchan cache: LRU behaviour, generations, and a multi-threaded
//! hammer that checks every answer against the truth.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kallsyms_mirror::cache::{
    WchanCache, CACHE_NAME_MAX, RAW_NAME_LEN, SHORT_NAME_LEN, SHORT_NAME_MAX,
};

fn truth(addr: u64, generation_salt: u64) -> String {
    format!("{}_{}", name_of(addr), generation_salt)
}

/// The name of `addr` without its salt: one address in three has a name
/// of about 90 bytes (its entry uses its second line), one in six of
/// about 150 (the third too), so that every line races the writers, and
/// shorter names reuse entries that longer ones held.
fn name_of(addr: u64) -> String {
    match (addr / 16) % 6 {
        0 | 3 => format!("fn_{addr:x}_{}", "x".repeat(64)),
        1 => format!("fn_{addr:x}_{}", "y".repeat(124)),
        _ => format!("fn_{addr:x}"),
    }
}

#[test]
fn hit_after_insert_and_miss_after_invalidate() {
    let c: WchanCache<4, 2> = WchanCache::new();
    assert!(c.get(0x1000).is_none());
    let g = c.generation();
    assert!(c.insert(0x1000, g, b"schedule_timeout"));
    assert_eq!(c.get(0x1000).as_deref(), Some(&b"schedule_timeout"[..]));
    c.invalidate();
    assert!(
        c.get(0x1000).is_none(),
        "a module load/unload must make every entry stale"
    );
    // An answer computed under the old generation is refused.
    assert!(!c.insert(0x1000, g, b"stale"));
    assert!(c.get(0x1000).is_none());
    // A new answer under the current generation is served again.
    assert!(c.insert(0x1000, c.generation(), b"fresh"));
    assert_eq!(c.get(0x1000).as_deref(), Some(&b"fresh"[..]));
}

#[test]
fn long_names_are_not_cached() {
    let c: WchanCache<4, 2> = WchanCache::new();
    let long = vec![b'x'; CACHE_NAME_MAX + 1];
    assert!(!c.insert(1, c.generation(), &long));
    assert!(c.get(1).is_none());
    let max = vec![b'y'; CACHE_NAME_MAX];
    assert!(c.insert(2, c.generation(), &max));
    assert_eq!(c.get(2).as_deref(), Some(max.as_slice()));
}

/// `get_into` leaves the buffer as `lookup_symbol_name()` does: the name,
/// its NUL, zeros up to the end of its words (`SHORT_NAME_LEN` bytes for
/// a name in the entry's first line, `RAW_NAME_LEN` for a longer one), the
/// rest untouched; for every length a name can have in the cache, so each
/// byte of all twenty-one words crosses the shift into place. Each name
/// goes into an entry the longest name held before (one set of one way),
/// whose lines past the ones it needs it leaves as they were: no byte of
/// them may show (a short name's second line, a medium one's third).
#[test]
fn get_into_writes_the_name_and_its_nul() {
    let c: WchanCache<1, 1> = WchanCache::new();
    let long: Vec<u8> = vec![b'L'; CACHE_NAME_MAX];
    for len in 0..=CACHE_NAME_MAX {
        assert!(c.insert(0x1, c.generation(), &long));
        let name: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        let addr = 0x100 + len as u64;
        assert!(c.insert(addr, c.generation(), &name), "len {len}");
        let mut buf = [0xffu8; RAW_NAME_LEN + 24];
        assert_eq!(c.get_into(addr, &mut buf), Some(len), "len {len}");
        assert_eq!(&buf[..len], name.as_slice(), "len {len}");
        let end = if len <= SHORT_NAME_MAX {
            SHORT_NAME_LEN
        } else {
            RAW_NAME_LEN
        };
        assert!(buf[len..end].iter().all(|&b| b == 0), "len {len}");
        assert!(buf[end..].iter().all(|&b| b == 0xff), "len {len}");
    }
}

#[test]
fn get_into_misses_write_nothing() {
    let c: WchanCache<4, 2> = WchanCache::new();
    let mut buf = [0xffu8; RAW_NAME_LEN];
    assert_eq!(c.get_into(1, &mut buf), None);
    assert!(c.insert(1, c.generation(), b"do_sys_poll"));
    // Too short for the fixed-size copy: refused, nothing written.
    let mut short = [0xffu8; RAW_NAME_LEN - 1];
    assert_eq!(c.get_into(1, &mut short), None);
    assert!(short.iter().all(|&b| b == 0xff));
    c.invalidate();
    assert_eq!(c.get_into(1, &mut buf), None);
    assert!(buf.iter().all(|&b| b == 0xff));
}

#[test]
fn recently_used_entry_survives_eviction() {
    // One set of two ways: every address maps to it.
    let c: WchanCache<1, 2> = WchanCache::new();
    let g = c.generation();
    assert!(c.insert(1, g, b"a"));
    assert!(c.insert(2, g, b"b"));
    // Touch 1 so that 2 is the one not used since it was inserted.
    assert!(c.get(1).is_some());
    assert!(c.insert(3, g, b"c"));
    assert!(c.get(1).is_some());
    assert!(c.get(2).is_none());
    assert_eq!(c.get(3).as_deref(), Some(&b"c"[..]));
}

/// Four threads read and insert a shifting address set while a fifth bumps
/// the generation a fixed number of times; the readers keep going until
/// the last bump, so every bump races reads and inserts. Every hit must be
/// the name inserted for that address under the current generation, never
/// a torn or stale name (a third of the names take both lines of an
/// entry); afterwards the generation counts every bump, and one more
/// invalidation empties the cache for every address.
#[test]
fn concurrent_readers_never_see_torn_or_stale_names() {
    const BUMPS: u64 = 500;
    let cache: Arc<WchanCache<16, 4>> = Arc::new(WchanCache::new());
    let g0 = cache.generation();
    let stop = Arc::new(AtomicBool::new(false));
    let addr_of = |i: u64, t: u64| 0xffff_ffff_8100_0000 + ((i * 7 + t) % 300) * 16;
    let mut handles = Vec::new();
    for t in 0..4u64 {
        let cache = Arc::clone(&cache);
        let stop = Arc::clone(&stop);
        handles.push(std::thread::spawn(move || {
            let mut checked = 0u64;
            let mut i = 0u64;
            while !stop.load(Ordering::Acquire) || i < 20_000 {
                let addr = addr_of(i, t);
                i += 1;
                let g = cache.generation();
                match cache.get(addr) {
                    Some(name) => {
                        // The cache may answer for generation g or a later
                        // one (the read raced a bump); the name's salt tells.
                        let s = std::str::from_utf8(&name).expect("names are ASCII");
                        let (prefix, salt) = s.rsplit_once('_').expect("salted name");
                        assert_eq!(prefix, name_of(addr), "torn or foreign name {s}");
                        let salt: u64 = salt.parse().expect("salt");
                        assert!(salt >= g, "stale entry of generation {salt} served at {g}");
                        checked += 1;
                    }
                    None => {
                        cache.insert(addr, g, truth(addr, g).as_bytes());
                    }
                }
            }
            checked
        }));
    }
    for _ in 0..BUMPS {
        std::thread::sleep(std::time::Duration::from_micros(100));
        cache.invalidate();
    }
    stop.store(true, Ordering::Release);
    let hits: u64 = handles.into_iter().map(|h| h.join().expect("reader")).sum();
    assert!(hits > 0, "the cache never hit");
    assert_eq!(cache.generation(), g0 + BUMPS, "every bump counted");
    cache.invalidate();
    for i in 0..300 {
        let addr = addr_of(i, 0);
        assert_eq!(cache.get(addr), None, "{addr:#x} served after invalidation");
    }
}
