//! What a package installs beside the binary, made from the one command line so it never trails it: shell
//! completions (clap_complete) and man pages (clap_mangen), one page for envbench and one for each of its commands.

use crate::usage;
use std::path::Path;
use std::process::ExitCode;

/// `envbench completions SHELL`: the completion script on standard output.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut command = crate::cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "envbench", &mut script);
    crate::output::print(&String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}

/// `envbench manpages DIR`: `envbench.1` and `envbench-COMMAND.1` for every command, into a directory envbench makes
/// or that is empty, so no file of anyone else's is overwritten.
pub fn manpages(dir: &Path) -> anyhow::Result<ExitCode> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(usage(format!(
                    "{}: the directory is not empty; give a new or empty one, so no file in it is overwritten",
                    dir.display()
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: cannot be made ({e})", dir.display()))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(usage(format!("{}: not a directory; give a new or empty directory", dir.display())));
        }
        Err(e) => return Err(anyhow::anyhow!("{}: cannot be read ({e})", dir.display())),
    }
    let command = crate::cli::command();
    clap_mangen::generate_to(command, dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    let pages = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    eprintln!("envbench: {pages} man pages in {}", dir.display());
    Ok(ExitCode::SUCCESS)
}
