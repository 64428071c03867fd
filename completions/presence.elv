
use builtin;
use str;

set edit:completion:arg-completer[presence] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'presence'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'presence'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand publish 'Publish this device''s record of a session, or update the fields given'
            cand list 'List live sessions, newest start first'
            cand ls 'List live sessions, newest start first'
            cand show 'Show the newest record of one session (by session id or key)'
            cand open 'Open a live session: attach to its tmux, ssh or mosh, or its web page'
            cand clear 'End this device''s record of a session (writes a tombstone)'
            cand refresh 'Re-publish this device''s records whose owner runs; clear those whose owner died; publish the live sessions of the agents [discover] names'
            cand run 'Run a command, keeping its session published while it runs'
            cand expire 'Delete expired records, old tombstones, stale conflict copies and temp files'
            cand watch 'Print the live sessions, `ready`, then one line per change (up, update, down)'
            cand hook 'Publish and clear sessions from an agent''s hook events (Hermes Agent)'
            cand setup 'Set this device up: the synced directory, the configuration, .stignore, a refresher'
            cand doctor 'Check the configuration, the directory, its sync engine and its records'
            cand devices 'List the devices with records in the directory and their learned clocks'
            cand config 'Show or create the configuration file'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'presence;publish'= {
            cand --session 'Runtime session id [default: $PRESENCE_SESSION, which `presence run` gives its command]'
            cand --instance 'Writer instance id [default: $PRESENCE_INSTANCE when the session comes from $PRESENCE_SESSION, else <host>-<first 8 chars of the device id>]'
            cand --key 'Durable session id [default: the session id]'
            cand --title 'Display title (at most 256 characters)'
            cand --model 'Model name'
            cand --cwd 'Working directory to show'
            cand --client 'Client name [default: the profile''s `client`, "terminal"]'
            cand --source 'Source of the session (cli, telegram, …)'
            cand --endpoint 'Private attach hint that `presence open` acts on (tmux://HOST/SESSION, ssh://…, https://…); credentials are stripped [default inside tmux: tmux://HOST/SESSION:WINDOW.PANE]'
            cand --meta 'Extra label; repeat for more (at most 32). KEY= (empty) removes the label'
            cand --unset 'Empty a field this device published before; repeat for more'
            cand --ttl 'Time to live, 1s to 1h [default: the record''s own ttl, else the profile''s `ttl`, 90s]'
            cand --owner-pid 'Pid of the process that owns the session [default: the record''s owner, else none]'
            cand --status 'State word: idle, working, waiting, … [default: the record''s, else idle]'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --replace 'Write exactly the fields given (the rest at their defaults) instead of changing only those in the record this device has going'
            cand --strict 'Refuse (exit 3) instead of redacting a credential, or publishing an endpoint that `presence open` would refuse on another device'
            cand --json 'Print the written record as JSON'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;list'= {
            cand --client 'Only records of this client (or source)'
            cand --format 'Print each row through a template of `list --json` field names ({open}: the command line `open --print` prints), {metadata.KEY} and the table''s times {up}, {seen} and {expires}, e.g. ''{client}@{host} {title} ({up})'' ({{ and }} for braces, \t and \n for a tab and a newline); with --watch, the rows of each change on one line, separated by spaces'
            cand --sort 'Order the rows by KEY (names A to Z ignoring case, empty ones last; ties by start time, then session id)'
            cand --status 'Only records with this status (e.g. waiting); repeat for several'
            cand --session 'Only records of this session id or key, or else of the sessions whose id or key starts with it (as `presence open` takes them)'
            cand --host 'Only records from this host (in any case: DESKTOP is desktop)'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --json 'Print one JSON array (json-output.md, under Learn more, documents every field)'
            cand --all 'Show every record: also ended, expired and superseded ones, each marked'
            cand --include-expired 'Also show sessions whose newest record is ended or expired'
            cand --all-profiles 'Show the records of every label in this profile''s directory, not only those its `show` names (other profiles'' directories are not read)'
            cand --watch 'Print again on every change until interrupted: on a terminal, the table is redrawn in place, cut to the window''s height under a title line; with --count or --format, one line per change, and with --json one JSON array per change on one line (for status bars)'
            cand --count 'Print only the number of rows (for prompts and status bars)'
            cand --reverse 'Reverse the order'
            cand --no-trunc 'Never cut or hide a column to fit the terminal'
            cand --no-header 'Leave out the table''s header line'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;ls'= {
            cand --client 'Only records of this client (or source)'
            cand --format 'Print each row through a template of `list --json` field names ({open}: the command line `open --print` prints), {metadata.KEY} and the table''s times {up}, {seen} and {expires}, e.g. ''{client}@{host} {title} ({up})'' ({{ and }} for braces, \t and \n for a tab and a newline); with --watch, the rows of each change on one line, separated by spaces'
            cand --sort 'Order the rows by KEY (names A to Z ignoring case, empty ones last; ties by start time, then session id)'
            cand --status 'Only records with this status (e.g. waiting); repeat for several'
            cand --session 'Only records of this session id or key, or else of the sessions whose id or key starts with it (as `presence open` takes them)'
            cand --host 'Only records from this host (in any case: DESKTOP is desktop)'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --json 'Print one JSON array (json-output.md, under Learn more, documents every field)'
            cand --all 'Show every record: also ended, expired and superseded ones, each marked'
            cand --include-expired 'Also show sessions whose newest record is ended or expired'
            cand --all-profiles 'Show the records of every label in this profile''s directory, not only those its `show` names (other profiles'' directories are not read)'
            cand --watch 'Print again on every change until interrupted: on a terminal, the table is redrawn in place, cut to the window''s height under a title line; with --count or --format, one line per change, and with --json one JSON array per change on one line (for status bars)'
            cand --count 'Print only the number of rows (for prompts and status bars)'
            cand --reverse 'Reverse the order'
            cand --no-trunc 'Never cut or hide a column to fit the terminal'
            cand --no-header 'Leave out the table''s header line'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;show'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --json 'Print one JSON object (the shape of a `list --json` element)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;open'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --print 'Print the command, shell-quoted on one line, and run nothing'
            cand -y 'Open another device''s session without asking first'
            cand --yes 'Open another device''s session without asking first'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;clear'= {
            cand --instance 'Clear the records of this writer instance'
            cand --session 'Clear the records of this session id or key [default, when neither flag is given: $PRESENCE_SESSION of $PRESENCE_INSTANCE, which `presence run` gives its command]'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --all 'Clear every live record of this device in the profile (at logout or shutdown: `ExecStop=`, a logout hook)'
            cand --all-profiles 'With --all: in every profile of the configuration, each directory once, records of any label'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;refresh'= {
            cand --every 'Keep refreshing every DUR until SIGINT/SIGTERM [default DUR: the profile''s refresh_interval]'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --all-profiles 'Cover every profile of the configuration: each profile''s directory (once), and this device''s records of any label in it; discovery still publishes into the selected profile alone'
            cand --json 'Print each pass as one JSON object per line'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;run'= {
            cand --session 'Runtime session id (required)'
            cand --instance 'Writer instance id [default: <host>-<first 8 chars of the device id>]'
            cand --key 'Durable session id [default: the session id]'
            cand --title 'Display title (at most 256 characters)'
            cand --model 'Model name'
            cand --cwd 'Working directory to show'
            cand --client 'Client name [default: the profile''s `client`, "terminal"]'
            cand --source 'Source of the session (cli, telegram, …)'
            cand --endpoint 'Private attach hint that `presence open` acts on (tmux://HOST/SESSION, ssh://…, https://…); credentials are stripped [default inside tmux: tmux://HOST/SESSION:WINDOW.PANE]'
            cand --meta 'Extra label; repeat for more (at most 32). KEY= (empty) removes the label'
            cand --unset 'Empty a field this device published before; repeat for more'
            cand --ttl 'Time to live, 1s to 1h [default: the record''s own ttl, else the profile''s `ttl`, 90s]'
            cand --status 'State word while CMD runs [default: working]'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --replace 'Write exactly the fields given (the rest at their defaults) instead of changing only those in the record this device has going'
            cand --strict 'Refuse (exit 3) instead of redacting a credential, or publishing an endpoint that `presence open` would refuse on another device'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;expire'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --dry-run 'Only list what would be deleted'
            cand --json 'Print the outcome as JSON'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;watch'= {
            cand --poll 'Poll the directory every DUR instead of using native file events (for network and FUSE mounts) [default DUR: 2s, at least 100ms]'
            cand --on 'Run CMD (after `--`) each time a session goes into status STATE (`up`, `down`: appears, leaves); repeatable; fields in its environment as PRESENCE_SESSION, PRESENCE_HOST, PRESENCE_TITLE, PRESENCE_STATUS, …'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --json 'Print NDJSON: one object per line (json-output.md, under Learn more, documents every field)'
            cand --all-profiles 'Show the records of every label in this profile''s directory, not only those its `show` names (other profiles'' directories are not read)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;hook'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand hermes 'Hermes Agent''s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout'
            cand claude 'Claude Code''s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'presence;hook;hermes'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;hook;claude'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;hook;help'= {
            cand hermes 'Hermes Agent''s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout'
            cand claude 'Claude Code''s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'presence;hook;help;hermes'= {
        }
        &'presence;hook;help;claude'= {
        }
        &'presence;hook;help;help'= {
        }
        &'presence;setup'= {
            cand --timer 'How to keep this device''s records refreshed [default: systemd where `systemctl --user` works, launchd on macOS, else cron (setup adds its lines to your crontab)]'
            cand --agents 'Turn on discovery of these local agents'' sessions: [discover] agents in config.toml becomes this list, comma-separated, of claude-code, codex, hermes, opencode; `found` for those installed here; `none` turns discovery off [default: asked on a terminal when agents are found; with --yes, left as it is]'
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -y 'Answer yes to every question (needed when stdin is not a terminal), but the ones about publishing more: discovery and Claude Code''s hooks take --agents and --claude-hooks'
            cand --yes 'Answer yes to every question (needed when stdin is not a terminal), but the ones about publishing more: discovery and Claude Code''s hooks take --agents and --claude-hooks'
            cand --dry-run 'Print every change setup would make, and make none'
            cand --no-timer 'Install no refresher (the same as --timer none)'
            cand --claude-hooks 'Add presence''s hooks to Claude Code''s settings.json ($CLAUDE_CONFIG_DIR or ~/.claude; the old file kept beside it) [default: asked on a terminal when Claude Code is found; with --yes, not added]'
            cand --uninstall 'Remove what setup added (the refresher''s units or agents, the .stignore lines, its hooks in Claude Code''s settings); never records or the configuration'
            cand --force 'Replace unit files and launchd agents edited since setup wrote them (or not written by it); with --uninstall, remove those setup wrote even if edited since'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;doctor'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --json 'Print the checks as a JSON array'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;devices'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand --json 'Print one JSON array'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;config'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand path 'Print the path of the configuration file in use'
            cand show 'Print the selected profile with every setting resolved'
            cand init 'Write the commented example configuration (refuses to overwrite)'
            cand edit 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'presence;config;path'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;config;show'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;config;init'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;config;edit'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;config;help'= {
            cand path 'Print the path of the configuration file in use'
            cand show 'Print the selected profile with every setting resolved'
            cand init 'Write the commented example configuration (refuses to overwrite)'
            cand edit 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'presence;config;help;path'= {
        }
        &'presence;config;help;show'= {
        }
        &'presence;config;help;init'= {
        }
        &'presence;config;help;edit'= {
        }
        &'presence;config;help;help'= {
        }
        &'presence;completions'= {
            cand --profile 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]'
            cand --config 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]'
            cand --dir 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]'
            cand --color 'When to colour the output (list''s table, doctor''s and setup''s marks)'
            cand -v 'Report skipped files and other details on stderr'
            cand --verbose 'Report skipped files and other details on stderr'
            cand -q 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand --quiet 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'presence;help'= {
            cand publish 'Publish this device''s record of a session, or update the fields given'
            cand list 'List live sessions, newest start first'
            cand show 'Show the newest record of one session (by session id or key)'
            cand open 'Open a live session: attach to its tmux, ssh or mosh, or its web page'
            cand clear 'End this device''s record of a session (writes a tombstone)'
            cand refresh 'Re-publish this device''s records whose owner runs; clear those whose owner died; publish the live sessions of the agents [discover] names'
            cand run 'Run a command, keeping its session published while it runs'
            cand expire 'Delete expired records, old tombstones, stale conflict copies and temp files'
            cand watch 'Print the live sessions, `ready`, then one line per change (up, update, down)'
            cand hook 'Publish and clear sessions from an agent''s hook events (Hermes Agent)'
            cand setup 'Set this device up: the synced directory, the configuration, .stignore, a refresher'
            cand doctor 'Check the configuration, the directory, its sync engine and its records'
            cand devices 'List the devices with records in the directory and their learned clocks'
            cand config 'Show or create the configuration file'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'presence;help;publish'= {
        }
        &'presence;help;list'= {
        }
        &'presence;help;show'= {
        }
        &'presence;help;open'= {
        }
        &'presence;help;clear'= {
        }
        &'presence;help;refresh'= {
        }
        &'presence;help;run'= {
        }
        &'presence;help;expire'= {
        }
        &'presence;help;watch'= {
        }
        &'presence;help;hook'= {
            cand hermes 'Hermes Agent''s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout'
            cand claude 'Claude Code''s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)'
        }
        &'presence;help;hook;hermes'= {
        }
        &'presence;help;hook;claude'= {
        }
        &'presence;help;setup'= {
        }
        &'presence;help;doctor'= {
        }
        &'presence;help;devices'= {
        }
        &'presence;help;config'= {
            cand path 'Print the path of the configuration file in use'
            cand show 'Print the selected profile with every setting resolved'
            cand init 'Write the commented example configuration (refuses to overwrite)'
            cand edit 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved'
        }
        &'presence;help;config;path'= {
        }
        &'presence;help;config;show'= {
        }
        &'presence;help;config;init'= {
        }
        &'presence;help;config;edit'= {
        }
        &'presence;help;completions'= {
        }
        &'presence;help;help'= {
        }
    ]
    $completions[$command]
}
