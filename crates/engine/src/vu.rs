//! What one virtual user remembers between requests and iterations: its number, iteration
//! count, captured values, `once` blocks done, current data rows and a render buffer.
//!
//! Kept small (a few empty vectors until used) so that 10,000 idle VUs cost little memory.

/// A captured value; `number` when it came from a JSON number (then it stays a number in
/// JSON bodies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub text: Box<str>,
    pub number: bool,
}

#[derive(Debug, Default)]
pub struct VuState {
    /// 1-based, unique across worker threads.
    pub vu: u64,
    /// 0-based iteration of this VU.
    pub iteration: u64,
    /// Bit `i` set: `once` block `i` has completed.
    pub once_done: u64,
    vars: Vec<Option<Captured>>,
    /// Per data set: (iteration + 1 when the row was taken, row index); 0 = none yet.
    rows: Vec<(u64, u32)>,
    /// Reused for rendering templated requests.
    pub parts: crate::request::RequestParts,
    /// Times its requests out.
    pub request_timer: crate::exchange::RequestTimer,
}

impl VuState {
    pub fn new(vu: u64) -> Self {
        Self {
            vu,
            ..Self::default()
        }
    }

    /// Becomes a new user `vu` (the open model reuses one state per runner), keeping only
    /// the render buffers' allocations and the request timer.
    pub fn start_over(&mut self, vu: u64) {
        let parts = std::mem::take(&mut self.parts);
        let request_timer = std::mem::take(&mut self.request_timer);
        *self = Self {
            parts,
            request_timer,
            ..Self::new(vu)
        };
    }

    pub fn var(&self, i: usize) -> Option<&Captured> {
        self.vars.get(i).and_then(Option::as_ref)
    }

    pub fn set_var(&mut self, i: usize, value: Captured) {
        if self.vars.len() <= i {
            self.vars.resize(i + 1, None);
        }
        self.vars[i] = Some(value);
    }

    /// The row of data set `set` taken in this iteration, if any.
    pub fn current_row(&self, set: usize) -> Option<u32> {
        match self.rows.get(set) {
            Some(&(it, row)) if it == self.iteration + 1 => Some(row),
            _ => None,
        }
    }

    /// The row of `set` last taken (0 if none: only rendering after `take_row` reads it).
    pub fn row(&self, set: usize) -> usize {
        self.rows.get(set).map(|r| r.1 as usize).unwrap_or(0)
    }

    pub fn take_row(&mut self, set: usize, row: u32) {
        if self.rows.len() <= set {
            self.rows.resize(set + 1, (0, 0));
        }
        self.rows[set] = (self.iteration + 1, row);
    }
}
