//! w-word shingles of a page's visible text (Broder, "On the resemblance and containment of
//! documents", 1997; Broder et al., "Syntactic clustering of the Web", 1997), the distances
//! between two copies of a page that paper 003 §6 thresholds with θ_SBR and θ_EBR.
//!
//! # Which distance SBR and EBR use
//!
//! Paper 003 §6 calls a page stale when "the fraction of shingles that differ between the
//! repository copy and Web copy exceeds θ", and computes EBR's d(p) from "the fraction of the
//! shingles that change". We read *the fraction of the repository copy's shingles that are gone
//! from the new copy* ([`shingle_change`], one minus Broder's containment of the old copy in the
//! new one). It is the default of both policies, and it is what
//! [`crate::policy::RefreshOutcome::shingle_change`] carries, for two reasons: it is measured
//! against what the search engine holds (the copy it answers queries from), and content that
//! vanished from the page is what makes an indexed copy *irrelevant* to queries it used to match
//! (EBR's notion of embarrassment), whereas pure additions leave the old copy's matches true.
//! The symmetric [`resemblance_distance`] (1 − Jaccard) is offered for callers who want
//! additions to count too; it is never smaller than [`shingle_change`].

use std::sync::Arc;

use crate::cache::{Cache, CacheKey};

use xxhash_rust::xxh3::xxh3_64;

/// Broder's usual shingle width: 4 consecutive words.
pub const DEFAULT_SHINGLE_WIDTH: usize = 4;

/// The w-word shingles of `text`, hashed with xxh3-64, sorted and deduplicated.
///
/// Words are maximal runs of alphanumeric characters, lower-cased (so punctuation and
/// whitespace edits do not count as changes). A text with fewer than `w` words (but at least
/// one) yields one shingle of all its words; an empty text yields no shingle. `w = 0` is
/// treated as 1.
///
/// Each window is hashed as its words' bytes, each followed by a 0 byte (a separator no word
/// contains, so ("ab","c") and ("a","bc") differ). The lower-cased words are laid out once in
/// one buffer in that form, so every window is a contiguous slice hashed in one shot (equal to
/// streaming the words into an `Xxh3`, without a hasher state and a `String` per word).
pub fn shingles(text: &str, w: usize) -> Vec<u64> {
    let w = w.max(1);
    let mut buf: Vec<u8> = Vec::with_capacity(text.len() + text.len() / 4);
    // Start offset of every word in `buf`, then the end of the buffer.
    let mut starts: Vec<usize> = Vec::new();
    if text.is_ascii() {
        for word in crate::text::ascii_alphanumeric_runs(text) {
            starts.push(buf.len());
            buf.extend(word.iter().map(|b| b.to_ascii_lowercase()));
            buf.push(0);
        }
    } else {
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            starts.push(buf.len());
            if word.is_ascii() {
                buf.extend(word.bytes().map(|b| b.to_ascii_lowercase()));
            } else {
                // `str::to_lowercase` of the word (context-dependent mappings such as a final
                // sigma included), exactly as before.
                buf.extend_from_slice(word.to_lowercase().as_bytes());
            }
            buf.push(0);
        }
    }
    if starts.is_empty() {
        return Vec::new();
    }
    let words = starts.len();
    starts.push(buf.len());
    let width = w.min(words);
    let mut out: Vec<u64> = (0..=words - width)
        .map(|i| xxh3_64(&buf[starts[i]..starts[i + width]]))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Bytes of sketches the cache keeps: past it, sketches are computed without being kept.
pub const SKETCH_MEMO_BYTES: usize = 256 << 20;

/// A text given in parts: the input of [`text_sketch`]; its key is the joined text's.
struct TextParts<'a>(&'a [&'a str]);

impl CacheKey for TextParts<'_> {
    type Value = Box<[u64]>;
    const STORE: &'static str = "sketches";
    const MAX_BYTES: usize = SKETCH_MEMO_BYTES;

    fn write_key(&self, bytes: &mut Vec<u8>) {
        for part in self.0 {
            bytes.extend_from_slice(part.as_bytes());
        }
    }

    /// Streamed: the joined text is not copied to be hashed.
    fn key(&self) -> u128 {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for part in self.0 {
            hasher.update(part.as_bytes());
        }
        hasher.digest128()
    }

    fn value_bytes(sketch: &Box<[u64]>) -> usize {
        sketch.len() * std::mem::size_of::<u64>() + 64
    }
}

/// [`shingles`] of the concatenation of `parts` at [`DEFAULT_SHINGLE_WIDTH`], computed once
/// per distinct text in `cache` when there is one.
///
/// Why: every run of a sweep compares the same captures of the same corpus — each refresh
/// that finds a change needs the sketches of the held and the fetched copy — and shingling was
/// a twentieth of a sweep. A sketch is a pure function of the text; the key is the text's
/// 128-bit xxh3 (a collision would need ~2^64 distinct texts).
pub fn text_sketch(cache: Option<&Cache>, parts: &[&str]) -> Arc<Box<[u64]>> {
    let compute = || shingles(&parts.concat(), DEFAULT_SHINGLE_WIDTH).into_boxed_slice();
    match cache {
        Some(cache) => cache.get_or_compute(&TextParts(parts), compute).0,
        None => Arc::new(compute()),
    }
}

fn intersection_len(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Fraction of the old copy's shingles absent from the new copy: `|A \ B| / |A|`, i.e.
/// `1 − containment(A in B)` (Broder 1997). The default change measure of SBR and EBR (see the
/// module docs for why).
///
/// Both inputs must be sorted and deduplicated (as [`shingles`] returns them). Conventions
/// for empty sets: both empty → 0 (nothing changed); old empty and new not → 1 (a page that
/// had no text now has some: everything the engine holds about it is new).
pub fn shingle_change(old: &[u64], new: &[u64]) -> f64 {
    if old.is_empty() {
        return if new.is_empty() { 0.0 } else { 1.0 };
    }
    1.0 - intersection_len(old, new) as f64 / old.len() as f64
}

/// Symmetric resemblance distance `1 − |A ∩ B| / |A ∪ B|` (Broder 1997's resemblance, the
/// Jaccard coefficient). Both empty → 0.
pub fn resemblance_distance(a: &[u64], b: &[u64]) -> f64 {
    let inter = intersection_len(a, b);
    let union = a.len() + b.len() - inter;
    if union == 0 {
        return 0.0;
    }
    1.0 - inter as f64 / union as f64
}

/// [`shingle_change`] between two texts with [`DEFAULT_SHINGLE_WIDTH`]-word shingles.
pub fn text_change(old_text: &str, new_text: &str) -> f64 {
    shingle_change(
        &shingles(old_text, DEFAULT_SHINGLE_WIDTH),
        &shingles(new_text, DEFAULT_SHINGLE_WIDTH),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward form: a `String` per word, a streaming hasher per window.
    fn reference_shingles(text: &str, w: usize) -> Vec<u64> {
        use xxhash_rust::xxh3::Xxh3;
        let w = w.max(1);
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|s| !s.is_empty())
            .map(|s| s.to_lowercase())
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let width = w.min(words.len());
        let mut out: Vec<u64> = words
            .windows(width)
            .map(|window| {
                let mut h = Xxh3::new();
                for word in window {
                    h.update(word.as_bytes());
                    h.update(&[0u8]);
                }
                h.digest()
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn text_sketches_are_the_shingles_of_the_joined_parts_and_kept() {
        let parts = ["A title", "\n", "some visible text of a page, with words"];
        let cache = Cache::new();
        let text_sketch = |parts: &[&str]| text_sketch(Some(&cache), parts);
        let first = text_sketch(&parts);
        assert_eq!(
            &first[..],
            &shingles(&parts.concat(), DEFAULT_SHINGLE_WIDTH)[..]
        );
        assert!(Arc::ptr_eq(&first, &text_sketch(&parts)), "computed twice");
        // Another split of the same text is the same text.
        let joined = parts.concat();
        assert!(Arc::ptr_eq(&first, &text_sketch(&[&joined])));
        assert!(text_sketch(&[""]).is_empty());
    }

    #[test]
    fn shingles_equal_the_streaming_reference() {
        let long: String = (0..500).map(|i| format!("Word{} ", i % 37)).collect();
        for text in [
            "",
            "one",
            "A, b. C d!",
            "the quick brown fox jumps over the lazy dog",
            "ΣΊΣΥΦΟΣ ΟΔΥΣΣΕΥΣ Straße İstanbul ǅemal ÅNGSTRÖM café-CAFÉ 東京 タワー",
            "x y x y x y",
            "under_score tab\tnul\x00 x1y2 --dash-- MiXeD\x0bCASE 3.14 ~~",
            long.as_str(),
        ] {
            for w in 0..6 {
                assert_eq!(shingles(text, w), reference_shingles(text, w), "{text} {w}");
            }
        }
    }

    #[test]
    fn counts_distinct_windows_and_ignores_case_and_punctuation() {
        // 6 words → 3 four-word windows.
        assert_eq!(shingles("a b c d e f", 4).len(), 3);
        assert_eq!(shingles("A, b. C d!", 4), shingles("a b c d", 4));
        // Repeated windows are deduplicated: "x y x y x y" has windows xyxy, yxyx, xyxy.
        assert_eq!(shingles("x y x y x y", 4).len(), 2);
        assert_eq!(shingles("", 4), Vec::<u64>::new());
        assert_eq!(shingles("only two", 4).len(), 1);
        let s = shingles("the quick brown fox jumps over the lazy dog", 4);
        assert!(s.windows(2).all(|p| p[0] < p[1]), "sorted and distinct");
        // The word separator keeps ("ab","c") apart from ("a","bc").
        assert_ne!(shingles("ab c", 2), shingles("a bc", 2));
    }

    #[test]
    fn shingle_change_is_the_share_of_old_shingles_lost() {
        let old = "one two three four five six seven eight";
        // Old has 5 windows. Changing the last word kills exactly the last window.
        let new = "one two three four five six seven nine";
        assert!((text_change(old, new) - 1.0 / 5.0).abs() < 1e-12);
        // Appending words loses nothing from the old copy...
        let appended = "one two three four five six seven eight nine ten";
        assert_eq!(text_change(old, appended), 0.0);
        // ...but the symmetric distance sees the 2 new windows: 1 − 5/7.
        let a = shingles(old, 4);
        let b = shingles(appended, 4);
        assert!((resemblance_distance(&a, &b) - 2.0 / 7.0).abs() < 1e-12);
        assert_eq!(text_change(old, old), 0.0);
        assert_eq!(text_change(old, "totally different words here now"), 1.0);
        assert_eq!(text_change("", ""), 0.0);
        assert_eq!(text_change("", "new page text"), 1.0);
        assert_eq!(text_change(old, ""), 1.0);
    }

    #[test]
    fn resemblance_distance_is_symmetric_and_bounds_containment() {
        let a = shingles("a b c d e f g h", 4);
        let b = shingles("a b c d x f g h", 4);
        assert_eq!(resemblance_distance(&a, &b), resemblance_distance(&b, &a));
        assert!(resemblance_distance(&a, &b) >= shingle_change(&a, &b));
        // Changing "e" kills all 4 windows containing it (of 5); union 5 + 4 = 9, inter 1.
        assert!((shingle_change(&a, &b) - 4.0 / 5.0).abs() < 1e-12);
        assert!((resemblance_distance(&a, &b) - 8.0 / 9.0).abs() < 1e-12);
        assert_eq!(resemblance_distance(&[], &[]), 0.0);
    }
}
