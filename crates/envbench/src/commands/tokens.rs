//! `envbench results token create|list|revoke`: the upload tokens of a results service's store.

use crate::cli::{TokenAction, TokenArgs};
use crate::output::{print, println};
use envbench_core::text::{Align, Table, printable};
use envbench_store::StoreLocation;
use std::process::ExitCode;

/// `envbench results token create|list|revoke`, on a results service's store.
pub fn token(location: &StoreLocation, args: TokenArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        TokenAction::Create(args) => {
            crate::driver::check_name("--name", &args.name)?;
            envbench_service::check_submitter_name(&args.name).map_err(|e| crate::usage(format!("--name: {e}")))?;
            let mut store = envbench_store::open_upload_store(location, true)?;
            let token = envbench_service::new_token()?;
            store.create_token(&args.name, &envbench_service::token_sha256(&token))?;
            eprintln!(
                "upload token for '{}' (shown this once; {} keeps only its SHA-256): give it to them to keep in a file \
                 only they read, for envbench push URL --token-file FILE",
                args.name,
                location.display()
            );
            println(&token);
        }
        TokenAction::List(args) => {
            let store = envbench_store::open_upload_store(location, false)?;
            let tokens = store.upload_tokens()?;
            if args.json {
                println(&serde_json::to_string_pretty(&tokens)?);
            } else if tokens.is_empty() {
                println("No upload tokens yet: envbench results token create --name NAME makes one.");
            } else {
                use Align::{Left, Right};
                let mut table =
                    Table::new(&["NAME", "CREATED (UTC)", "REVOKED (UTC)", "RUNS"], &[Left, Left, Left, Right]);
                let time = |t: &str| t.get(..19).unwrap_or(t).replace('T', " ");
                for t in &tokens {
                    table.row(vec![
                        printable(&t.name),
                        time(&t.created_at),
                        t.revoked_at.as_deref().map(time).unwrap_or_default(),
                        t.runs.to_string(),
                    ]);
                }
                print(&table.render());
            }
        }
        TokenAction::Revoke(args) => {
            let mut store = envbench_store::open_upload_store(location, false)?;
            if !store.revoke_token(&args.name)? {
                return Err(crate::usage(format!(
                    "--name {}: no live token of that name; `envbench results token list` shows them",
                    printable(&args.name)
                )));
            }
            println(&format!("revoked the token of '{}': its uploads are refused from now on", printable(&args.name)));
        }
    }
    Ok(ExitCode::SUCCESS)
}
