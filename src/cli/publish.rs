//! `presence publish`: create or update this device's record of a session.
//! Re-publishing a session this device has going is a patch: only the flags
//! given change (see [`presence::PublishRequest`]).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use presence::{Field, PublishRequest, open};

use super::{Ctx, Exit, UsageError, output};

// The flags that describe a session, shared by `publish` and `run`. (Not a
// doc comment: clap makes a flattened struct's doc comment the about text
// of the subcommand, and with the subcommands' arguments deferred (see
// `cli::Command`) it would replace the subcommand's own.)
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
    /// Refuse (exit 3) instead of redacting a credential, or publishing an endpoint that
    /// `presence open` would refuse on another device
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

/// `--ttl`: a duration within the ttl's range, refused here, so that the
/// message names the flag.
fn parse_ttl(s: &str) -> Result<Duration, String> {
    use presence::limits::{MAX_TTL, MIN_TTL};
    let ttl = presence::parse_duration(s).map_err(|e| e.to_string())?;
    if (MIN_TTL..=MAX_TTL).contains(&ttl) {
        Ok(ttl)
    } else {
        Err(format!(
            "{} is out of range; use {} to {}",
            humantime::format_duration(ttl),
            humantime::format_duration(MIN_TTL),
            humantime::format_duration(MAX_TTL)
        ))
    }
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
    let problem = match endpoint_check(&req, &registry, cmd.fields.strict) {
        Ok(problem) => problem,
        Err(exit) => return Ok(exit),
    };
    let given = req.endpoint.clone().unwrap_or_default();
    let published = registry
        .publish(&req, presence::unix_now())
        .with_context(|| {
            // The id may be the very credential the publish was refused for.
            format!(
                "cannot publish session '{}' in {}",
                output::id_in_error(&req.session_id),
                dir.display()
            )
        })?;
    for r in &published.redactions {
        ctx.warn(format_args!("redacted a credential from {r}"));
    }
    for w in &published.warnings {
        ctx.warn(w);
    }
    // What was written, if redaction changed what was given.
    let written = &published.record.endpoint;
    let problem = match problem {
        None if *written != given && !given.is_empty() => {
            unopenable(written, &req.session_id, &registry.profile().open_handlers)
        }
        p => p,
    };
    if let Some(p) = problem {
        ctx.warn(p.warning());
    }
    let mut out = output::stdout();
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

/// An endpoint whose host names the machine it is opened on (`localhost`,
/// `127.0.0.1`, `::1`, `*.localhost`): it opens, but on another device it
/// reaches that device, not this one.
fn loopback(endpoint: &str) -> Option<Unopenable> {
    let host = open::Endpoint::parse(endpoint)
        .ok()?
        .host
        .to_ascii_lowercase();
    let is_loopback = host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    is_loopback.then(|| Unopenable {
        message: format!(
            "its host '{host}' is whichever machine opens it: on another device it reaches \
             that device, not this one; name this machine (e.g. $(hostname))"
        ),
        refuse: true,
    })
}

/// Checks the endpoint `req` gives ([`unopenable`]) before it is written:
/// the problem to warn of once it is, or, when `--strict` (`flag`) or the
/// profile's `strict = true` refuses it, the error printed and the exit
/// status (3, as for a credential; nothing is written).
pub fn endpoint_check(
    req: &PublishRequest,
    registry: &presence::Registry,
    flag: bool,
) -> Result<Option<Unopenable>, Exit> {
    let profile = registry.profile();
    let given = req.endpoint.as_deref().unwrap_or_default();
    // An endpoint with a credential is checked once redacted (after the
    // write): a message must not quote the credential, and `--strict`
    // refuses it anyway.
    if !presence::redact_text(given).1.is_empty() {
        return Ok(None);
    }
    let Some(problem) = unopenable(given, &req.session_id, &profile.open_handlers) else {
        return Ok(None);
    };
    let origin = if flag {
        "--strict".to_string()
    } else if profile.strict {
        format!("strict = true (profile '{}')", profile.name)
    } else {
        return Ok(Some(problem));
    };
    if !problem.refuse {
        return Ok(Some(problem));
    }
    output::error(format_args!(
        "cannot publish session '{}' in {}: {origin} refuses an endpoint that will not \
         open: {}; nothing was written",
        output::id_in_error(&req.session_id),
        profile.dir.display(),
        problem.message
    ));
    Err(Exit::Refused)
}

/// Why an endpoint given to `publish` would not open on another device,
/// and what to do about it.
#[derive(Debug, PartialEq, Eq)]
pub struct Unopenable {
    /// `WHY; FIX`.
    pub message: String,
    /// Whether `--strict` refuses it: false for a scheme that only a
    /// handler configured on this device opens (it does open, here).
    pub refuse: bool,
}

impl Unopenable {
    /// The warning `publish` prints.
    pub fn warning(&self) -> String {
        if self.refuse {
            format!("this endpoint will not open: {}", self.message)
        } else {
            self.message.clone()
        }
    }
}

/// Runs `presence open`'s parser over `endpoint` as another device would:
/// with the built-in handlers, the host not this machine. A scheme without
/// a built-in handler is checked with this device's configured one, if
/// any, and the message says that other devices need one too. None when it
/// would open (or there is no endpoint).
pub fn unopenable(endpoint: &str, session_id: &str, here: &open::Handlers) -> Option<Unopenable> {
    use open::OpenError;
    if endpoint.is_empty() {
        return None;
    }
    let target = open::Target {
        this_host: "",
        session_id,
        opener: open::platform_opener(),
        inside_tmux: false,
    };
    let scheme = endpoint
        .split_once("://")
        .map(|(s, _)| s.to_ascii_lowercase())
        .unwrap_or_default();
    let refused = |e: OpenError| {
        let text = e.to_string();
        let why = text.strip_prefix("refused to open: ").unwrap_or(&text);
        let form = match scheme.as_str() {
            "tmux" => "tmux://HOST/SESSION[:WINDOW[.PANE]]",
            "ssh" => "ssh://[USER@]HOST[:PORT][/PATH]",
            "mosh" => "mosh://[USER@]HOST[:PORT]",
            "http" | "https" => "a plain URL: ASCII, no whitespace, percent-encoded",
            _ => "SCHEME://[USER@]HOST[:PORT][/PATH]",
        };
        let fix = match &e {
            OpenError::Invalid { field, value, .. } if *field == "user" && value.is_empty() => {
                format!(
                    "write --endpoint as {form}, without the '@' or with a user (an unset \
                     $USER leaves it empty: ${{USER:-$(id -un)}} is never empty)"
                )
            }
            OpenError::Redacted => {
                "publish the endpoint without the credential (ssh keys or an agent \
                 authenticate without one)"
                    .to_string()
            }
            _ => format!("write --endpoint as {form}"),
        };
        // Some refusals say already what to write.
        let message = if why.contains("(write ") {
            why.to_string()
        } else {
            format!("{why}; {fix}")
        };
        Unopenable {
            message,
            refuse: true,
        }
    };
    match open::argv(endpoint, &open::Handlers::default(), target) {
        Ok(_) => loopback(endpoint),
        Err(OpenError::NoEndpoint) => None,
        Err(OpenError::UnknownScheme { scheme, known }) => match here.configured(&scheme) {
            None => Some(Unopenable {
                message: format!(
                    "no handler for scheme '{scheme}' (built-in: {known}); use one of \
                     those, or configure [open.handlers.{scheme}] on every device that opens \
                     it (`presence config show` lists the handlers)"
                ),
                refuse: true,
            }),
            Some(_) => match open::argv(endpoint, here, target) {
                Ok(_) => Some(Unopenable {
                    message: format!(
                        "scheme '{scheme}' opens only where [open.handlers.{scheme}] is \
                         configured: this device has one, other devices need one too"
                    ),
                    refuse: false,
                }),
                Err(e) => Some(refused(e)),
            },
        },
        Err(e) => Some(refused(e)),
    }
}
