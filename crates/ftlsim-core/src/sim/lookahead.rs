//! The request source read ahead: the run loop serves one request while the next two are already read, so
//! that it can ask the host CPU for the memory they will touch (the shadow map's entry, the scheme's map
//! entries: a cache miss each on uniform random requests) before it needs it. What the source says about a
//! request (its error, its position) stays with the request.

use crate::request::Request;
use crate::trace::{RequestSource, TraceError};

/// Requests read before their turn.
const DEPTH: usize = 2;
/// Slots of the ring: room for the request returned and the ones ahead, a power of two.
const RING: usize = (DEPTH + 1).next_power_of_two();

pub(super) struct Lookahead {
    source: Box<dyn RequestSource>,
    /// A ring of the requests read and not yet returned, each with the source's mark of where it came from:
    /// `len` of them from `head`.
    ring: [(Request, u64); RING],
    head: usize,
    len: usize,
    /// An error the source returned after the requests in the ring: returned in its turn, and nothing more is
    /// read ahead until then.
    error: Option<(TraceError, u64)>,
    /// The source has no more requests.
    ended: bool,
    /// The mark of the request returned last.
    mark: u64,
}

impl Lookahead {
    pub(super) fn new(source: Box<dyn RequestSource>) -> Lookahead {
        Lookahead {
            source,
            ring: [(Request::new(0.0, crate::request::Op::Read, 0, 0), 0); RING],
            head: 0,
            len: 0,
            error: None,
            ended: false,
            mark: 0,
        }
    }

    /// The next request, having read the source up to [`DEPTH`] requests beyond it.
    #[inline]
    pub(super) fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        while self.len <= DEPTH && self.error.is_none() && !self.ended {
            match self.source.next_request() {
                Some(Ok(request)) => {
                    self.ring[(self.head + self.len) % RING] = (request, self.source.mark());
                    self.len += 1;
                }
                Some(Err(e)) => self.error = Some((e, self.source.mark())),
                None => self.ended = true,
            }
        }
        if self.len == 0 {
            let (e, mark) = self.error.take()?;
            self.mark = mark;
            return Some(Err(e));
        }
        let (request, mark) = self.ring[self.head];
        self.head = (self.head + 1) % RING;
        self.len -= 1;
        self.mark = mark;
        Some(Ok(request))
    }

    /// The request `i` places after the one returned last (0: the next one), if it was read.
    #[inline]
    pub(super) fn peek(&self, i: usize) -> Option<&Request> {
        (i < self.len).then(|| &self.ring[(self.head + i) % RING].0)
    }

    /// Where the request returned last came from.
    pub(super) fn position(&self) -> Option<String> {
        self.source.position_at(self.mark)
    }

    pub(super) fn progress(&self) -> (u64, u64) {
        self.source.progress()
    }

    pub(super) fn skipped_lines(&self) -> u64 {
        self.source.skipped_lines()
    }

    pub(super) fn timed(&self) -> bool {
        self.source.timed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;
    use crate::trace::VecSource;

    #[test]
    fn requests_come_in_order_with_the_next_two_visible() {
        let requests: Vec<Request> = (0..4)
            .map(|i| Request::new(0.0, Op::Write, i * 512, 512))
            .collect();
        let mut source = Lookahead::new(Box::new(VecSource::new(requests)));
        let offset = |r: Option<&Request>| r.map(|r| r.offset);
        let mut served = Vec::new();
        while let Some(r) = source.next_request() {
            served.push((
                r.unwrap().offset,
                offset(source.peek(0)),
                offset(source.peek(1)),
            ));
        }
        assert_eq!(
            served,
            vec![
                (0, Some(512), Some(1024)),
                (512, Some(1024), Some(1536)),
                (1024, Some(1536), None),
                (1536, None, None),
            ]
        );
    }

    /// Requests at offsets 0, 1, 2, ... with an error in place of request `bad`; marks count from 1.
    struct Faulty {
        next: u64,
        bad: u64,
    }

    impl RequestSource for Faulty {
        fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
            self.next += 1;
            match self.next - 1 {
                n if n == self.bad => Some(Err(TraceError::Workload {
                    spec: "faulty".into(),
                    what: "bad".into(),
                })),
                n if n < 5 => Some(Ok(Request::new(0.0, Op::Write, n, 1))),
                _ => None,
            }
        }

        fn progress(&self) -> (u64, u64) {
            (self.next, 5)
        }

        fn mark(&self) -> u64 {
            self.next
        }

        fn position_at(&self, mark: u64) -> Option<String> {
            Some(format!("line {mark}"))
        }
    }

    #[test]
    fn an_error_comes_in_its_turn_with_its_position_and_reading_goes_on_after_it() {
        let mut source = Lookahead::new(Box::new(Faulty { next: 0, bad: 2 }));
        let mut seen = Vec::new();
        while let Some(r) = source.next_request() {
            seen.push((r.map(|r| r.offset).ok(), source.position().unwrap()));
        }
        let line = |n: u64| format!("line {n}");
        assert_eq!(
            seen,
            vec![
                (Some(0), line(1)),
                (Some(1), line(2)),
                (None, line(3)),
                (Some(3), line(4)),
                (Some(4), line(5)),
            ]
        );
    }

    #[test]
    fn a_request_keeps_its_own_line_while_the_reader_is_ahead() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny.csv");
        let path = path.to_str().unwrap();
        let reader = crate::trace::open(path, &Default::default(), 1 << 30, 512).unwrap();
        let mut source = Lookahead::new(reader);
        // Line 1 is the header; the first request is on line 2, the reader already on line 4.
        assert_eq!(source.next_request().unwrap().unwrap().offset, 0);
        assert_eq!(source.position(), Some(format!("{path}:2")));
        assert_eq!(source.next_request().unwrap().unwrap().offset, 8192);
        assert_eq!(source.position(), Some(format!("{path}:3")));
    }
}
