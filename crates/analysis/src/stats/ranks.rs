//! Average ranks with tie group sizes, the common input of rank tests (Mann–Whitney U).

/// Average (mid-)ranks of `values` (1-based, ties get the mean of their ranks), in input order,
/// and the size of every tie group (groups of size 1 included), like SciPy's
/// `_rankdata(..., 'average', return_ties=True)`.
pub(crate) fn average_ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let n = values.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; n];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && values[order[j]] == values[order[i]] {
            j += 1;
        }
        // positions i..j (0-based) share ranks i+1..=j
        let avg = (i + 1 + j) as f64 / 2.0;
        for &idx in &order[i..j] {
            ranks[idx] = avg;
        }
        ties.push(j - i);
        i = j;
    }
    (ranks, ties)
}
