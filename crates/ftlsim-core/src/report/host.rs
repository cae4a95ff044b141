//! The Host section: what the host asked for.

use super::keys::{Component, Keys, Section, Unit};

/// What the host asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostCounts {
    pub requests: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    /// Requests of no bytes: counted in `requests`, in no kind, and nothing done.
    pub empty_requests: u64,
    pub read_pages: u64,
    pub write_pages: u64,
    pub trim_pages: u64,
    pub rmw_page_reads: u64,
    /// Host page reads of pages never written (they cost what the scheme makes them cost, often nothing).
    pub unwritten_reads: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl Component for HostCounts {
    fn visit(&self, k: &mut Keys) {
        k.section(Section::Host);
        k.put("host.requests", Unit::Count, "host requests", self.requests);
        k.shown(true);
        for (key, unit, what, value) in [
            ("host.read_requests", Unit::Count, "host read requests", self.read_requests),
            ("host.write_requests", Unit::Count, "host write requests", self.write_requests),
            ("host.trim_requests", Unit::Count, "host trim requests", self.trim_requests),
            ("host.read_pages", Unit::Pages, "pages read by the host", self.read_pages),
            (
                "host.write_pages",
                Unit::Pages,
                "pages written by the host (not the pages a power cut dropped: power.write_pages_dropped)",
                self.write_pages,
            ),
            ("host.trim_pages", Unit::Pages, "whole pages trimmed", self.trim_pages),
            (
                "host.rmw_page_reads",
                Unit::Pages,
                "old pages read before a partial-page write (their flash reads are flash.page_reads.rmw)",
                self.rmw_page_reads,
            ),
            (
                "host.unwritten_reads",
                Unit::Pages,
                "host page reads of pages never written",
                self.unwritten_reads,
            ),
        ] {
            k.put(key, unit, what, value);
        }
        k.shown(false);
        k.put(
            "host.empty_requests",
            Unit::Count,
            "host requests of no bytes, of any kind: counted in host.requests alone, and nothing done",
            self.empty_requests,
        );
        k.put(
            "host.read_bytes",
            Unit::Bytes,
            "bytes read by the host",
            self.read_bytes,
        );
        k.put(
            "host.write_bytes",
            Unit::Bytes,
            "bytes written by the host",
            self.write_bytes,
        );
    }
}
