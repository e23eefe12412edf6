//! A global allocator wrapper that counts the bytes each thread holds, so a fuzz case can be
//! held to a memory budget. Counted per thread: targets run on parallel test threads.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Bytes allocated minus bytes freed by this thread (frees of memory from elsewhere can
    /// take it below zero, hence signed).
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    /// Highest `CURRENT` since the last reset.
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// `CURRENT` at the last reset.
    static BASE: Cell<isize> = const { Cell::new(0) };
}

/// Declare it as the test binary's allocator:
/// `#[global_allocator] static MEMORY: PeakAlloc = PeakAlloc;`
pub struct PeakAlloc;

impl PeakAlloc {
    /// Starts a new measurement on this thread.
    pub fn reset_peak(&self) {
        let now = CURRENT.with(Cell::get);
        PEAK.with(|p| p.set(now));
        BASE.with(|b| b.set(now));
    }

    /// Most bytes this thread held above its level at the last reset.
    pub fn peak_since_reset(&self) -> usize {
        let base = BASE.with(Cell::get);
        let peak = PEAK.with(Cell::get);
        peak.saturating_sub(base).max(0) as usize
    }

    fn add(delta: isize) {
        // `try_with`: the thread-local may already be gone while a thread shuts down.
        let _ = CURRENT.try_with(|c| {
            let now = c.get() + delta;
            c.set(now);
            let _ = PEAK.try_with(|p| {
                if now > p.get() {
                    p.set(now);
                }
            });
        });
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are kept.
unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            Self::add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        Self::add(-(layout.size() as isize));
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            Self::add(layout.size() as isize);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            Self::add(new_size as isize - layout.size() as isize);
        }
        p
    }
}
