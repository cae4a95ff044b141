//! Reading a trace file on a thread of its own: the run's thread takes requests a batch at a time, so that
//! reading, checking and splitting lines (100 to 250 ns a line, `benches/parse.rs`) overlaps the simulation
//! instead of adding to it. The requests, their marks and positions, the errors and the counts are those of
//! the source read directly, in the same order; only where the reading has got to (`progress`) is a few
//! batches ahead, and the devices of requests are not kept (a run does not ask them).

use super::{PositionNamer, RequestSource, TraceError};
use crate::request::Request;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Requests a batch.
const BATCH: usize = 1024;

/// Batches the reading thread may be ahead of the run.
const BATCHES_AHEAD: usize = 4;

/// A request or an error (boxed: errors are rare, requests many), with the source's mark after it was read.
type Read = Result<(Request, u64), Box<(TraceError, u64)>>;

/// What the reading thread hands over: reads in order, and the source's counts after the last of them.
struct Batch {
    reads: Vec<Read>,
    progress: (u64, u64),
    skipped_lines: u64,
    timed: bool,
}

/// A source read on a thread of its own ([`read_ahead`]).
pub struct ReadAhead {
    batches: Receiver<Batch>,
    /// The reading thread, joined once it has sent its last batch (a panic there goes on here).
    reader: Option<JoinHandle<()>>,
    current: std::vec::IntoIter<Read>,
    mark: u64,
    progress: (u64, u64),
    skipped_lines: u64,
    timed: bool,
    positions: PositionNamer,
}

/// `source` read on a thread of its own where the machine has more than one CPU and the source can name its
/// positions without being held (a trace file); else (or where no thread can be started) `source` itself.
pub fn read_ahead(source: Box<dyn RequestSource>) -> Box<dyn RequestSource> {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    match source.position_namer() {
        Some(positions) if cpus > 1 => match ReadAhead::start(source, positions) {
            Ok(ahead) => Box::new(ahead),
            Err(source) => source,
        },
        _ => source,
    }
}

impl ReadAhead {
    /// Starts the reading thread and hands it `source`; gives `source` back if no thread can be started.
    fn start(
        source: Box<dyn RequestSource>,
        positions: PositionNamer,
    ) -> Result<ReadAhead, Box<dyn RequestSource>> {
        let (progress, skipped_lines, timed) =
            (source.progress(), source.skipped_lines(), source.timed());
        let (sender, batches) = sync_channel(BATCHES_AHEAD);
        let (hand_over, handed) = sync_channel::<Box<dyn RequestSource>>(1);
        let started = std::thread::Builder::new()
            .name("ftlsim trace reader".into())
            .spawn(move || {
                if let Ok(source) = handed.recv() {
                    read(source, sender);
                }
            });
        let Ok(reader) = started else {
            return Err(source);
        };
        hand_over.send(source).map_err(|refused| refused.0)?;
        Ok(ReadAhead {
            batches,
            reader: Some(reader),
            current: Vec::new().into_iter(),
            mark: 0,
            progress,
            skipped_lines,
            timed,
            positions,
        })
    }

    /// The reading thread has sent its last batch: it ends; a panic in it goes on in this thread.
    fn join_reader(&mut self) {
        if let Some(Err(panic)) = self.reader.take().map(JoinHandle::join) {
            std::panic::resume_unwind(panic);
        }
    }
}

/// The reading thread: the source's requests and errors in batches, till the source ends or the run no longer
/// takes them.
fn read(mut source: Box<dyn RequestSource>, batches: SyncSender<Batch>) {
    loop {
        let mut reads = Vec::with_capacity(BATCH);
        let mut ended = false;
        while reads.len() < BATCH {
            match source.next_request() {
                Some(Ok(request)) => reads.push(Ok((request, source.mark()))),
                Some(Err(e)) => reads.push(Err(Box::new((e, source.mark())))),
                None => {
                    ended = true;
                    break;
                }
            }
        }
        let batch = Batch {
            reads,
            progress: source.progress(),
            skipped_lines: source.skipped_lines(),
            timed: source.timed(),
        };
        if batches.send(batch).is_err() || ended {
            return;
        }
    }
}

impl RequestSource for ReadAhead {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        loop {
            if let Some(read) = self.current.next() {
                let (read, mark) = match read {
                    Ok((request, mark)) => (Ok(request), mark),
                    Err(error) => {
                        let (e, mark) = *error;
                        (Err(e), mark)
                    }
                };
                self.mark = mark;
                return Some(read);
            }
            let Ok(batch) = self.batches.recv() else {
                self.join_reader();
                return None;
            };
            self.progress = batch.progress;
            self.skipped_lines = batch.skipped_lines;
            self.timed = batch.timed;
            self.current = batch.reads.into_iter();
        }
    }

    fn skipped_lines(&self) -> u64 {
        self.skipped_lines
    }

    fn progress(&self) -> (u64, u64) {
        self.progress
    }

    fn position(&self) -> Option<String> {
        self.position_at(self.mark)
    }

    fn mark(&self) -> u64 {
        self.mark
    }

    fn position_at(&self, mark: u64) -> Option<String> {
        (self.positions)(mark)
    }

    fn position_namer(&self) -> Option<PositionNamer> {
        Some(self.positions.clone())
    }

    fn timed(&self) -> bool {
        self.timed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{open, TraceOptions};
    use std::sync::Arc;

    /// What a run reads of a source with each request: the request or the error's message, the mark, the
    /// position, whether it is timed.
    type Seen = (String, u64, Option<String>, bool);

    /// Everything a run reads of a source: each request's [`Seen`], then the lines skipped and the progress.
    fn drain(mut source: Box<dyn RequestSource>) -> (Vec<Seen>, u64, (u64, u64)) {
        let mut seen = Vec::new();
        while let Some(read) = source.next_request() {
            let what = match read {
                Ok(r) => format!("{r:?}"),
                Err(e) => e.to_string(),
            };
            seen.push((what, source.mark(), source.position(), source.timed()));
        }
        (seen, source.skipped_lines(), source.progress())
    }

    /// A trace in ftlsim's CSV of `lines` lines (with times: timed), with a bad line every 700 and one just
    /// after the first batch's requests, and blank lines.
    fn trace_file(name: &str, lines: usize) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!(
            "ftlsim-read-ahead-{}-{name}.csv",
            std::process::id()
        ));
        let mut text = String::new();
        for i in 0..lines {
            match i {
                _ if i % 700 == 699 || i == BATCH => text.push_str("W,oops,4096\n"),
                _ if i % 333 == 0 => text.push('\n'),
                _ => text.push_str(&format!("{},{},4096,,{i}.5\n", ["R", "W"][i % 2], i * 4096)),
            }
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_trace_read_ahead_reads_as_the_trace_itself() {
        for skip_bad_lines in [false, true] {
            let path = trace_file(&format!("skip{skip_bad_lines}"), 3 * BATCH + 17);
            let opts = TraceOptions {
                format: "csv".into(),
                skip_bad_lines,
                ..TraceOptions::default()
            };
            let spec = path.to_str().unwrap();
            let direct = open(spec, &opts, 1 << 40, 4096).unwrap();
            let positions = direct.position_namer().unwrap();
            let source = open(spec, &opts, 1 << 40, 4096).unwrap();
            let ahead = ReadAhead::start(source, positions).unwrap_or_else(|_| panic!("no thread"));
            let ahead = Box::new(ahead);
            let (direct, ahead) = (drain(direct), drain(ahead));
            std::fs::remove_file(&path).ok();
            assert_eq!(ahead, direct);
            // The trace has what the test is about: requests on both sides of batch boundaries, bad lines
            // read as errors or skipped, times.
            let requests = direct
                .0
                .iter()
                .filter(|r| r.0.starts_with("Request"))
                .count();
            assert!(requests > 3 * BATCH - 20, "{requests}");
            assert_eq!(
                direct.0.iter().any(|r| r.0.contains("oops")),
                !skip_bad_lines
            );
            assert_eq!(direct.1 > 0, skip_bad_lines);
            assert!(direct.0.iter().all(|r| r.3));
        }
    }

    /// A source that panics when asked for request `at`.
    struct Panicking {
        at: u64,
        next: u64,
    }

    impl RequestSource for Panicking {
        fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
            self.next += 1;
            assert!(
                self.next <= self.at,
                "the source broke at request {}",
                self.at
            );
            Some(Ok(Request::new(
                0.0,
                crate::request::Op::Write,
                self.next * 512,
                512,
            )))
        }

        fn progress(&self) -> (u64, u64) {
            (self.next, 0)
        }
    }

    #[test]
    #[should_panic(expected = "the source broke at request 2000")]
    fn a_panic_in_the_reading_thread_goes_on_in_the_run() {
        let source = Box::new(Panicking { at: 2000, next: 0 });
        let mut ahead =
            ReadAhead::start(source, Arc::new(|_| None)).unwrap_or_else(|_| panic!("no thread"));
        let mut served = 0;
        while ahead.next_request().is_some() {
            served += 1;
        }
        unreachable!("the trace ended quietly after {served} requests");
    }
}
