//! The second placement of schemes on an array (`placement = "per-die"`): one scheme instance per die, each
//! on its die's blocks only, a logical page sent to the die its address selects. This is the static
//! allocation of MQSim's plane-allocation schemes (`Plane_Allocation_Scheme` in its `ssdconfig.xml`: a
//! logical page's channel, way, die and plane are fixed by its address), taken to the die:
//! - a page-mapped scheme or DFTL ([`Mapping::Page`]) takes logical page `lpn` on die `lpn mod dies`, as its
//!   local page `lpn div dies`: successive pages go to successive dies;
//! - a block-mapped or hybrid scheme ([`Mapping::Block`]) takes logical block `lbn` on die `lbn mod dies`, as
//!   its local block `lbn div dies` (the page's offset kept): a logical block's pages stay together, as its
//!   merges need.
//!
//! Each instance takes the run's scheme parameters as they are given: a size or budget among them (DFTL's
//! `cmt_entries`, FAST's `log_blocks`) is each die's, as each die's controller would hold it, not the device's
//! shared out (four dies with `cmt_entries=8192` cache 32,768 map entries; `ram.total_bytes` says so). A user
//! who compares a striped run with one per die at the same RAM divides such a parameter by the dies.
//!
//! Each instance is built by the scheme's row for the geometry of one die: the die's blocks, of as many pages
//! as a physical block has times the die's planes (a die's planes make one multi-plane block: they share the
//! die's time on the timeline, so an instance per plane would gain no parallelism, and the issue asks for an
//! instance per die). Garbage collection, merges and wear levelling then happen per die, and an instance's
//! flash operations go to its die's blocks only ([`Device::enter_partition`]): a GC on die 0 delays only the
//! requests that wait for die 0.
//!
//! What is kept: the chip's NAND rules and the read oracle (per global logical page, in the run loop) as
//! they are; a mount mounts every instance on its own partition; a bad block is remapped through the one
//! bad-block map of the chip (its reserve is shared by the dies, and the timeline counts a reserve block
//! where the block it replaces was). The report sums what the instances count: the device counts every
//! instance's operations, merges and GC runs together; RAM is summed structure by structure (each die's
//! instance keeps its own tables in the controller's RAM); the scheme's own figures are summed when they are
//! whole numbers (counts), averaged over the dies when they are fractions (MAST's utilizations), and taken
//! from die 0 otherwise (a profile's name). Wear stays per physical block.

use super::{Extra, Ftl, Mapping, RamItem};
use crate::addr::{Lpn, Token};
use crate::config::Geometry;
use crate::device::{Device, RequestInfo, Result};
use serde_json::Value;

/// The geometry of each of `partitions` scheme instances on a run of geometry `g` (the scheme's block
/// already one die's): the logical blocks shared out, rounded up so that every page has a place.
pub fn instance_geometry(g: &Geometry, partitions: u32) -> Geometry {
    Geometry {
        logical_blocks: g.logical_blocks.div_ceil(partitions.max(1)),
        ..*g
    }
}

/// A scheme instance per die, behind one [`Ftl`]: routes each logical page to its die's instance and enters
/// that die's partition of the device first.
pub struct PerDie {
    instances: Vec<Box<dyn Ftl>>,
    mapping: Mapping,
    /// Pages of a logical block (the instances' block).
    pages_per_block: u32,
    /// Whether the instances keep anything of a request's [`RequestInfo`] (LAST does; most ignore it, and
    /// telling each of them costs a call per die a request).
    listening: bool,
}

impl PerDie {
    /// The instances, one per die in die order, of a scheme that maps by `mapping`, with blocks of
    /// `pages_per_block` pages.
    pub fn new(instances: Vec<Box<dyn Ftl>>, mapping: Mapping, pages_per_block: u32) -> PerDie {
        assert!(!instances.is_empty(), "a run has at least one die");
        let listening = instances.iter().any(|ftl| ftl.listens_to_requests());
        PerDie {
            listening,
            instances,
            mapping,
            pages_per_block,
        }
    }

    /// The die of logical page `lpn`, and its page there.
    #[inline]
    fn route(&self, lpn: Lpn) -> (u32, Lpn) {
        let dies = self.instances.len() as u32;
        match self.mapping {
            Mapping::Page => (lpn.0 % dies, Lpn(lpn.0 / dies)),
            Mapping::Block => {
                let (lbn, offset) = (lpn.0 / self.pages_per_block, lpn.0 % self.pages_per_block);
                (
                    lbn % dies,
                    Lpn((lbn / dies) * self.pages_per_block + offset),
                )
            }
        }
    }

    /// The instance of logical page `lpn` with its die's partition entered, and the page there.
    #[inline]
    fn on_die(&mut self, lpn: Lpn, dev: &mut Device) -> (&mut dyn Ftl, Lpn) {
        let (die, local) = self.route(lpn);
        dev.enter_partition(die);
        (self.instances[die as usize].as_mut(), local)
    }

    /// `work` on every instance in die order, each in its partition.
    fn each(
        &mut self,
        dev: &mut Device,
        mut work: impl FnMut(&mut dyn Ftl, &mut Device) -> Result<()>,
    ) -> Result<()> {
        for (die, ftl) in self.instances.iter_mut().enumerate() {
            dev.enter_partition(die as u32);
            work(ftl.as_mut(), dev)?;
        }
        Ok(())
    }
}

impl Ftl for PerDie {
    /// Where the instances listen (LAST), every one is told of the request, with its first page as the first
    /// page's die sees it (LAST reads only the size); the others are not called.
    fn begin_request(&mut self, req: &RequestInfo) {
        if !self.listening {
            return;
        }
        let (_, first) = self.route(req.first_lpn);
        let local = RequestInfo {
            first_lpn: first,
            ..*req
        };
        for ftl in &mut self.instances {
            ftl.begin_request(&local);
        }
    }

    fn listens_to_requests(&self) -> bool {
        self.listening
    }

    fn read(&mut self, lpn: Lpn, dev: &mut Device) -> Result<Option<Token>> {
        let (ftl, local) = self.on_die(lpn, dev);
        ftl.read(local, dev)
    }

    fn write(&mut self, lpn: Lpn, token: Token, dev: &mut Device) -> Result<()> {
        let (ftl, local) = self.on_die(lpn, dev);
        ftl.write(local, token, dev)
    }

    fn trim(&mut self, lpn: Lpn, dev: &mut Device) -> Result<()> {
        let (ftl, local) = self.on_die(lpn, dev);
        ftl.trim(local, dev)
    }

    fn idle(&mut self, dev: &mut Device) -> Result<()> {
        self.each(dev, |ftl, dev| ftl.idle(dev))
    }

    fn finish(&mut self, dev: &mut Device) -> Result<()> {
        self.each(dev, |ftl, dev| ftl.finish(dev))
    }

    fn reset_counters(&mut self) {
        for ftl in &mut self.instances {
            ftl.reset_counters();
        }
    }

    /// Each instance rebuilds itself from its own die's blocks.
    fn mount(&mut self, dev: &mut Device) -> Result<()> {
        self.each(dev, |ftl, dev| ftl.mount(dev))
    }

    fn detects_torn_pages(&self) -> bool {
        self.instances.iter().all(|f| f.detects_torn_pages())
    }

    /// Every die's tables, summed structure by structure.
    fn ram(&self) -> Vec<RamItem> {
        let dies = self.instances.len();
        let mut out: Vec<RamItem> = Vec::new();
        for item in self.instances.iter().flat_map(|f| f.ram()) {
            match out.iter_mut().find(|sum| sum.name == item.name) {
                Some(sum) => sum.bytes += item.bytes,
                None => out.push(item),
            }
        }
        if dies > 1 {
            for item in &mut out {
                item.layout = format!("summed over {dies} dies' instances; each: {}", item.layout);
            }
        }
        out
    }

    /// The instances' figures: whole numbers summed, fractions averaged over the dies, the rest die 0's.
    fn extra(&self, out: &mut Extra) {
        let dies = self.instances.len() as f64;
        let mut merged = Extra::new();
        for ftl in &self.instances {
            let mut one = Extra::new();
            ftl.extra(&mut one);
            for (key, v) in one {
                let Some((_, sum)) = merged.iter_mut().find(|(k, _)| *k == key) else {
                    merged.push((key, v));
                    continue;
                };
                if let (Some(a), Some(b)) = (sum.as_u64(), v.as_u64()) {
                    *sum = Value::from(a + b);
                } else if let (Some(a), Some(b)) = (sum.as_f64(), v.as_f64()) {
                    *sum = Value::from(a + b);
                }
            }
        }
        for (_, v) in &mut merged {
            if let Some(x) = v.as_f64().filter(|_| v.is_f64()) {
                *v = Value::from(x / dies);
            }
        }
        out.extend(merged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::SCHEMES;
    use std::sync::{Arc, Mutex};

    /// A scheme that serves nothing and notes the first page of each request it is told of.
    struct Listener {
        listens: bool,
        heard: Arc<Mutex<Vec<u32>>>,
    }

    impl Ftl for Listener {
        fn begin_request(&mut self, req: &RequestInfo) {
            self.heard.lock().unwrap().push(req.first_lpn.0);
        }

        fn listens_to_requests(&self) -> bool {
            self.listens
        }

        fn read(&mut self, _: Lpn, _: &mut Device) -> Result<Option<Token>> {
            Ok(None)
        }

        fn write(&mut self, _: Lpn, _: Token, _: &mut Device) -> Result<()> {
            Ok(())
        }

        fn ram(&self) -> Vec<RamItem> {
            Vec::new()
        }
    }

    fn listeners(listens: bool) -> (PerDie, Vec<Arc<Mutex<Vec<u32>>>>) {
        let heard: Vec<_> = (0..4).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
        let instances = heard
            .iter()
            .map(|h| {
                Box::new(Listener {
                    listens,
                    heard: h.clone(),
                }) as Box<dyn Ftl>
            })
            .collect();
        (PerDie::new(instances, Mapping::Page, 8), heard)
    }

    #[test]
    fn every_instance_hears_each_request_where_it_listens() {
        let (mut per_die, heard) = listeners(true);
        assert!(per_die.listens_to_requests());
        for first in [9, 2] {
            per_die.begin_request(&RequestInfo {
                first_lpn: Lpn(first),
                ..Default::default()
            });
        }
        // Each die hears both requests, with their first page as die 1 and die 2 number it.
        for h in &heard {
            assert_eq!(*h.lock().unwrap(), [2, 0]);
        }
        let (mut per_die, heard) = listeners(false);
        assert!(!per_die.listens_to_requests());
        per_die.begin_request(&RequestInfo::default());
        assert!(heard.iter().all(|h| h.lock().unwrap().is_empty()));
    }

    #[test]
    fn only_last_keeps_what_a_request_says() {
        // A scheme whose `begin_request` keeps something must say it listens, or an instance per die would
        // never tell it: LAST (its size detector) is the one.
        let g = Geometry {
            page_bytes: 2048,
            spare_bytes: 64,
            pages_per_block: 64,
            logical_blocks: 64,
            sequential_program: true,
        };
        for s in SCHEMES {
            let params = (s.parse)(s, &(s.defaults)()).unwrap();
            let built = (s.build)(&params, &g).unwrap();
            assert_eq!(
                built.ftl.listens_to_requests(),
                s.name == "last",
                "{}",
                s.name
            );
        }
    }
}
