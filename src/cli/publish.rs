//! `presence publish`: create or update this device's record of a session.
//! Re-publishing a session this device has going is a patch: only the flags
//! given change (see [`presence::PublishRequest`]).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use presence::{Field, PublishRequest};

use super::{Ctx, Exit, UsageError};

/// The flags that describe a session, shared by `publish` and `run`.
#[derive(Debug, Args)]
pub struct FieldArgs {
    /// Durable session id [default: the session id]
    #[arg(long, value_name = "K")]
    pub key: Option<String>,
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
    /// Private attach hint that `presence open` acts on (tmux://HOST/SESSION, ssh://…,
    /// https://…); credentials are stripped [default inside tmux: tmux://HOST/SESSION:WINDOW.PANE]
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Extra label; repeat for more (at most 32). KEY= (empty) removes the label
    #[arg(long = "meta", value_name = "KEY=VALUE", value_parser = parse_meta)]
    pub meta: Vec<(String, String)>,
    /// Empty a field this device published before; repeat for more
    #[arg(long, value_name = "FIELD", value_parser = field_parser())]
    pub unset: Vec<Field>,
    /// Write exactly the fields given (the rest at their defaults) instead of
    /// changing only those in the record this device has going
    #[arg(long)]
    pub replace: bool,
    /// Time to live, 1s to 1h [default: the record's own ttl, else the profile's `ttl`, 90s]
    #[arg(long, value_name = "DUR", value_parser = parse_ttl)]
    pub ttl: Option<Duration>,
    /// Refuse (exit 3) instead of redacting a credential
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct PublishCmd {
    /// Runtime session id [default: $PRESENCE_SESSION, which `presence run` gives its command]
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Writer instance id [default: $PRESENCE_INSTANCE when the session comes from
    /// $PRESENCE_SESSION, else <host>-<first 8 chars of the device id>]
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// State word: idle, working, waiting, … [default: the record's, else idle]
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    #[command(flatten)]
    pub fields: FieldArgs,
    /// Pid of the process that owns the session [default: the record's owner, else none]
    #[arg(long, value_name = "PID")]
    pub owner_pid: Option<u32>,
    /// Print the written record as JSON
    #[arg(long)]
    pub json: bool,
}

fn parse_meta(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!(
            "'{s}' is not KEY=VALUE (e.g. --meta branch=main; --meta branch= removes it)"
        )),
    }
}

/// The fields `--unset` takes, offered by completions and listed in errors.
fn field_parser() -> impl clap::builder::TypedValueParser<Value = Field> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Field::ALL.map(Field::name))
        .try_map(|s| s.parse::<Field>())
}

fn parse_ttl(s: &str) -> Result<Duration, presence::DurationError> {
    presence::parse_duration(s)
}

/// The value of environment variable `name`, if set and not empty.
pub fn env_value(name: &str) -> Result<Option<String>, UsageError> {
    match std::env::var_os(name) {
        None => Ok(None),
        Some(v) if v.is_empty() => Ok(None),
        Some(v) => v
            .into_string()
            .map(Some)
            .map_err(|_| UsageError(format!("${name} is not valid UTF-8"))),
    }
}

/// The session and instance a command inside `presence run` acts on when it
/// names no session: those `run` put in its environment.
pub fn session_from_env(
    session: Option<String>,
    instance: Option<String>,
) -> Result<(Option<String>, Option<String>), UsageError> {
    if session.is_some() {
        return Ok((session, instance));
    }
    let session = env_value("PRESENCE_SESSION")?;
    let instance = match instance {
        Some(i) => Some(i),
        None if session.is_some() => env_value("PRESENCE_INSTANCE")?,
        None => None,
    };
    Ok((session, instance))
}

impl FieldArgs {
    /// The request for session `session`, in state `status`.
    pub fn request(
        &self,
        session: String,
        status: Option<String>,
    ) -> Result<PublishRequest, UsageError> {
        let mut metadata = BTreeMap::new();
        for (k, v) in &self.meta {
            if metadata.insert(k.clone(), v.clone()).is_some() {
                return Err(UsageError(format!("--meta {k}=… given twice")));
            }
        }
        let unset: BTreeSet<Field> = self.unset.iter().copied().collect();
        let mut req = PublishRequest::new(session);
        req.session_key = self.key.clone();
        req.status = status;
        req.title = self.title.clone();
        req.model = self.model.clone();
        req.cwd = self.cwd.clone();
        req.client = self.client.clone();
        req.source = self.source.clone();
        req.endpoint = self.endpoint.clone();
        req.metadata = metadata;
        req.unset = unset;
        req.replace = self.replace;
        req.ttl = self.ttl;
        req.strict = self.strict;
        Ok(req)
    }
}

pub fn run(ctx: &Ctx, cmd: PublishCmd) -> anyhow::Result<Exit> {
    // A bare publish: inside `presence run`, a status update of its session.
    let bare = cmd.session.is_none();
    let (session, instance) = session_from_env(cmd.session, cmd.instance)?;
    let Some(session) = session else {
        return Err(UsageError(
            "name the session: --session ID (inside `presence run`, $PRESENCE_SESSION names it)"
                .into(),
        )
        .into());
    };
    let mut req = cmd.fields.request(session, cmd.status)?;
    req.instance_id = instance;
    req.owner_pid = cmd.owner_pid;
    let registry = ctx.registry()?;
    if req.endpoint.is_none() {
        req.default_endpoint = super::open::here_endpoint(registry.host());
    }
    let dir = registry.profile().dir.clone();
    let published = registry
        .publish(&req, presence::unix_now())
        .with_context(|| {
            // The id may be the very credential the publish was refused for.
            format!(
                "cannot publish session '{}' in {}",
                super::output::id_in_error(&req.session_id),
                dir.display()
            )
        })?;
    for r in &published.redactions {
        ctx.warn(format_args!("redacted a credential from {r}"));
    }
    for w in &published.warnings {
        ctx.warn(w);
    }
    let mut out = super::output::stdout();
    if cmd.json {
        out.json(&published.record)?;
    } else {
        let r = &published.record;
        let msg = format!(
            "published {} ({}, live for {}s unless refreshed)",
            r.session_id,
            published.path.display(),
            published.ttl_s().round()
        );
        if bare {
            // Inside `presence run`, stdout is the wrapped command's own
            // output (a build's log, a pipe): an update says nothing there.
            ctx.detail(msg);
        } else if !ctx.global.quiet {
            out.say(msg)?;
        }
    }
    Ok(Exit::Ok)
}
