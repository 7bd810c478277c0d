//! Former spellings of flags, kept working so that scripts do not break (issue 50: one spelling
//! per concept). A former spelling gives the same run as the current one, prints one note on
//! stderr naming the spelling to write instead, and is refused beside the current spelling when
//! the two give different values (neither silently wins).

use std::ffi::OsString;
use std::fmt::Display;

/// A setting given by a former spelling.
#[derive(Debug, Clone, PartialEq)]
pub struct FormerUse {
    /// The former flag, e.g. `--uc-estimator`.
    pub(crate) flag: &'static str,
    /// The current spelling with the value given, e.g. `--param estimator=planned`.
    pub(crate) instead: String,
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

/// The uses of former spellings that clap accepts as aliases of the current flag (`#[arg(alias
/// = …)]`, so the parsed arguments cannot tell them apart): each `(former, current)` pair found
/// on the command line `args`, as `--former VALUE` or `--former=VALUE`.
pub fn aliases_used(
    args: impl Iterator<Item = OsString>,
    aliases: &[(&'static str, &'static str)],
) -> Vec<FormerUse> {
    let args: Vec<String> = args
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    let mut uses = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg.as_str(), None),
        };
        if let Some(&(former, current)) = aliases.iter().find(|(former, _)| *former == flag) {
            let value = inline
                .or(args.get(i + 1).map(String::as_str))
                .unwrap_or("…");
            uses.push(FormerUse {
                flag: former,
                instead: format!("{current} {value}"),
            });
        }
    }
    uses
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
    fn aliases_are_found_in_either_form_with_their_values() {
        let args = [
            "serve",
            "--refresh",
            "sbr",
            "--refresh-param=theta=0.1",
            "--policy",
        ];
        let uses = aliases_used(
            args.iter().map(OsString::from),
            &[("--refresh", "--policy"), ("--refresh-param", "--param")],
        );
        let notes: Vec<String> = uses.iter().map(FormerUse::note).collect();
        assert_eq!(
            notes,
            [
                "note: --refresh is kept as an alias; write --policy sbr",
                "note: --refresh-param is kept as an alias; write --param theta=0.1",
            ]
        );
        let current = ["crawl", "--state-dir", "d", "--", "--index"];
        let uses = aliases_used(
            current.iter().map(OsString::from),
            &[("--index", "--state-dir")],
        );
        assert!(uses.is_empty());
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
