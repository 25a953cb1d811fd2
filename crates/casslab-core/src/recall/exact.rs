//! The exact answer to a vector search, by brute force: the distance (under the index's
//! similarity, smaller is nearer) from the query to every vector of the corpus, the k smallest
//! kept in a heap, and the count of returned rows that are hits. A returned row is a hit when
//! its own distance is no more than the k-th nearest's (with a relative tolerance of 1e-4, for
//! the server's float arithmetic): rows tied with the k-th are as right as it is, which
//! matters when vectors repeat (a file's rows drawn again). Pure arithmetic on slices.

use super::Similarity;
use std::collections::BinaryHeap;

/// How far `v` is from `q` under `sim` (smaller is nearer); `v_norm` and `q_norm` are their
/// lengths (cosine only).
#[inline]
pub fn distance(sim: Similarity, q: &[f32], q_norm: f32, v: &[f32], v_norm: f32) -> f32 {
    match sim {
        Similarity::Euclidean => q.iter().zip(v).map(|(a, b)| (a - b) * (a - b)).sum(),
        Similarity::DotProduct => -dot(q, v),
        Similarity::Cosine => {
            let d = q_norm * v_norm;
            if d > 0.0 {
                1.0 - dot(q, v) / d
            } else {
                1.0
            }
        }
    }
}

#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    // four lanes, so the compiler can keep them in vector registers
    let mut acc = [0f32; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..4 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + ra.iter().zip(rb).map(|(x, y)| x * y).sum::<f32>()
}

/// The length of a vector.
pub fn norm(v: &[f32]) -> f32 {
    dot(v, v).sqrt()
}

/// A distance ordered for the heap (total order on floats).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Near(f32, u32);

impl Eq for Near {}

impl PartialOrd for Near {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Near {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

/// The `k` nearest of `vectors` (each `dims` long, with its `norms`; those `present[i]` false
/// are left out) to `q`: (index, distance), nearest first.
pub fn top_k(sim: Similarity, q: &[f32], vectors: &[f32], norms: &[f32], present: &[bool], k: usize) -> Vec<(u32, f32)> {
    let dims = q.len();
    let q_norm = norm(q);
    let mut heap: BinaryHeap<Near> = BinaryHeap::with_capacity(k + 1);
    if k == 0 || dims == 0 {
        return Vec::new();
    }
    for (i, v) in vectors.chunks_exact(dims).enumerate() {
        if !present[i] {
            continue;
        }
        let d = distance(sim, q, q_norm, v, norms[i]);
        if heap.len() < k {
            heap.push(Near(d, i as u32));
        } else if heap.peek().is_some_and(|top| d < top.0) {
            heap.pop();
            heap.push(Near(d, i as u32));
        }
    }
    let mut out: Vec<(u32, f32)> = heap.into_iter().map(|n| (n.1, n.0)).collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    out
}

/// How many of the `returned` distances (one per distinct returned row; `None` for a row
/// the corpus does not hold) are hits against the exact `nearest` (as `top_k` gives them), at
/// most `k`.
pub fn hits(nearest: &[(u32, f32)], returned: &[Option<f32>], k: usize) -> u64 {
    let Some(&(_, kth)) = nearest.last() else { return 0 };
    let limit = kth + kth.abs() * 1e-4 + 1e-6;
    (returned.iter().flatten().filter(|d| **d <= limit).count()).min(k) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_come_first_under_each_similarity() {
        // four points on a line and one off it
        let vs = [0.0f32, 0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 0.0, 5.0];
        let norms: Vec<f32> = vs.chunks(2).map(norm).collect();
        let all = [true; 5];
        let q = [2.1f32, 0.0];
        let e = top_k(Similarity::Euclidean, &q, &vs, &norms, &all, 2);
        assert_eq!(e.iter().map(|x| x.0).collect::<Vec<_>>(), [2, 3]);
        assert!((e[0].1 - 0.01).abs() < 1e-5, "squared distance: {e:?}");
        let d = top_k(Similarity::DotProduct, &q, &vs, &norms, &all, 1);
        assert_eq!(d[0].0, 3, "the largest dot product");
        let c = top_k(Similarity::Cosine, &[0.0, 1.0], &vs, &norms, &all, 1);
        assert_eq!(c[0].0, 4, "the same direction");
        let gone = [true, true, false, true, true];
        assert_eq!(top_k(Similarity::Euclidean, &q, &vs, &norms, &gone, 1)[0].0, 3, "a vector not present is not found");
        assert_eq!(top_k(Similarity::Euclidean, &q, &vs, &norms, &all, 9).len(), 5, "k above the corpus: all of it");
    }

    #[test]
    fn hits_count_rows_as_near_as_the_kth_and_ties() {
        let nearest = [(7u32, 1.0f32), (3, 2.0), (9, 4.0)];
        assert_eq!(hits(&nearest, &[Some(1.0), Some(2.0), Some(4.0)], 3), 3);
        assert_eq!(hits(&nearest, &[Some(1.0), Some(4.0), Some(4.5)], 3), 2, "one beyond the third nearest");
        assert_eq!(hits(&nearest, &[Some(1.0), Some(4.0), Some(4.0)], 3), 3, "a tie with the third is a hit");
        assert_eq!(hits(&nearest, &[Some(1.0), None], 3), 1, "a row not written is a miss; a row missing too");
        assert_eq!(hits(&[], &[Some(1.0)], 3), 0);
    }
}
