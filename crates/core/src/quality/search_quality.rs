//! The three numbers every output reports about what users see: repository quality (paper 003
//! Eq. 5), top-10 freshness and MAP@10 against the live top 10.

use serde::{Deserialize, Serialize};

/// What users see of the repository at one unit, or averaged over the units of a run.
///
/// Serialises as `quality`, `fresh_at_10`, `map_at_10`; averages are written with the `mean_`
/// prefix through [`mean_keys`] (the keys users' scripts read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchQuality {
    /// Repository quality `Q(W_L)` (paper 003 Eq. 5), in [0, 1].
    pub quality: f64,
    /// Top-10 freshness: the share of the repository's top-10 results whose copy is live.
    pub fresh_at_10: f64,
    /// MAP@10 of the repository's results against the live top 10.
    pub map_at_10: f64,
}

impl SearchQuality {
    /// The component-wise mean, or `None` for no items. Each component is summed in item order
    /// and divided once, so results are reproducible bit for bit.
    pub fn mean_of(items: &[SearchQuality]) -> Option<SearchQuality> {
        if items.is_empty() {
            return None;
        }
        let n = items.len() as f64;
        let mean = |f: fn(&SearchQuality) -> f64| items.iter().map(f).sum::<f64>() / n;
        Some(SearchQuality {
            quality: mean(|s| s.quality),
            fresh_at_10: mean(|s| s.fresh_at_10),
            map_at_10: mean(|s| s.map_at_10),
        })
    }

    /// The same value in all three (e.g. a target quality drawn on every axis).
    pub fn uniform(value: f64) -> SearchQuality {
        SearchQuality {
            quality: value,
            fresh_at_10: value,
            map_at_10: value,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct MeanKeys {
    mean_quality: f64,
    mean_fresh_at_10: f64,
    mean_map_at_10: f64,
}

impl From<SearchQuality> for MeanKeys {
    fn from(s: SearchQuality) -> Self {
        MeanKeys {
            mean_quality: s.quality,
            mean_fresh_at_10: s.fresh_at_10,
            mean_map_at_10: s.map_at_10,
        }
    }
}

impl From<MeanKeys> for SearchQuality {
    fn from(m: MeanKeys) -> Self {
        SearchQuality {
            quality: m.mean_quality,
            fresh_at_10: m.mean_fresh_at_10,
            map_at_10: m.mean_map_at_10,
        }
    }
}

/// Serde adapter for a flattened [`SearchQuality`] of means: keys `mean_quality`,
/// `mean_fresh_at_10`, `mean_map_at_10`. Use as `#[serde(flatten, with = "mean_keys")]`.
pub mod mean_keys {
    use super::{MeanKeys, SearchQuality};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(value: &SearchQuality, s: S) -> Result<S::Ok, S::Error> {
        MeanKeys::from(*value).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SearchQuality, D::Error> {
        MeanKeys::deserialize(d).map(SearchQuality::from)
    }
}

/// As [`mean_keys`] for a mean that may not exist yet (a run with no unit done): `None` writes
/// the three keys as `null`.
pub mod optional_mean_keys {
    use super::SearchQuality;
    use serde::{Serialize, Serializer};

    #[derive(Serialize)]
    struct OptionalMeanKeys {
        mean_quality: Option<f64>,
        mean_fresh_at_10: Option<f64>,
        mean_map_at_10: Option<f64>,
    }

    pub fn serialize<S: Serializer>(
        value: &Option<SearchQuality>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        OptionalMeanKeys {
            mean_quality: value.map(|v| v.quality),
            mean_fresh_at_10: value.map(|v| v.fresh_at_10),
            mean_map_at_10: value.map(|v| v.map_at_10),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Point {
        budget: usize,
        #[serde(flatten, with = "mean_keys")]
        mean: SearchQuality,
    }

    #[test]
    fn means_keep_their_prefixed_keys_both_ways() {
        let p = Point {
            budget: 4,
            mean: SearchQuality {
                quality: 0.5,
                fresh_at_10: 0.25,
                map_at_10: 0.125,
            },
        };
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"budget": 4, "mean_quality": 0.5,
                "mean_fresh_at_10": 0.25, "mean_map_at_10": 0.125})
        );
        assert_eq!(serde_json::from_value::<Point>(json).unwrap(), p);
    }

    #[test]
    fn a_missing_mean_writes_nulls() {
        #[derive(Serialize)]
        struct Info {
            #[serde(flatten, with = "optional_mean_keys")]
            mean: Option<SearchQuality>,
        }
        let json = serde_json::to_value(Info { mean: None }).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"mean_quality": null, "mean_fresh_at_10": null, "mean_map_at_10": null})
        );
    }

    #[test]
    fn mean_of_sums_in_order_and_divides_once() {
        let a = SearchQuality::uniform(0.1);
        let b = SearchQuality::uniform(0.7);
        let m = SearchQuality::mean_of(&[a, b]).unwrap();
        assert_eq!(m.quality, (0.1 + 0.7) / 2.0);
        assert_eq!(SearchQuality::mean_of(&[]), None);
    }
}
