//! Which flow an iteration runs: flows are picked in proportion to their weights, exactly
//! over any window of iterations and without randomness, so a short run already holds the
//! mix the scenario asks for.

use crate::prepare::PreparedFlow;

/// Smooth weighted round-robin: exact proportions over any window, no randomness needed.
pub struct FlowPicker {
    weights: Vec<i64>,
    current: Vec<i64>,
    total: i64,
}

impl FlowPicker {
    pub fn new(flows: &[PreparedFlow]) -> Self {
        let weights: Vec<i64> = flows.iter().map(|f| f.weight as i64).collect();
        Self {
            total: weights.iter().sum(),
            current: vec![0; weights.len()],
            weights,
        }
    }

    pub fn next(&mut self) -> usize {
        if self.weights.len() == 1 {
            return 0;
        }
        for (c, w) in self.current.iter_mut().zip(&self.weights) {
            *c += w;
        }
        let best = (0..self.current.len())
            .max_by_key(|&i| (self.current[i], -(i as i64)))
            .unwrap_or(0);
        self.current[best] -= self.total;
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_picks_are_exact() {
        let flows: Vec<PreparedFlow> = [70, 20, 10]
            .iter()
            .map(|&w| PreparedFlow {
                name: String::new(),
                weight: w,
                steps: vec![],
            })
            .collect();
        let mut picker = FlowPicker::new(&flows);
        let mut counts = [0; 3];
        for _ in 0..1000 {
            counts[picker.next()] += 1;
        }
        assert_eq!(counts, [700, 200, 100]);
        // Interleaved, not in runs: the first 10 picks already hold the proportions.
        let mut picker = FlowPicker::new(&flows);
        let first: Vec<usize> = (0..10).map(|_| picker.next()).collect();
        assert_eq!(first.iter().filter(|&&i| i == 0).count(), 7);
    }
}
