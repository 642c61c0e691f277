//! The engine's planner: how a transfer is cut into chunks, how many threads copy it, which
//! buffers it asks for at once, and which chunks go around the page cache, decided from facts
//! alone. Nothing here makes a system or GPU call; the engine gathers the facts, asks for the
//! plan and carries it out (`pipeline.rs`), so every rule is tested below as a table of cases.
//!
//! Two facts cost something to learn, so the planner asks for them through [`Ask`], each at
//! most once and only when the plan depends on the answer: whether a read starts in the page
//! cache (a `cachestat` call) and how many workers there are (asking starts the worker pool,
//! which a request its calling thread serves alone never needs).
//!
//! The measurements behind the rules are in docs/decisions.md ("The engine"); each constant
//! carries its own figures.
#![deny(unsafe_code)]

use super::DirectFd;
use crate::vocab::Direction;

/// The engine's settings the planner reads, fixed when the engine is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// Bytes per chunk: `HIPFILE_CHUNK_SIZE` (4 MiB by default; the bounce buffer's size), or
    /// a stage's segment for an engine that copies through the staging kernel.
    pub(crate) chunk: usize,
    /// Largest request served whole on the calling thread: the chunk, or zero for an engine of
    /// stream-ordered I/O, whose device copies never go through a synchronous copy.
    pub(crate) single_max: usize,
    /// Requests of at most this many bytes are served by the calling thread alone.
    pub(crate) inline_threshold: usize,
    /// Participants one request may have, the calling thread included.
    pub(crate) parallelism: usize,
}

/// How a transfer's bytes reach its memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Straight between the file and the application's host memory.
    Host,
    /// Device memory, through the pool's pinned bounce buffers.
    Bounce,
    /// Device memory, through a stream's staging kernel of this many slots.
    Stage {
        /// Slots of the stage: a participant holds one at a time.
        slots: usize,
    },
}

/// What the engine knows about a transfer of more than one chunk when it plans it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Facts {
    /// Bytes to move.
    pub(crate) size: usize,
    /// Read or write.
    pub(crate) dir: Direction,
    /// How the bytes reach memory.
    pub(crate) route: Route,
    /// No other request of several chunks runs on the engine.
    pub(crate) alone: bool,
}

/// The facts that cost something to learn, asked for at most once each, only when the plan
/// depends on them.
pub(crate) trait Ask {
    /// Whether the read starts in the page cache; `None` where the kernel cannot say.
    fn warm(&mut self) -> Option<bool>;
    /// Worker threads that can help (asking starts the pool; 0 when it cannot start).
    fn workers(&mut self) -> usize;
}

/// How a transfer of more than one chunk runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Bytes per chunk.
    pub(crate) chunk: usize,
    /// Chunks of the transfer.
    pub(crate) chunks: usize,
    /// Helper jobs sharing the chunks with the calling thread.
    pub(crate) helpers: usize,
    /// Bounce buffers the participants want at once (two each: one `pread`, one copy in
    /// flight), offered to the pool as one fill ([`fill_buffers`]); 0 when the route takes
    /// none that way.
    pub(crate) fill: usize,
}

/// At most this many participants copy a read whose data is in the page cache. Such a copy is
/// bound by memory bandwidth, not by the number of threads: on the H200 machine (16 cores) 1 GiB
/// reads with 10 participants ran at 50.12 / 50.46 GB/s for 0.209 / 0.206 CPU seconds per GiB,
/// with 12 at 49.49 / 49.99 for 0.251 / 0.249, with 16 at 49.46 / 49.51 for 0.332 / 0.333
/// (two rounds in one run). Cold reads and writes wait for the disk and keep every participant.
const WARM_READ_PARTICIPANTS: usize = 10;

/// A read that has the engine to itself is cut finer while it would give each participant
/// fewer chunks than this: a 16 MiB read in 4 MiB chunks kept six of its ten participants
/// idle. H200, interleaved three times against the fixed chunk: 16 MiB reads from one thread
/// 16.1-16.5 -> 20.7-21.4 GB/s; 64 MiB, 256 MiB and 1 GiB reads from one thread and 16 or
/// 64 MiB reads from eight threads unchanged within the noise
/// (`benches/gpu/2026-12-02-h200-round10-probes.txt`).
const FINE_CHUNKS_PER_PARTICIPANT: usize = 4;
/// The finest chunk a read is cut into.
const FINE_CHUNK_MIN: usize = 1 << 20;

/// A request's bounce buffers come as one fill only when the pool lacks at least this many of
/// them: below that, getting them one by one costs less than a mapping and its registration.
const FILL_MIN: usize = 4;

/// Smallest chunk worth sending around the page cache: shorter ones always go through the
/// buffered descriptor.
pub(crate) const DIRECT_MIN: usize = 64 << 10;

impl Settings {
    /// Whether a request of `size` bytes runs whole on the calling thread, with no plan: one
    /// chunk at most (small requests, targets T4/T9), never on an engine of stream-ordered
    /// I/O (its `single_max` is zero; only an empty request is served that way there).
    #[inline(always)]
    pub(crate) fn single(&self, size: usize) -> bool {
        size <= self.single_max
    }

    /// The plan of a transfer of more than one chunk (or of any size on an engine of
    /// stream-ordered I/O).
    pub(crate) fn plan(&self, f: Facts, ask: &mut impl Ask) -> Plan {
        let read = f.dir == Direction::Read;
        // Whether the read starts in the page cache, asked at most once; a write never starts
        // there.
        let mut warm_answer = None;
        let mut warm = |ask: &mut dyn Ask| {
            *warm_answer.get_or_insert_with(|| if read { ask.warm() } else { None })
        };
        let inline = f.size <= self.inline_threshold || f.size <= self.chunk;
        let mut cap = if inline {
            0
        } else {
            participants(self.parallelism, || warm(ask)).saturating_sub(1)
        };
        if let Route::Stage { slots } = f.route {
            // Through a stage, a participant holds one slot: more than that would only wait.
            cap = cap.min(slots.saturating_sub(1));
        }
        let workers = if inline { 0 } else { ask.workers() };
        let bounced_read = read && f.route == Route::Bounce;
        // Reads of several threads at once, and stream-ordered requests (their stage's
        // segments), keep the chunk.
        let fine = !inline && bounced_read && f.alone && warm(ask) == Some(true);
        let chunk = if fine {
            fine_chunk(self.chunk, f.size, workers.min(cap) + 1)
        } else {
            self.chunk
        };
        let chunks = f.size.div_ceil(chunk);
        let helpers = if inline || chunks <= 1 {
            0
        } else {
            workers.min(chunks - 1).min(cap)
        };
        Plan {
            chunk,
            chunks,
            helpers,
            // Not writes: their participants ask the pool for buffers one by one, and the
            // first would then fault in the whole fill alone.
            fill: if bounced_read { 2 * (helpers + 1) } else { 0 },
        }
    }
}

/// Participants for a request: `parallelism`, but no more than [`WARM_READ_PARTICIPANTS`] for a
/// read known to start in the page cache (`warm` says `Some(true)`; `None` when unknown). `warm`
/// is asked only when the cap could change the count, so machines with few threads make no
/// `cachestat` call for it.
fn participants(parallelism: usize, warm: impl FnOnce() -> Option<bool>) -> usize {
    if parallelism <= WARM_READ_PARTICIPANTS {
        return parallelism;
    }
    match warm() {
        Some(true) => WARM_READ_PARTICIPANTS,
        _ => parallelism,
    }
}

/// The chunk for a page-cache read of `size` bytes to device memory that no other request of
/// several chunks shares the engine with: `chunk` halved while the read would give its
/// `participants` fewer than [`FINE_CHUNKS_PER_PARTICIPANT`] chunks each, down to
/// [`FINE_CHUNK_MIN`] (and never below a multiple of 4 KiB). With ten participants a 16 or
/// 64 MiB read goes in 1 MiB chunks, a 1 GiB read keeps 4 MiB. Reads of several threads at
/// once keep the chunk: their participants are busy anyway, and 1 MiB chunks everywhere made
/// 64 MiB reads from eight threads slower (47.1 -> 39.4 GB/s, round six).
fn fine_chunk(chunk: usize, size: usize, participants: usize) -> usize {
    let mut c = chunk;
    while c / 2 >= FINE_CHUNK_MIN
        && c % (8 << 10) == 0
        && size.div_ceil(c) < FINE_CHUNKS_PER_PARTICIPANT * participants
    {
        c /= 2;
    }
    c
}

/// How many of the `wanted` buffers a request's fill makes, with `allocated` of the pool's
/// `max` buffers made already: those it lacks within the budget, when that is at least
/// [`FILL_MIN`]; otherwise 0 (no fill: the participants ask the pool one by one).
pub(crate) fn fill_buffers(wanted: usize, allocated: usize, max: usize) -> usize {
    let n = wanted
        .saturating_sub(allocated)
        .min(max.saturating_sub(allocated));
    if n < FILL_MIN {
        0
    } else {
        n
    }
}

/// Whether the chunk of `len` bytes at file offset `off`, in memory at `mem`, may go through
/// the `O_DIRECT` twin `d`: large enough, aligned in file offset, length and memory.
#[inline(always)]
pub(crate) fn direct_ok(d: &DirectFd, mem: usize, len: usize, off: u64) -> bool {
    len >= DIRECT_MIN
        && off % d.offset_align == 0
        && len as u64 % d.offset_align == 0
        && mem as u64 % d.mem_align == 0
}

/// Whether a read chunk that may go direct ([`direct_ok`]) does, given the pages of it that
/// `cachestat` finds `cached` (`None`: the kernel cannot say): only when none is. A cold chunk
/// is then neither copied through the cache nor pushes useful data out of it (target T2); a
/// cached one copies faster from the cache than from the disk.
#[inline(always)]
pub(crate) fn read_direct(cached: Option<u64>) -> bool {
    cached == Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::env::{DEFAULT_CHUNK_SIZE, DEFAULT_INLINE_THRESHOLD};

    const K: usize = 1 << 10;
    const M: usize = 1 << 20;
    const G: usize = 1 << 30;

    /// Fixed answers, and how often each was asked.
    struct Answers {
        warm: Option<bool>,
        workers: usize,
        asked: (usize, usize),
    }

    impl Ask for Answers {
        fn warm(&mut self) -> Option<bool> {
            self.asked.0 += 1;
            self.warm
        }
        fn workers(&mut self) -> usize {
            self.asked.1 += 1;
            self.workers
        }
    }

    /// The synchronous engine with the default settings on a machine of 16 threads.
    const ENGINE: Settings = Settings {
        chunk: DEFAULT_CHUNK_SIZE,
        single_max: DEFAULT_CHUNK_SIZE,
        inline_threshold: DEFAULT_INLINE_THRESHOLD,
        parallelism: 16,
    };

    /// A stage's engine: 2 MiB segments, nothing served whole.
    const STAGED: Settings = Settings {
        chunk: 2 * M,
        single_max: 0,
        ..ENGINE
    };

    const R: Direction = Direction::Read;
    const W: Direction = Direction::Write;
    const HOST: Route = Route::Host;
    const BOUNCE: Route = Route::Bounce;
    const STAGE: Route = Route::Stage { slots: 8 };

    /// One case: settings, facts, answers (page cache, workers); the plan, and whether each
    /// answer was asked for.
    struct Case {
        why: &'static str,
        settings: Settings,
        facts: (usize, Direction, Route, bool),
        answers: (Option<bool>, usize),
        plan: (usize, usize, usize, usize),
        asked: (bool, bool),
    }

    const fn case(
        why: &'static str,
        settings: Settings,
        facts: (usize, Direction, Route, bool),
        answers: (Option<bool>, usize),
        plan: (usize, usize, usize, usize),
        asked: (bool, bool),
    ) -> Case {
        Case {
            why,
            settings,
            facts,
            answers,
            plan,
            asked,
        }
    }

    const COLD: Option<bool> = Some(false);
    const WARM: Option<bool> = Some(true);
    const UNKNOWN: Option<bool> = None;
    const ALONE: bool = true;
    const SHARED: bool = false;

    /// Today's decisions, pinned: (size, dir, route, alone) and (page cache, workers) give
    /// (chunk, chunks, helpers, fill) and whether (page cache, workers) were asked.
    #[rustfmt::skip]
    const CASES: &[Case] = &[
        case("a cold 1 GiB read keeps every participant and 4 MiB chunks",
            ENGINE, (G, R, BOUNCE, ALONE), (COLD, 15), (4 * M, 256, 15, 32), (true, true)),
        case("a warm 1 GiB read: at most 10 participants, enough chunks to keep 4 MiB",
            ENGINE, (G, R, BOUNCE, ALONE), (WARM, 15), (4 * M, 256, 9, 20), (true, true)),
        case("a warm 64 MiB read alone: 1 MiB chunks, four for each of ten participants",
            ENGINE, (64 * M, R, BOUNCE, ALONE), (WARM, 15), (M, 64, 9, 20), (true, true)),
        case("a warm 100 MiB read alone: halved once is enough",
            ENGINE, (100 * M, R, BOUNCE, ALONE), (WARM, 15), (2 * M, 50, 9, 20), (true, true)),
        case("a warm 16 MiB read alone: never below 1 MiB",
            ENGINE, (16 * M, R, BOUNCE, ALONE), (WARM, 15), (M, 16, 9, 20), (true, true)),
        case("a warm read while another runs keeps the chunk",
            ENGINE, (64 * M, R, BOUNCE, SHARED), (WARM, 15), (4 * M, 16, 9, 20), (true, true)),
        case("a warm read into host memory: no finer chunks, no bounce buffers",
            ENGINE, (64 * M, R, HOST, ALONE), (WARM, 15), (4 * M, 16, 9, 0), (true, true)),
        case("a read the kernel cannot place counts as cold",
            ENGINE, (64 * M, R, BOUNCE, ALONE), (UNKNOWN, 15), (4 * M, 16, 15, 32), (true, true)),
        case("a device write: every participant, buffers one by one, the page cache not asked",
            ENGINE, (64 * M, W, BOUNCE, ALONE), (WARM, 15), (4 * M, 16, 15, 0), (false, true)),
        case("a host write",
            ENGINE, (64 * M, W, HOST, ALONE), (WARM, 15), (4 * M, 16, 15, 0), (false, true)),
        case("at most one helper per chunk beyond the first",
            ENGINE, (12 * M, R, BOUNCE, SHARED), (COLD, 15), (4 * M, 3, 2, 6), (true, true)),
        case("a last chunk shorter than the others",
            ENGINE, (10 * M + 1, R, BOUNCE, SHARED), (COLD, 15), (4 * M, 3, 2, 6), (true, true)),
        case("no worker could start: the calling thread alone",
            ENGINE, (64 * M, R, BOUNCE, SHARED), (COLD, 0), (4 * M, 16, 0, 2), (true, true)),
        case("8 threads: the cap cannot apply, the page cache asked only for finer chunks",
            Settings { parallelism: 8, ..ENGINE },
            (16 * M, R, BOUNCE, ALONE), (WARM, 7), (M, 16, 7, 16), (true, true)),
        case("8 threads, a cold read alone",
            Settings { parallelism: 8, ..ENGINE },
            (16 * M, R, BOUNCE, ALONE), (COLD, 7), (4 * M, 4, 3, 8), (true, true)),
        case("8 threads, a read not alone: no cachestat at all",
            Settings { parallelism: 8, ..ENGINE },
            (16 * M, R, BOUNCE, SHARED), (WARM, 7), (4 * M, 4, 3, 8), (false, true)),
        case("one thread per request (HIPFILE_PARALLEL_IO off)",
            Settings { parallelism: 1, ..ENGINE },
            (64 * M, R, BOUNCE, SHARED), (WARM, 15), (4 * M, 16, 0, 2), (false, true)),
        case("at or under the inline threshold: the calling thread alone, nothing asked",
            Settings { inline_threshold: 64 * M, ..ENGINE },
            (64 * M, R, BOUNCE, ALONE), (WARM, 15), (4 * M, 16, 0, 2), (false, false)),
        case("just over the inline threshold",
            Settings { inline_threshold: 64 * M, ..ENGINE },
            (64 * M + 1, R, BOUNCE, SHARED), (COLD, 15), (4 * M, 17, 15, 32), (true, true)),
        case("a staged read of one segment: the worker alone",
            STAGED, (4 * K, R, STAGE, ALONE), (WARM, 15), (2 * M, 1, 0, 0), (false, false)),
        case("a staged read: one participant per slot, the segment kept",
            STAGED, (16 * M, R, STAGE, ALONE), (WARM, 15), (2 * M, 8, 7, 0), (true, true)),
        case("a staged cold read of 64 MiB: still one participant per slot",
            STAGED, (64 * M, R, STAGE, ALONE), (COLD, 15), (2 * M, 32, 7, 0), (true, true)),
        case("a staged write",
            STAGED, (16 * M, W, STAGE, ALONE), (WARM, 15), (2 * M, 8, 7, 0), (false, true)),
        case("a stage of one slot: the worker alone",
            STAGED, (16 * M, R, Route::Stage { slots: 1 }, ALONE), (COLD, 15), (2 * M, 8, 0, 0), (true, true)),
        case("stream-ordered I/O on host memory: a request of one chunk, inline",
            STAGED, (2 * M, R, HOST, ALONE), (WARM, 15), (2 * M, 1, 0, 0), (false, false)),
    ];

    #[test]
    fn the_plan_of_every_case() {
        for c in CASES {
            let (size, dir, route, alone) = c.facts;
            let mut answers = Answers {
                warm: c.answers.0,
                workers: c.answers.1,
                asked: (0, 0),
            };
            let plan = c.settings.plan(
                Facts {
                    size,
                    dir,
                    route,
                    alone,
                },
                &mut answers,
            );
            let (chunk, chunks, helpers, fill) = c.plan;
            assert_eq!(
                plan,
                Plan {
                    chunk,
                    chunks,
                    helpers,
                    fill
                },
                "{}",
                c.why
            );
            assert_eq!(
                answers.asked,
                (usize::from(c.asked.0), usize::from(c.asked.1)),
                "{}: (page cache, workers) asked",
                c.why
            );
        }
    }

    #[test]
    fn small_requests_run_whole_on_the_calling_thread() {
        assert!(ENGINE.single(0));
        assert!(ENGINE.single(4 * K));
        assert!(ENGINE.single(4 * M), "one chunk");
        assert!(!ENGINE.single(4 * M + 1));
        // An engine of stream-ordered I/O serves only an empty request that way.
        assert!(STAGED.single(0));
        assert!(!STAGED.single(1));
    }

    #[test]
    fn warm_reads_get_at_most_ten_participants() {
        assert_eq!(participants(16, || Some(true)), 10);
        assert_eq!(participants(8, || Some(true)), 8);
        assert_eq!(participants(16, || Some(false)), 16);
        assert_eq!(participants(16, || None), 16);
        assert_eq!(participants(1, || Some(true)), 1);
        // At or under the cap the page cache is not asked.
        assert_eq!(participants(10, || unreachable!("not asked")), 10);
    }

    #[test]
    fn a_read_alone_with_few_chunks_per_participant_is_cut_finer() {
        // Ten participants: 64 MiB in 4 MiB chunks is 16 (under 40), in 1 MiB 64.
        assert_eq!(fine_chunk(4 * M, 64 * M, 10), M);
        // 160 MiB: 40 chunks of 4 MiB are enough.
        assert_eq!(fine_chunk(4 * M, 160 * M, 10), 4 * M);
        assert_eq!(fine_chunk(4 * M, 100 * M, 10), 2 * M);
        assert_eq!(fine_chunk(4 * M, 1 << 30, 10), 4 * M);
        // Never below 1 MiB, and a chunk that is no multiple of 8 KiB is not halved.
        assert_eq!(fine_chunk(4 * M, 5 * M, 16), M);
        assert_eq!(fine_chunk(M, 5 * M, 16), M);
        assert_eq!(fine_chunk(4 * M + 4096, 5 * M, 16), 4 * M + 4096);
        // Halved only until each participant has four: 16 chunks of 4 MiB for four.
        assert_eq!(fine_chunk(16 * M, 64 * M, 4), 4 * M);
    }

    #[test]
    fn a_fill_makes_what_the_pool_lacks_when_that_is_four_or_more() {
        // (wanted, allocated, max) -> buffers of the fill
        #[rustfmt::skip]
        let cases = [
            ((20, 0, 64), 20, "a fresh pool: all of them at once"),
            ((20, 16, 64), 4, "four lacking: a fill"),
            ((20, 17, 64), 0, "three lacking: one by one"),
            ((20, 20, 64), 0, "none lacking"),
            ((20, 30, 64), 0, "more than wanted made already"),
            ((20, 0, 10), 10, "no more than the budget holds"),
            ((20, 8, 10), 0, "two left in the budget"),
            ((2, 0, 64), 0, "a request of one participant"),
            ((32, 0, 64), 32, "sixteen participants"),
        ];
        for ((wanted, allocated, max), n, why) in cases {
            assert_eq!(fill_buffers(wanted, allocated, max), n, "{why}");
        }
    }

    #[test]
    fn aligned_cold_chunks_go_around_the_page_cache() {
        let d = DirectFd {
            fd: -1,
            offset_align: 4096,
            mem_align: 512,
        };
        // (memory address, length, file offset) -> may go direct
        #[rustfmt::skip]
        let cases = [
            ((0x10_0000, 64 * K, 0), true, "aligned, 64 KiB"),
            ((0x10_0000, 4 * M, 8 * M as u64), true, "a whole chunk"),
            ((0x10_0000, 60 * K, 0), false, "shorter than 64 KiB"),
            ((0x10_0000, 64 * K, 512), false, "file offset unaligned"),
            ((0x10_0000, 64 * K + 512, 0), false, "length unaligned"),
            ((0x10_0100, 64 * K, 0), false, "memory unaligned"),
            ((0x10_0200, 64 * K, 0), true, "memory aligned to 512 is enough"),
        ];
        for ((mem, len, off), ok, why) in cases {
            assert_eq!(direct_ok(&d, mem, len, off), ok, "{why}");
        }
        assert!(read_direct(Some(0)), "nothing cached: direct");
        assert!(!read_direct(Some(1)), "any page cached: through the cache");
        assert!(!read_direct(None), "unknown: through the cache");
    }
}
