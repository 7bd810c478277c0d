//! `refresher export-changes`: the corpus's change matrix in a peer's input format, so the
//! authors' own code can run on the project's data.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use refresher::change::ChangeMatrix;
use refresher::corpus::LiveWeb;

use super::inputs::CorpusArgs;

/// Output layouts.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Paper 001's `aecio/gp4c`: `changes.txt`, one page per line, a 0/1 string whose
    /// character c−1 says whether the page changed in cycle c (unit c); `urls.txt`, the URL
    /// of each line, in the same order.
    Gp4c,
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) corpus: CorpusArgs,
    /// Output layout.
    #[arg(long, value_enum, default_value_t = Format::Gp4c)]
    pub(crate) format: Format,
    /// Directory to write the files into (created when missing).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Print a JSON summary (pages, cycles, changes, files) on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let (corpus, _report) = args.corpus.load()?;
    if corpus.units() < 2 {
        anyhow::bail!(
            "{}: the corpus spans {} time unit(s); a change string needs at least 2",
            args.corpus.display(),
            corpus.units()
        );
    }
    let matrix = ChangeMatrix::from_corpus(&corpus);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let changes_path = args.out.join("changes.txt");
    let urls_path = args.out.join("urls.txt");
    let mut changes = std::io::BufWriter::new(
        std::fs::File::create(&changes_path)
            .with_context(|| format!("writing {}", changes_path.display()))?,
    );
    let mut urls = std::io::BufWriter::new(
        std::fs::File::create(&urls_path)
            .with_context(|| format!("writing {}", urls_path.display()))?,
    );
    let mut total = 0u64;
    for p in 0..matrix.pages() {
        writeln!(changes, "{}", matrix.gp4c_line(p))?;
        writeln!(urls, "{}", corpus.url(p as u32))?;
        total += u64::from(matrix.change_count(p));
    }
    changes.flush()?;
    urls.flush()?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "format": "gp4c",
                "pages": matrix.pages(),
                "cycles": matrix.cycles(),
                "changes": total,
                "changes_file": changes_path,
                "urls_file": urls_path,
            })
        );
    } else {
        println!(
            "{} pages × {} cycles, {total} changes: {} and {}",
            matrix.pages(),
            matrix.cycles(),
            changes_path.display(),
            urls_path.display()
        );
    }
    Ok(())
}
