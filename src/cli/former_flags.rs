//! Former spellings of flags, kept working so that scripts do not break (issue 50: one spelling
//! per concept). A former spelling gives the same run as the current one, prints one note on
//! stderr naming the spelling to write instead, and is refused beside the current spelling when
//! the two give different values (neither silently wins).

use std::fmt::Display;

/// A setting given by a former spelling.
#[derive(Debug, Clone, PartialEq)]
pub struct FormerUse {
    /// The former flag, e.g. `--uc-estimator`.
    pub flag: &'static str,
    /// The current spelling with the value given, e.g. `--param estimator=planned`.
    pub instead: String,
}

impl FormerUse {
    /// The one line printed on stderr.
    pub fn note(&self) -> String {
        format!(
            "note: {} is kept as an alias; write {}",
            self.flag, self.instead
        )
    }
}

/// Prints each use's note on stderr, one line each.
pub fn print_notes(uses: &[FormerUse]) {
    for used in uses {
        eprintln!("{}", used.note());
    }
}

/// Two spellings of one setting given with different values.
#[derive(Debug, thiserror::Error)]
#[error("{current} and {former} disagree ({former_flag} is kept as an alias of {current_flag}): give one")]
pub struct Disagree {
    /// The current spelling as given, e.g. `--budget-share 0.1`.
    current: String,
    /// The former spelling as given, e.g. `--resources 0.2`.
    former: String,
    current_flag: String,
    former_flag: &'static str,
}

impl Disagree {
    /// `current` (e.g. `--param theta=0.2`, of the flag `current_flag`) against `former`
    /// (e.g. `--theta 0.3`, of the flag `former_flag`).
    pub fn new(
        current: String,
        current_flag: &str,
        former: String,
        former_flag: &'static str,
    ) -> Self {
        Disagree {
            current,
            former,
            current_flag: current_flag.to_string(),
            former_flag,
        }
    }
}

/// The value of a setting that has a current flag and a former one: whichever was given, or
/// the common value when both were; also the former spelling's use, to note.
pub fn one_of<T: PartialEq + Display>(
    current_flag: &'static str,
    current: Option<T>,
    former_flag: &'static str,
    former: Option<T>,
) -> Result<(Option<T>, Option<FormerUse>), Disagree> {
    let Some(old) = former else {
        return Ok((current, None));
    };
    let used = FormerUse {
        flag: former_flag,
        instead: format!("{current_flag} {old}"),
    };
    match current {
        Some(new) if new != old => Err(Disagree::new(
            format!("{current_flag} {new}"),
            current_flag,
            format!("{former_flag} {old}"),
            former_flag,
        )),
        _ => Ok((Some(old), Some(used))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_former_spelling_alone_gives_its_value_and_a_note() {
        let (value, used) = one_of("--budget-share", None, "--resources", Some(0.1)).unwrap();
        assert_eq!(value, Some(0.1));
        assert_eq!(
            used.unwrap().note(),
            "note: --resources is kept as an alias; write --budget-share 0.1"
        );
    }

    #[test]
    fn the_current_spelling_alone_notes_nothing() {
        let (value, used) = one_of("--budget-share", Some(0.1), "--resources", None).unwrap();
        assert_eq!((value, used), (Some(0.1), None));
        let (value, used) = one_of::<u32>("--warmup-units", None, "--warmup", None).unwrap();
        assert_eq!((value, used), (None, None));
    }

    #[test]
    fn both_spellings_must_agree_and_a_disagreement_names_both() {
        let (value, used) = one_of("--warmup-units", Some(3), "--warmup", Some(3)).unwrap();
        assert_eq!(value, Some(3));
        assert!(used.is_some());
        let error = one_of("--warmup-units", Some(3), "--warmup", Some(2)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--warmup-units 3 and --warmup 2 disagree (--warmup is kept as an alias of \
             --warmup-units): give one"
        );
    }
}
