//! What `nps` spends per task in userspace: decoding one `GET_TASKS`
//! message ([`fill_task`]) and printing its line ([`Layout::line`]), for
//! the benchmark's `nps -eo pid,tid,...,wchan` and `nps ax`.
//!
//! The dump is synthetic but laid out as the kernel lays it out (each
//! field the plan asks for, in id order, native endian, 4-byte padded),
//! 4,000 tasks as in the benchmark guest, printed in the C locale as
//! there. `cargo bench -p nps --bench dump`; the numbers are per task.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nproc_genl::TaskView;
use nproc_proto::{field_id as f, FieldType, TASK_FIELDS};
use nps::netlink::fill_task;
use nps::ps::Plan;
use nps::render::{Charset, Ctx, Names, TtyNamer};
use nps::{Global, Task};
use std::hint::black_box;

const TASKS: u32 = 4000;
const EO: &str = "pid,tid,ppid,uid,stat,vsz,rss,time,nlwp,comm,wchan";

const GLOBAL: Global = Global {
    hertz: 100,
    page_size: 4096,
    boot_time: 1_800_000_000,
    mem_total_kib: 24 << 20,
    uptime_centis: 360_000,
    pid_max: Some(4_194_304),
};

fn plan(args: &[&str]) -> Plan {
    nps::run::plan_for(args, &GLOBAL, 80).expect("a listing command line")
}

fn put(out: &mut Vec<u8>, id: u16, payload: &[u8]) {
    out.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    out.extend_from_slice(&id.to_ne_bytes());
    out.extend_from_slice(payload);
    out.resize(out.len().next_multiple_of(4), 0);
}

/// The task nests of a dump answering `plan`: a guest's sleeping
/// processes, each with its own pid.
fn dump(plan: &Plan) -> Vec<Vec<u8>> {
    let want = plan.want();
    let mut fields = want.fields;
    for id in nps::netlink::fields::IDENTITY {
        fields.set(*id);
    }
    if want.wchan {
        fields.set(f::WCHAN);
    }
    if want.cmdline {
        fields.set(f::CMDLINE);
    }
    (0..TASKS)
        .map(|i| {
            let pid = 300 + i;
            let mut m = Vec::new();
            for d in TASK_FIELDS.iter().filter(|d| fields.contains(d.id)) {
                let n: u64 = match d.id {
                    f::TGID | f::TID | f::PGID | f::SID => pid.into(),
                    f::PPID => 1,
                    f::TPGID => u64::from(u32::MAX),
                    f::STATE => b'S'.into(),
                    f::NR_THREADS => 1,
                    f::VSIZE => 2_400 << 10,
                    f::RESIDENT | f::RSS => 180,
                    f::UTIME => u64::from(i % 700),
                    f::STIME => 3,
                    f::START_TIME => 4_000 + u64::from(i),
                    _ => 0,
                };
                match d.ty {
                    FieldType::U32 | FieldType::S32 => put(&mut m, d.id, &(n as u32).to_ne_bytes()),
                    FieldType::U64 => put(&mut m, d.id, &n.to_ne_bytes()),
                    FieldType::String if d.id == f::WCHAN => {
                        let w: &[u8] = if i % 3 == 0 {
                            b"hrtimer_nanosleep\0"
                        } else {
                            b"do_nanosleep\0"
                        };
                        put(&mut m, d.id, w)
                    }
                    FieldType::String => put(&mut m, d.id, b"kfast-nproc-gue\0"),
                    FieldType::Bytes => put(&mut m, d.id, b"/bin/kfast-nproc-guest\0sleep\0"),
                }
            }
            m
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("nps per task");
    group.throughput(Throughput::Elements(TASKS.into()));
    for (name, args) in [("-eo", &["-eo", EO][..]), ("ax", &["ax"][..])] {
        let plan = plan(args);
        let msgs = dump(&plan);
        group.bench_function(format!("decode {name}"), |b| {
            let mut t = Task::empty(0, 0);
            b.iter(|| {
                for m in &msgs {
                    fill_task(&TaskView::from_nest(m), 4096, &mut t).expect("well formed");
                    black_box(&t);
                }
            })
        });
        let mut tty = TtyNamer::new("/nonexistent");
        let mut names = Names::new();
        let mut ctx = Ctx {
            global: &GLOBAL,
            charset: Charset::Bytes,
            tty: &mut tty,
            names: &mut names,
            now: 1_800_003_600,
            forest: Default::default(),
            environ: false,
        };
        let mut task = Task::empty(0, 0);
        let tasks: Vec<Task> = msgs
            .iter()
            .map(|m| {
                fill_task(&TaskView::from_nest(m), 4096, &mut task).expect("well formed");
                task.clone()
            })
            .collect();
        let mut out = Vec::with_capacity(1 << 20);
        group.bench_function(format!("render {name}"), |b| {
            b.iter(|| {
                out.clear();
                for t in &tasks {
                    plan.layout.line(Some(t), &mut ctx, &mut out);
                }
                black_box(&out);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
