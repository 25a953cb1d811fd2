//! `vector<float, N>` values, each a deterministic function of the generator's seed and a drawn
//! `n` like every other value: `gaussian` (every component drawn from N(0, 1)), `clustered`
//! (one of `centroids` centres, themselves N(0, 1) per component, plus N(0, `spread`²) noise:
//! structure an approximate nearest-neighbour index can find), or a row of a file of vectors
//! (`file`, row `n` modulo the rows); any of them scaled to unit length with `normalize` (for
//! cosine similarity). The same function fills an `f32` slice for the recall judge, which
//! recomputes every written vector from the write record instead of keeping them.
//! Checking the spec is `build.rs`'s; reading files is `vector_file.rs`'s.

use super::hashing::{hash_of, mix64, Stream};
use scylla::value::CqlValue;
use std::sync::{Arc, OnceLock};

const CENTRE_SALT: u64 = 0x4345_4e54_5245_5321;
const CLUSTER_SALT: u64 = 0x434c_5553_5445_5221;

/// Where a vector's components come from.
#[derive(Debug, Clone)]
pub(crate) enum VectorKind {
    Gaussian,
    Clustered {
        centroids: usize,
        spread: f32,
    },
    /// The rows of a file, `dims` floats each, row after row.
    File {
        rows: Arc<[f32]>,
    },
}

/// How a vector generator makes its values.
#[derive(Debug)]
pub(crate) struct VectorBody {
    pub dims: usize,
    pub kind: VectorKind,
    pub normalize: bool,
    /// The centres of `Clustered`, made from the generator's seed on first use.
    centres: OnceLock<Arc<[f32]>>,
}

impl VectorBody {
    pub(crate) fn new(dims: usize, kind: VectorKind, normalize: bool) -> VectorBody {
        VectorBody { dims, kind, normalize, centres: OnceLock::new() }
    }

    /// Fills `out` (`dims` long) with the vector for item `n` whose content hash is `hash`
    /// under `seed`.
    pub(crate) fn fill(&self, seed: u64, n: i64, hash: u64, out: &mut [f32]) {
        match &self.kind {
            VectorKind::Gaussian => normals(hash, out),
            VectorKind::Clustered { centroids, spread } => {
                let centres = self.centres.get_or_init(|| {
                    let mut c = vec![0f32; centroids * self.dims];
                    for (i, row) in c.chunks_exact_mut(self.dims).enumerate() {
                        normals(hash_of(seed ^ CENTRE_SALT, i as u64), row);
                    }
                    c.into()
                });
                let which = (mix64(hash ^ CLUSTER_SALT) % *centroids as u64) as usize;
                normals(hash, out);
                for (x, c) in out.iter_mut().zip(&centres[which * self.dims..(which + 1) * self.dims]) {
                    *x = c + spread * *x;
                }
            }
            VectorKind::File { rows } => {
                let count = (rows.len() / self.dims) as i64;
                let r = n.rem_euclid(count) as usize;
                out.copy_from_slice(&rows[r * self.dims..(r + 1) * self.dims]);
            }
        }
        if self.normalize {
            let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                out.iter_mut().for_each(|x| *x /= norm);
            }
        }
    }

    /// The vector for item `n` as a CQL value.
    pub(crate) fn value(&self, seed: u64, n: i64, hash: u64) -> CqlValue {
        let mut v = vec![0f32; self.dims];
        self.fill(seed, n, hash, &mut v);
        CqlValue::Vector(v.into_iter().map(CqlValue::Float).collect())
    }
}

/// Standard normal draws from the stream of `seed` (Box–Muller, two per 128 bits).
fn normals(seed: u64, out: &mut [f32]) {
    let mut s = Stream(seed);
    let unit = |bits: u64| ((bits >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
    for pair in out.chunks_mut(2) {
        let (u1, u2) = (unit(s.next()), unit(s.next()));
        let r = (-2.0 * u1.ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
        pair[0] = (r * cos) as f32;
        if let Some(second) = pair.get_mut(1) {
            *second = (r * sin) as f32;
        }
    }
}

/// The floats of a vector value (`None` for any other value).
pub fn floats_of(v: &CqlValue) -> Option<Vec<f32>> {
    match v {
        CqlValue::Vector(items) | CqlValue::List(items) => items
            .iter()
            .map(|x| match x {
                CqlValue::Float(f) => Some(*f),
                CqlValue::Double(d) => Some(*d as f32),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_sd(xs: &[f32]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().map(|x| *x as f64).sum::<f64>() / n;
        (m, (xs.iter().map(|x| (*x as f64 - m).powi(2)).sum::<f64>() / n).sqrt())
    }

    #[test]
    fn gaussian_components_are_standard_normal_and_repeatable() {
        let b = VectorBody::new(128, VectorKind::Gaussian, false);
        let mut all = Vec::new();
        for n in 0..200u64 {
            let mut v = vec![0f32; 128];
            b.fill(7, n as i64, hash_of(7, n), &mut v);
            all.extend(v);
        }
        let (m, sd) = mean_sd(&all);
        assert!(m.abs() < 0.02 && (sd - 1.0).abs() < 0.02, "mean {m}, sd {sd}");
        assert_eq!(b.value(7, 3, hash_of(7, 3)), b.value(7, 3, hash_of(7, 3)));
        assert_ne!(b.value(7, 3, hash_of(7, 3)), b.value(7, 4, hash_of(7, 4)));
    }

    #[test]
    fn clustered_vectors_sit_near_their_centres_and_normalized_ones_have_unit_length() {
        let b = VectorBody::new(64, VectorKind::Clustered { centroids: 4, spread: 0.1 }, false);
        let vs: Vec<Vec<f32>> = (0..400u64)
            .map(|n| {
                let mut v = vec![0f32; 64];
                b.fill(9, n as i64, hash_of(9, n), &mut v);
                v
            })
            .collect();
        let d2 = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f32>();
        // each vector's nearest other vector is far closer than a vector of another cluster
        let near = (1..400).map(|j| d2(&vs[0], &vs[j])).fold(f32::MAX, f32::min);
        let centres = b.centres.get().unwrap();
        assert_eq!(centres.len(), 4 * 64);
        assert!(near < 2.0, "within a cluster: about 2 × 64 × 0.01 = 1.3, got {near}");
        let between = d2(&centres[0..64], &centres[64..128]);
        assert!(between > 50.0, "between centres: about 2 × 64 = 128, got {between}");
        let unit = VectorBody::new(64, VectorKind::Clustered { centroids: 4, spread: 0.1 }, true);
        let mut v = vec![0f32; 64];
        unit.fill(9, 5, hash_of(9, 5), &mut v);
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    }

    #[test]
    fn file_rows_are_taken_by_n() {
        let b = VectorBody::new(2, VectorKind::File { rows: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0].into() }, false);
        assert_eq!(floats_of(&b.value(0, 1, 99)), Some(vec![3.0, 4.0]));
        assert_eq!(floats_of(&b.value(0, 4, 99)), Some(vec![3.0, 4.0]), "n modulo the rows");
        assert_eq!(floats_of(&b.value(0, -1, 99)), Some(vec![5.0, 6.0]));
    }
}
