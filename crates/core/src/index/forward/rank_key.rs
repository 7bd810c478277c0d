//! The total order of result lists ([`rank_order`]) and its integer key ([`rank_key`]).

use std::cmp::Ordering;

use crate::corpus::PageId;
use crate::index::scorer::Score;

/// A page in a ranked result list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub page: PageId,
    pub score: Score,
}

/// The total order of every result list: score descending, then URL hash ascending, then page
/// id ascending (page ids follow URL byte order). Independent of segments, threads and merges.
pub fn rank_order(a: (Score, u64, PageId), b: (Score, u64, PageId)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
}

/// A 128-bit key whose ascending order is [`rank_order`]: the score mapped to an unsigned
/// integer in descending `total_cmp` order (the same bit trick `f32::total_cmp` uses), then the
/// URL hash, then the page id. Sorting plain integers is markedly cheaper than sorting tuples
/// with a comparator; the page id is the key's low 32 bits.
pub fn rank_key(score: Score, url_hash: u64, page: PageId) -> u128 {
    let mut bits = score.to_bits() as i32;
    bits ^= (((bits >> 31) as u32) >> 1) as i32;
    // Ascending in `total_cmp` order as an unsigned integer, then inverted for descending.
    let ascending = (bits as u32) ^ 0x8000_0000;
    (u128::from(!ascending) << 96) | (u128::from(url_hash) << 32) | u128::from(page)
}

/// The score [`rank_key`] was made from, bit for bit (the key's top 32 bits undone).
pub fn score_of_rank_key(key: u128) -> Score {
    let ascending = !((key >> 96) as u32);
    let bits = (ascending ^ 0x8000_0000) as i32;
    // The mask depends on the sign bit only, which the transform leaves alone.
    let original = bits ^ ((((bits >> 31) as u32) >> 1) as i32);
    Score::from_bits(original as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_keys_give_back_their_scores() {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            3.25,
            -7.5e-3,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        for s in specials {
            let back = score_of_rank_key(rank_key(s, 0xdead_beef, 17));
            assert_eq!(back.to_bits(), s.to_bits(), "{s}");
        }
    }

    #[test]
    fn rank_keys_sort_in_rank_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1.0e-40,
        ];
        let triples: Vec<(Score, u64, PageId)> = (0..3000)
            .map(|i| {
                let score = if i % 3 == 0 {
                    specials[rng.gen_range(0..specials.len())]
                } else {
                    rng.gen_range(-5.0f32..50.0)
                };
                (
                    score,
                    rng.gen_range(0..4u64) << 62 | rng.gen_range(0..3),
                    rng.gen(),
                )
            })
            .collect();
        let mut by_order = triples.clone();
        by_order.sort_by(|a, b| rank_order(*a, *b));
        let mut by_key = triples;
        by_key.sort_by_key(|&(s, h, p)| rank_key(s, h, p));
        let bits = |v: &[(Score, u64, PageId)]| {
            v.iter()
                .map(|&(s, h, p)| (s.to_bits(), h, p))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&by_key), bits(&by_order));
        assert_eq!(rank_key(1.0, 7, 42) as u32, 42);
    }
}
