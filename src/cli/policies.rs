//! `refresher policies`: every refresh policy family with its parameters, from the table the
//! CLI, the server and the sweeps read.

use refresher::policy::family::ParamKind;
use refresher::policy::registry::{families_json, FAMILIES};

#[derive(clap::Args)]
pub struct Args {
    /// Print the table as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(&families_json())?);
        return Ok(());
    }
    for f in FAMILIES {
        println!("{}\n    {}", f.name, f.description);
        for p in f.params {
            let kind = match p.kind {
                ParamKind::Number { min, max, integer } => {
                    let what = if integer { "integer" } else { "number" };
                    if max.is_finite() && max < 1e9 {
                        format!("{what} in [{min}, {max}]")
                    } else {
                        format!("{what} ≥ {min}")
                    }
                }
                ParamKind::Choice(words) => words.join(" | "),
                ParamKind::Text => "text".to_string(),
            };
            println!("    --param {}=…   {kind}; default: {}", p.key, p.default);
            println!("        {}", p.description);
            if !p.sweep.is_empty() {
                let grid: Vec<String> = p.sweep.iter().map(|x| x.to_string()).collect();
                println!("        compare sweeps: {}", grid.join(", "));
            }
        }
    }
    Ok(())
}
