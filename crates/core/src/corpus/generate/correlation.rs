//! Correlated change behaviour within groups of pages (`--change-correlation`, `--correlate`).
//!
//! Pages of a group (a directory, a site, or a page with the pages it links to) share a latent
//! component of their change *rates* and of their weekly change *events*. The model is a
//! Gaussian copula, so every page keeps exactly the change behaviour it would have alone: its
//! rate class comes from the same multiset and its weekly event is still "changes with
//! probability `rate`"; only *which* pages change together depends on the strength. Nothing
//! here knows about refresh policies: strength 0 is independent pages, and whether sampling a
//! group pays off is left to be measured.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use super::site::SiteModel;

/// Which groupings share the latent component (any combination; each selected grouping gets an
/// equal share of the strength).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CorrelationGroups {
    /// Pages of one directory (on one site: the whole `/wiki/` directory).
    pub(crate) directory: bool,
    /// Pages of one site (host).
    pub(crate) site: bool,
    /// A page and the pages it links to.
    pub(crate) links: bool,
}

impl Default for CorrelationGroups {
    fn default() -> Self {
        CorrelationGroups {
            directory: true,
            site: false,
            links: false,
        }
    }
}

/// A `--change-correlation` or `--correlate` value that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CorrelationError {
    /// A `--correlate` part that names no grouping.
    #[error("`{part}` is not a grouping (expected directory, site or links, comma-separated)")]
    UnknownGrouping { part: String },
    /// A strength that is neither a keyword nor a number.
    #[error("`{text}` is not none, moderate, strong or a number in [0, 1]")]
    BadStrength { text: String },
    /// A numeric strength outside [0, 1].
    #[error("{value} is not in [0, 1]")]
    StrengthRange { value: f64 },
}

impl CorrelationGroups {
    /// Parses a comma-separated list of `directory`, `site`, `links`.
    pub fn parse(s: &str) -> Result<CorrelationGroups, CorrelationError> {
        let mut g = CorrelationGroups {
            directory: false,
            site: false,
            links: false,
        };
        for part in s.split(',').map(str::trim) {
            match part {
                "directory" => g.directory = true,
                "site" => g.site = true,
                "links" => g.links = true,
                other => {
                    return Err(CorrelationError::UnknownGrouping {
                        part: other.to_string(),
                    })
                }
            }
        }
        Ok(g)
    }

    /// The groupings selected, as `--correlate` spells them (`directory,links`).
    pub fn names(self) -> String {
        [
            (self.directory, "directory"),
            (self.site, "site"),
            (self.links, "links"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect::<Vec<_>>()
        .join(",")
    }

    fn count(self) -> usize {
        [self.directory, self.site, self.links]
            .iter()
            .filter(|&&b| b)
            .count()
    }
}

/// How strongly, and within which groups, pages change together.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChangeCorrelation {
    /// Share ρ ∈ [0, 1] of each page's latent variance that its groups share (0: independent).
    pub strength: f64,
    pub groups: CorrelationGroups,
}

impl Default for ChangeCorrelation {
    fn default() -> Self {
        ChangeCorrelation {
            strength: 0.0,
            groups: CorrelationGroups::default(),
        }
    }
}

/// `--change-correlation moderate`.
pub const MODERATE: f64 = 0.5;
/// `--change-correlation strong`.
pub const STRONG: f64 = 0.9;

impl ChangeCorrelation {
    /// Parses `none`, `moderate`, `strong` or a number in [0, 1].
    pub fn parse_strength(s: &str) -> Result<f64, CorrelationError> {
        match s {
            "none" => Ok(0.0),
            "moderate" => Ok(MODERATE),
            "strong" => Ok(STRONG),
            _ => {
                let v: f64 = s.parse().map_err(|_| CorrelationError::BadStrength {
                    text: s.to_string(),
                })?;
                if (0.0..=1.0).contains(&v) {
                    Ok(v)
                } else {
                    Err(CorrelationError::StrengthRange { value: v })
                }
            }
        }
    }

    /// Whether anything is correlated (otherwise the generator draws as it always did).
    pub fn is_active(&self) -> bool {
        self.strength > 0.0 && self.groups.count() > 0
    }
}

/// A page's place in the groupings: its directory and site ids, and its link neighbours.
pub(super) struct Membership<'a> {
    pub(crate) page: u32,
    pub(crate) directory: u32,
    pub(crate) site: u32,
    pub(crate) links: &'a [u32],
}

/// One draw of every group's shared standard-normal factor.
pub(super) struct Factors {
    directory: Vec<f64>,
    site: Vec<f64>,
    /// One factor per page; a page's link component mixes its own and its neighbours'.
    page: Vec<f64>,
}

impl Factors {
    pub fn draw(rng: &mut ChaCha8Rng, directories: usize, sites: usize, pages: usize) -> Factors {
        let mut normals = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|_| rng.sample::<f64, _>(StandardNormal))
                .collect()
        };
        Factors {
            directory: normals(directories),
            site: normals(sites),
            page: normals(pages),
        }
    }
}

/// The page's latent uniform: `Φ(Σ_k √(ρ/K)·C_k + √(1−ρ)·ε)` over the K selected groupings
/// (Gaussian copula, Nelsen, *An Introduction to Copulas*, 2nd ed., §3.3.1). Each `C_k` is
/// standard normal (the link component `(L_p + Σ_{q∈out(p)} L_q)/√(1+|out(p)|)` too) and
/// independent of `ε ~ N(0,1)`, so the sum is standard normal and the result uniform on
/// (0, 1) for every ρ: marginals never change, only the dependence within groups does.
pub(super) fn latent_uniform(
    correlation: &ChangeCorrelation,
    factors: &Factors,
    member: &Membership<'_>,
    own: f64,
) -> f64 {
    let groups = correlation.groups;
    let k = groups.count();
    let rho = correlation.strength.clamp(0.0, 1.0);
    if k == 0 {
        return normal_cdf(own);
    }
    let w = (rho / k as f64).sqrt();
    let mut z = (1.0 - rho).sqrt() * own;
    if groups.directory {
        z += w * factors.directory[member.directory as usize];
    }
    if groups.site {
        z += w * factors.site[member.site as usize];
    }
    if groups.links {
        let sum: f64 = member
            .links
            .iter()
            .map(|&q| factors.page[q as usize])
            .sum::<f64>()
            + factors.page[member.page as usize];
        z += w * sum / ((1 + member.links.len()) as f64).sqrt();
    }
    normal_cdf(z)
}

/// Φ, the standard normal CDF.
pub(super) fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Every page's latent uniform for one draw of the group factors (`factors_rng`) and of each
/// page's own noise.
fn uniforms(model: &SiteModel, correlation: &ChangeCorrelation, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let pages = model.pages.len();
    let (directories, sites) = model.group_counts();
    let factors = Factors::draw(rng, directories, sites, pages);
    (0..pages as u32)
        .map(|p| {
            let links = if correlation.groups.links {
                model.out_links(p)
            } else {
                Vec::new()
            };
            let member = Membership {
                page: p,
                directory: model.pages[p as usize].dir,
                site: model.site_of(p),
                links: &links,
            };
            let own: f64 = rng.sample(StandardNormal);
            latent_uniform(correlation, &factors, &member, own)
        })
        .collect()
}

/// Shares the change *rate* within groups: the week-0 pages' (rate class, rate, ad share)
/// triples are handed out again in the order of a latent variable that group members share,
/// highest latent to highest rate. The multiset of rates is unchanged, so the site's overall
/// change statistics are too; at strength 0 the order is random (as the classes were dealt).
pub(super) fn correlate_rates(
    model: &mut SiteModel,
    correlation: &ChangeCorrelation,
    rng: &mut ChaCha8Rng,
) {
    let latent = uniforms(model, correlation, rng);
    let mut order: Vec<usize> = (0..latent.len()).collect();
    order.sort_by(|&a, &b| latent[b].total_cmp(&latent[a]).then(a.cmp(&b)));
    let mut params: Vec<_> = model
        .pages
        .iter()
        .map(|p| (p.rate, p.class, p.ad_share))
        .collect();
    params.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (p, (rate, class, ad_share)) in order.into_iter().zip(params) {
        let page = &mut model.pages[p];
        page.rate = rate;
        page.class = class;
        page.ad_share = ad_share;
    }
}

/// One week's change draws: page `p` changes when `u[p] < rate(p)`, so it still changes with
/// probability `rate(p)`, but pages of a group tend to change in the same weeks.
pub(super) fn weekly_uniforms(
    model: &SiteModel,
    correlation: &ChangeCorrelation,
    rng: &mut ChaCha8Rng,
) -> Vec<f64> {
    uniforms(model, correlation, rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strengths_parse() {
        assert_eq!(ChangeCorrelation::parse_strength("none"), Ok(0.0));
        assert_eq!(ChangeCorrelation::parse_strength("moderate"), Ok(MODERATE));
        assert_eq!(ChangeCorrelation::parse_strength("strong"), Ok(STRONG));
        assert_eq!(ChangeCorrelation::parse_strength("0.25"), Ok(0.25));
        assert!(ChangeCorrelation::parse_strength("1.5")
            .unwrap_err()
            .to_string()
            .contains("[0, 1]"));
        assert!(ChangeCorrelation::parse_strength("lots").is_err());
        let g = CorrelationGroups::parse("site,links").unwrap();
        assert!(!g.directory && g.site && g.links);
        assert!(CorrelationGroups::parse("dir")
            .unwrap_err()
            .to_string()
            .contains("`dir`"));
    }

    /// The copula keeps each page's marginal uniform at any strength (so each page still
    /// changes with probability `rate`), and its within-group dependence grows with ρ.
    #[test]
    fn latent_uniforms_stay_uniform_and_correlate_within_groups() {
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for rho in [0.0, 0.5, 0.9] {
            let correlation = ChangeCorrelation {
                strength: rho,
                groups: CorrelationGroups::default(),
            };
            let n = 20_000;
            let (mut below, mut together) = (0usize, 0usize);
            for _ in 0..n {
                let factors = Factors::draw(&mut rng, 2, 1, 0);
                let member = |directory| Membership {
                    page: 0,
                    directory,
                    site: 0,
                    links: &[],
                };
                let a = latent_uniform(
                    &correlation,
                    &factors,
                    &member(0),
                    rng.sample(StandardNormal),
                );
                let b = latent_uniform(
                    &correlation,
                    &factors,
                    &member(0),
                    rng.sample(StandardNormal),
                );
                below += usize::from(a < 0.2);
                together += usize::from(a < 0.2 && b < 0.2);
            }
            let p = below as f64 / n as f64;
            assert!((p - 0.2).abs() < 0.015, "ρ = {rho}: P(u < 0.2) = {p}");
            let joint = together as f64 / n as f64;
            // Independent: 0.04; comonotone (ρ = 1): 0.2.
            match rho {
                0.0 => assert!((joint - 0.04).abs() < 0.01, "{joint}"),
                0.5 => assert!(joint > 0.06 && joint < 0.12, "{joint}"),
                _ => assert!(joint > 0.12, "{joint}"),
            }
        }
    }
}
