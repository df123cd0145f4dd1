use anyhow::Result;
use clap::Args;
pub const AFTER_HELP: &str = "";
#[derive(Args, Debug)]
pub struct BenchArgs {}
pub fn run(_a: BenchArgs, _c: &crate::BackendChoice) -> Result<()> { Ok(()) }
