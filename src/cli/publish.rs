//! `presence publish`: create or refresh this device's record of a session.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use presence::PublishRequest;

use super::{Ctx, Exit, UsageError};

/// The flags that describe a session (shared with later wrappers such as `run`).
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Runtime session id (required)
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// Durable session id [default: the session id]
    #[arg(long, value_name = "K")]
    pub key: Option<String>,
    /// State word: idle, working, waiting, … [default: idle]
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    /// Display title (at most 256 characters)
    #[arg(long, value_name = "T")]
    pub title: Option<String>,
    /// Model name
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Working directory to show
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// Client name [default: the profile's `client`, "terminal"]
    #[arg(long, value_name = "C")]
    pub client: Option<String>,
    /// Source of the session (cli, telegram, …)
    #[arg(long, value_name = "S")]
    pub source: Option<String>,
    /// Private attach hint (ssh://host/x); credentials are stripped, nothing connects to it
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Extra label; repeat for more (at most 32)
    #[arg(long = "meta", value_name = "KEY=VALUE", value_parser = parse_meta)]
    pub meta: Vec<(String, String)>,
    /// Time to live, 1s to 1h [default: the profile's `ttl`, 90s]
    #[arg(long, value_name = "DUR", value_parser = parse_ttl)]
    pub ttl: Option<Duration>,
    /// Pid of the process that owns the session
    #[arg(long, value_name = "PID")]
    pub owner_pid: Option<u32>,
    /// Writer instance id [default: <host>-<first 8 chars of the device id>]
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// Refuse (exit 3) instead of redacting a credential
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct PublishCmd {
    #[command(flatten)]
    pub session: PublishArgs,
    /// Print the written record as JSON
    #[arg(long)]
    pub json: bool,
}

fn parse_meta(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("'{s}' is not KEY=VALUE (e.g. --meta branch=main)")),
    }
}

fn parse_ttl(s: &str) -> Result<Duration, presence::DurationError> {
    presence::parse_duration(s)
}

impl PublishArgs {
    pub fn request(&self) -> Result<PublishRequest, UsageError> {
        let mut metadata = BTreeMap::new();
        for (k, v) in &self.meta {
            if metadata.insert(k.clone(), v.clone()).is_some() {
                return Err(UsageError(format!("--meta {k}=… given twice")));
            }
        }
        let mut req = PublishRequest::new(self.session.clone());
        req.session_key = self.key.clone();
        req.status = self.status.clone();
        req.title = self.title.clone();
        req.model = self.model.clone();
        req.cwd = self.cwd.clone();
        req.client = self.client.clone();
        req.source = self.source.clone();
        req.endpoint = self.endpoint.clone();
        req.metadata = metadata;
        req.ttl = self.ttl;
        req.owner_pid = self.owner_pid;
        req.instance_id = self.instance.clone();
        req.strict = self.strict;
        Ok(req)
    }
}

pub fn run(ctx: &Ctx, cmd: PublishCmd) -> anyhow::Result<Exit> {
    let args = cmd.session;
    let req = args.request()?;
    let registry = ctx.registry()?;
    let dir = registry.profile().dir.clone();
    let published = registry
        .publish(&req, presence::unix_now())
        .with_context(|| {
            // The id may be the very credential the publish was refused for.
            format!(
                "cannot publish session '{}' in {}",
                presence::redact_text(&req.session_id).0,
                dir.display()
            )
        })?;
    for r in &published.redactions {
        ctx.warn(format_args!("redacted a credential from {r}"));
    }
    for w in &published.warnings {
        ctx.warn(w);
    }
    let mut out = std::io::stdout().lock();
    if cmd.json {
        super::output::write_json(&mut out, &published.record)?;
    } else if !ctx.global.quiet {
        let r = &published.record;
        let ttl = r.expires_at.zip(r.updated_at).map_or(0.0, |(e, u)| e - u);
        let msg = format!(
            "published {} ({}, live for {}s unless refreshed)",
            r.session_id,
            published.path.display(),
            ttl.round()
        );
        writeln!(out, "{}", super::safe(&msg))?;
    }
    Ok(Exit::Ok)
}
