//! tf-idf vectors restricted to the most frequent non-stop terms (paper 000 §3.1: "the 1,000
//! most frequent non-stop words … to speed up the distance computation"), for the auxiliary
//! content and URL-word clusterings of the feature builder.

use rustc_hash::FxHashMap;

use super::rbc::SparseRows;

/// The English stop words of Lucene's `EnglishAnalyzer` (the list tantivy's English
/// `StopWordFilter` uses), unstemmed.
pub const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Paper 000 §3.1's default vocabulary size.
pub const TOP_TERMS: usize = 1000;

/// A tf-idf model over a chosen vocabulary of term ids.
#[derive(Debug, Clone, PartialEq)]
pub struct TopTermsTfIdf {
    /// Term id → column.
    column: FxHashMap<u32, u32>,
    /// `ln(N / df)` per column.
    idf: Vec<f64>,
}

impl TopTermsTfIdf {
    /// Chooses the `top` terms with the most occurrences over `docs` (`(term, count)` lists;
    /// ties by term id), skipping `stop` terms, and their idf `ln(N/df)` over the `N` docs.
    pub fn fit<'a>(
        docs: impl IntoIterator<Item = &'a [(u32, u32)]> + Clone,
        top: usize,
        stop: impl Fn(u32) -> bool,
    ) -> Self {
        let mut total: FxHashMap<u32, u64> = FxHashMap::default();
        for doc in docs.clone() {
            for &(t, c) in doc {
                if !stop(t) {
                    *total.entry(t).or_default() += u64::from(c);
                }
            }
        }
        let mut terms: Vec<(u32, u64)> = total.into_iter().collect();
        terms.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        terms.truncate(top);
        let column: FxHashMap<u32, u32> = terms
            .iter()
            .enumerate()
            .map(|(i, &(t, _))| (t, i as u32))
            .collect();
        let mut df = vec![0u64; column.len()];
        let mut n = 0u64;
        for doc in docs {
            n += 1;
            for (t, _) in doc {
                if let Some(&c) = column.get(t) {
                    df[c as usize] += 1;
                }
            }
        }
        let idf = df
            .iter()
            .map(|&d| {
                if d == 0 {
                    0.0
                } else {
                    (n as f64 / d as f64).ln()
                }
            })
            .collect();
        TopTermsTfIdf { column, idf }
    }

    /// Number of columns.
    pub(crate) fn dim(&self) -> usize {
        self.idf.len()
    }

    /// The tf-idf vector `tf · ln(N/df)` of a document over the chosen terms (zero entries
    /// left out).
    pub(crate) fn vector(&self, doc: &[(u32, u32)]) -> Vec<(u32, f64)> {
        let mut v: Vec<(u32, f64)> = doc
            .iter()
            .filter_map(|(t, c)| {
                let col = *self.column.get(t)?;
                let w = f64::from(*c) * self.idf[col as usize];
                (w > 0.0).then_some((col, w))
            })
            .collect();
        v.sort_by_key(|&(c, _)| c);
        v
    }

    /// The documents as unit-length sparse rows (at least one column, so an empty vocabulary
    /// still gives a valid matrix of zero rows).
    pub(crate) fn rows<'a>(&self, docs: impl IntoIterator<Item = &'a [(u32, u32)]>) -> SparseRows {
        SparseRows::new(self.dim().max(1), docs.into_iter().map(|d| self.vector(d)))
    }

    /// `cos` of two documents' tf-idf vectors (0 when either is empty).
    pub(crate) fn cosine(&self, a: &[(u32, u32)], b: &[(u32, u32)]) -> f64 {
        let (va, vb) = (self.vector(a), self.vector(b));
        let norm = |v: &[(u32, f64)]| v.iter().map(|(_, x)| x * x).sum::<f64>().sqrt();
        let (na, nb) = (norm(&va), norm(&vb));
        if na == 0.0 || nb == 0.0 {
            return 0.0;
        }
        let (mut i, mut j, mut dot) = (0, 0, 0.0);
        while i < va.len() && j < vb.len() {
            match va[i].0.cmp(&vb[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    dot += va[i].1 * vb[j].1;
                    i += 1;
                    j += 1;
                }
            }
        }
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Rows;

    #[test]
    fn keeps_the_most_frequent_non_stop_terms_with_their_idf() {
        // Term 0 is a stop word; term 1 in every doc (idf 0); terms 2, 3 rarer.
        let docs: Vec<Vec<(u32, u32)>> = vec![
            vec![(0, 9), (1, 5), (2, 2)],
            vec![(0, 9), (1, 5), (3, 1)],
            vec![(1, 1), (2, 3)],
        ];
        let model = TopTermsTfIdf::fit(docs.iter().map(Vec::as_slice), 2, |t| t == 0);
        assert_eq!(model.dim(), 2, "terms 1 (11) and 2 (5); 3 (1) left out");
        let v = model.vector(&docs[0]);
        // Term 1 has idf ln(3/3) = 0 and drops; term 2: 2·ln(3/2).
        assert_eq!(v.len(), 1);
        assert!((v[0].1 - 2.0 * (1.5f64).ln()).abs() < 1e-12);
        assert!(model.vector(&docs[1]).is_empty());
        assert!((model.cosine(&docs[0], &docs[2]) - 1.0).abs() < 1e-12);
        assert_eq!(model.cosine(&docs[0], &docs[1]), 0.0);
        let rows = model.rows(docs.iter().map(Vec::as_slice));
        assert_eq!(rows.len(), 3);
        assert!((rows.dot(0, &[0.0, 1.0]) - 1.0).abs() < 1e-12);
    }
}
