
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'presence' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'presence'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'presence' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('publish', 'publish', [CompletionResultType]::ParameterValue, 'Publish this device''s record of a session, or update the fields given')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List live sessions, newest start first')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'List live sessions, newest start first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the newest record of one session (by session id or key)')
            [CompletionResult]::new('open', 'open', [CompletionResultType]::ParameterValue, 'Open a live session: attach to its tmux, ssh or mosh, or its web page')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'End this device''s record of a session (writes a tombstone)')
            [CompletionResult]::new('refresh', 'refresh', [CompletionResultType]::ParameterValue, 'Re-publish this device''s records whose owner runs; clear those whose owner died; publish the live sessions of the agents [discover] names')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run a command, keeping its session published while it runs')
            [CompletionResult]::new('expire', 'expire', [CompletionResultType]::ParameterValue, 'Delete expired records, old tombstones, stale conflict copies and temp files')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Print the live sessions, `ready`, then one line per change (up, update, down)')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'Publish and clear sessions from an agent''s hook events (Hermes Agent)')
            [CompletionResult]::new('setup', 'setup', [CompletionResultType]::ParameterValue, 'Set this device up: the synced directory, the configuration, .stignore, a refresher')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check the configuration, the directory, its sync engine and its records')
            [CompletionResult]::new('devices', 'devices', [CompletionResultType]::ParameterValue, 'List the devices with records in the directory and their learned clocks')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show or create the configuration file')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'presence;publish' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Runtime session id [default: $PRESENCE_SESSION, which `presence run` gives its command]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'Writer instance id [default: $PRESENCE_INSTANCE when the session comes from $PRESENCE_SESSION, else <host>-<first 8 chars of the device id>]')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Durable session id [default: the session id]')
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'Display title (at most 256 characters)')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Model name')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Working directory to show')
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Client name [default: the profile''s `client`, "terminal"]')
            [CompletionResult]::new('--source', '--source', [CompletionResultType]::ParameterName, 'Source of the session (cli, telegram, …)')
            [CompletionResult]::new('--endpoint', '--endpoint', [CompletionResultType]::ParameterName, 'Private attach hint that `presence open` acts on (tmux://HOST/SESSION, ssh://…, https://…); credentials are stripped [default inside tmux: tmux://HOST/SESSION:WINDOW.PANE]')
            [CompletionResult]::new('--meta', '--meta', [CompletionResultType]::ParameterName, 'Extra label; repeat for more (at most 32). KEY= (empty) removes the label')
            [CompletionResult]::new('--unset', '--unset', [CompletionResultType]::ParameterName, 'Empty a field this device published before; repeat for more')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'Time to live, 1s to 1h [default: the record''s own ttl, else the profile''s `ttl`, 90s]')
            [CompletionResult]::new('--owner-pid', '--owner-pid', [CompletionResultType]::ParameterName, 'Pid of the process that owns the session [default: the record''s owner, else none]')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'State word: idle, working, waiting, … [default: the record''s, else idle]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--replace', '--replace', [CompletionResultType]::ParameterName, 'Write exactly the fields given (the rest at their defaults) instead of changing only those in the record this device has going')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Refuse (exit 3) instead of redacting a credential, or publishing an endpoint that `presence open` would refuse on another device')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the written record as JSON')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;list' {
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Only records of this client (or source)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print each row through a template of `list --json` field names ({open}: the command line `open --print` prints), {metadata.KEY} and the table''s times {up}, {seen} and {expires}, e.g. ''{client}@{host} {title} ({up})'' ({{ and }} for braces, \t and \n for a tab and a newline); with --watch, the rows of each change on one line, separated by spaces')
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order the rows by KEY (names A to Z ignoring case, empty ones last; ties by start time, then session id)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only records with this status (e.g. waiting); repeat for several')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Only records of this session id or key, or else of the sessions whose id or key starts with it (as `presence open` takes them)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Only records from this host (in any case: DESKTOP is desktop)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON array (json-output.md, under Learn more, documents every field)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show every record: also ended, expired and superseded ones, each marked')
            [CompletionResult]::new('--include-expired', '--include-expired', [CompletionResultType]::ParameterName, 'Also show sessions whose newest record is ended or expired')
            [CompletionResult]::new('--all-profiles', '--all-profiles', [CompletionResultType]::ParameterName, 'Show the records of every label in this profile''s directory, not only those its `show` names (other profiles'' directories are not read)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Print again on every change until interrupted: on a terminal, the table is redrawn in place, cut to the window''s height under a title line; with --count or --format, one line per change, and with --json one JSON array per change on one line (for status bars)')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'Print only the number of rows (for prompts and status bars)')
            [CompletionResult]::new('--reverse', '--reverse', [CompletionResultType]::ParameterName, 'Reverse the order')
            [CompletionResult]::new('--no-trunc', '--no-trunc', [CompletionResultType]::ParameterName, 'Never cut or hide a column to fit the terminal')
            [CompletionResult]::new('--no-header', '--no-header', [CompletionResultType]::ParameterName, 'Leave out the table''s header line')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;ls' {
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Only records of this client (or source)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print each row through a template of `list --json` field names ({open}: the command line `open --print` prints), {metadata.KEY} and the table''s times {up}, {seen} and {expires}, e.g. ''{client}@{host} {title} ({up})'' ({{ and }} for braces, \t and \n for a tab and a newline); with --watch, the rows of each change on one line, separated by spaces')
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order the rows by KEY (names A to Z ignoring case, empty ones last; ties by start time, then session id)')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Only records with this status (e.g. waiting); repeat for several')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Only records of this session id or key, or else of the sessions whose id or key starts with it (as `presence open` takes them)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Only records from this host (in any case: DESKTOP is desktop)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON array (json-output.md, under Learn more, documents every field)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show every record: also ended, expired and superseded ones, each marked')
            [CompletionResult]::new('--include-expired', '--include-expired', [CompletionResultType]::ParameterName, 'Also show sessions whose newest record is ended or expired')
            [CompletionResult]::new('--all-profiles', '--all-profiles', [CompletionResultType]::ParameterName, 'Show the records of every label in this profile''s directory, not only those its `show` names (other profiles'' directories are not read)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Print again on every change until interrupted: on a terminal, the table is redrawn in place, cut to the window''s height under a title line; with --count or --format, one line per change, and with --json one JSON array per change on one line (for status bars)')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'Print only the number of rows (for prompts and status bars)')
            [CompletionResult]::new('--reverse', '--reverse', [CompletionResultType]::ParameterName, 'Reverse the order')
            [CompletionResult]::new('--no-trunc', '--no-trunc', [CompletionResultType]::ParameterName, 'Never cut or hide a column to fit the terminal')
            [CompletionResult]::new('--no-header', '--no-header', [CompletionResultType]::ParameterName, 'Leave out the table''s header line')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;show' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (the shape of a `list --json` element)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;open' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the command, shell-quoted on one line, and run nothing')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Open another device''s session without asking first')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Open another device''s session without asking first')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;clear' {
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'Clear the records of this writer instance')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Clear the records of this session id or key [default, when neither flag is given: $PRESENCE_SESSION of $PRESENCE_INSTANCE, which `presence run` gives its command]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Clear every live record of this device in the profile (at logout or shutdown: `ExecStop=`, a logout hook)')
            [CompletionResult]::new('--all-profiles', '--all-profiles', [CompletionResultType]::ParameterName, 'With --all: in every profile of the configuration, each directory once, records of any label')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;refresh' {
            [CompletionResult]::new('--every', '--every', [CompletionResultType]::ParameterName, 'Keep refreshing every DUR until SIGINT/SIGTERM [default DUR: the profile''s refresh_interval]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--all-profiles', '--all-profiles', [CompletionResultType]::ParameterName, 'Cover every profile of the configuration: each profile''s directory (once), and this device''s records of any label in it; discovery still publishes into the selected profile alone')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print each pass as one JSON object per line')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;run' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Runtime session id (required)')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'Writer instance id [default: <host>-<first 8 chars of the device id>]')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'Durable session id [default: the session id]')
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'Display title (at most 256 characters)')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Model name')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Working directory to show')
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Client name [default: the profile''s `client`, "terminal"]')
            [CompletionResult]::new('--source', '--source', [CompletionResultType]::ParameterName, 'Source of the session (cli, telegram, …)')
            [CompletionResult]::new('--endpoint', '--endpoint', [CompletionResultType]::ParameterName, 'Private attach hint that `presence open` acts on (tmux://HOST/SESSION, ssh://…, https://…); credentials are stripped [default inside tmux: tmux://HOST/SESSION:WINDOW.PANE]')
            [CompletionResult]::new('--meta', '--meta', [CompletionResultType]::ParameterName, 'Extra label; repeat for more (at most 32). KEY= (empty) removes the label')
            [CompletionResult]::new('--unset', '--unset', [CompletionResultType]::ParameterName, 'Empty a field this device published before; repeat for more')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'Time to live, 1s to 1h [default: the record''s own ttl, else the profile''s `ttl`, 90s]')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'State word while CMD runs [default: working]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--replace', '--replace', [CompletionResultType]::ParameterName, 'Write exactly the fields given (the rest at their defaults) instead of changing only those in the record this device has going')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Refuse (exit 3) instead of redacting a credential, or publishing an endpoint that `presence open` would refuse on another device')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;expire' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Only list what would be deleted')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the outcome as JSON')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;watch' {
            [CompletionResult]::new('--poll', '--poll', [CompletionResultType]::ParameterName, 'Poll the directory every DUR instead of using native file events (for network and FUSE mounts) [default DUR: 2s, at least 100ms]')
            [CompletionResult]::new('--on', '--on', [CompletionResultType]::ParameterName, 'Run CMD (after `--`) each time a session goes into status STATE (`up`, `down`: appears, leaves); repeatable; fields in its environment as PRESENCE_SESSION, PRESENCE_HOST, PRESENCE_TITLE, PRESENCE_STATUS, …')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print NDJSON: one object per line (json-output.md, under Learn more, documents every field)')
            [CompletionResult]::new('--all-profiles', '--all-profiles', [CompletionResultType]::ParameterName, 'Show the records of every label in this profile''s directory, not only those its `show` names (other profiles'' directories are not read)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;hook' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('hermes', 'hermes', [CompletionResultType]::ParameterValue, 'Hermes Agent''s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout')
            [CompletionResult]::new('claude', 'claude', [CompletionResultType]::ParameterValue, 'Claude Code''s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'presence;hook;hermes' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;hook;claude' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;hook;help' {
            [CompletionResult]::new('hermes', 'hermes', [CompletionResultType]::ParameterValue, 'Hermes Agent''s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout')
            [CompletionResult]::new('claude', 'claude', [CompletionResultType]::ParameterValue, 'Claude Code''s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'presence;hook;help;hermes' {
            break
        }
        'presence;hook;help;claude' {
            break
        }
        'presence;hook;help;help' {
            break
        }
        'presence;setup' {
            [CompletionResult]::new('--timer', '--timer', [CompletionResultType]::ParameterName, 'How to keep this device''s records refreshed [default: systemd where `systemctl --user` works, launchd on macOS, else cron (setup adds its lines to your crontab)]')
            [CompletionResult]::new('--agents', '--agents', [CompletionResultType]::ParameterName, 'Turn on discovery of these local agents'' sessions: [discover] agents in config.toml becomes this list, comma-separated, of claude-code, codex, hermes, opencode; `found` for those installed here; `none` turns discovery off [default: asked on a terminal when agents are found; with --yes, left as it is]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Answer yes to every question (needed when stdin is not a terminal), but the ones about publishing more: discovery and Claude Code''s hooks take --agents and --claude-hooks')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Answer yes to every question (needed when stdin is not a terminal), but the ones about publishing more: discovery and Claude Code''s hooks take --agents and --claude-hooks')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print every change setup would make, and make none')
            [CompletionResult]::new('--no-timer', '--no-timer', [CompletionResultType]::ParameterName, 'Install no refresher (the same as --timer none)')
            [CompletionResult]::new('--claude-hooks', '--claude-hooks', [CompletionResultType]::ParameterName, 'Add presence''s hooks to Claude Code''s settings.json ($CLAUDE_CONFIG_DIR or ~/.claude; the old file kept beside it) [default: asked on a terminal when Claude Code is found; with --yes, not added]')
            [CompletionResult]::new('--uninstall', '--uninstall', [CompletionResultType]::ParameterName, 'Remove what setup added (the refresher''s units or agents, the .stignore lines, its hooks in Claude Code''s settings); never records or the configuration')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace unit files and launchd agents edited since setup wrote them (or not written by it); with --uninstall, remove those setup wrote even if edited since')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;doctor' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print the checks as a JSON array')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;devices' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON array')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;config' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('path', 'path', [CompletionResultType]::ParameterValue, 'Print the path of the configuration file in use')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the selected profile with every setting resolved')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Write the commented example configuration (refuses to overwrite)')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'presence;config;path' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;config;show' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;config;init' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;config;edit' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;config;help' {
            [CompletionResult]::new('path', 'path', [CompletionResultType]::ParameterValue, 'Print the path of the configuration file in use')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the selected profile with every setting resolved')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Write the commented example configuration (refuses to overwrite)')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'presence;config;help;path' {
            break
        }
        'presence;config;help;show' {
            break
        }
        'presence;config;help;init' {
            break
        }
        'presence;config;help;edit' {
            break
        }
        'presence;config;help;help' {
            break
        }
        'presence;completions' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use this records directory instead of the profile''s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the output (list''s table, doctor''s and setup''s marks)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report skipped files and other details on stderr')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'presence;help' {
            [CompletionResult]::new('publish', 'publish', [CompletionResultType]::ParameterValue, 'Publish this device''s record of a session, or update the fields given')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List live sessions, newest start first')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the newest record of one session (by session id or key)')
            [CompletionResult]::new('open', 'open', [CompletionResultType]::ParameterValue, 'Open a live session: attach to its tmux, ssh or mosh, or its web page')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'End this device''s record of a session (writes a tombstone)')
            [CompletionResult]::new('refresh', 'refresh', [CompletionResultType]::ParameterValue, 'Re-publish this device''s records whose owner runs; clear those whose owner died; publish the live sessions of the agents [discover] names')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run a command, keeping its session published while it runs')
            [CompletionResult]::new('expire', 'expire', [CompletionResultType]::ParameterValue, 'Delete expired records, old tombstones, stale conflict copies and temp files')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Print the live sessions, `ready`, then one line per change (up, update, down)')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'Publish and clear sessions from an agent''s hook events (Hermes Agent)')
            [CompletionResult]::new('setup', 'setup', [CompletionResultType]::ParameterValue, 'Set this device up: the synced directory, the configuration, .stignore, a refresher')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check the configuration, the directory, its sync engine and its records')
            [CompletionResult]::new('devices', 'devices', [CompletionResultType]::ParameterValue, 'List the devices with records in the directory and their learned clocks')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show or create the configuration file')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'presence;help;publish' {
            break
        }
        'presence;help;list' {
            break
        }
        'presence;help;show' {
            break
        }
        'presence;help;open' {
            break
        }
        'presence;help;clear' {
            break
        }
        'presence;help;refresh' {
            break
        }
        'presence;help;run' {
            break
        }
        'presence;help;expire' {
            break
        }
        'presence;help;watch' {
            break
        }
        'presence;help;hook' {
            [CompletionResult]::new('hermes', 'hermes', [CompletionResultType]::ParameterValue, 'Hermes Agent''s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout')
            [CompletionResult]::new('claude', 'claude', [CompletionResultType]::ParameterValue, 'Claude Code''s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)')
            break
        }
        'presence;help;hook;hermes' {
            break
        }
        'presence;help;hook;claude' {
            break
        }
        'presence;help;setup' {
            break
        }
        'presence;help;doctor' {
            break
        }
        'presence;help;devices' {
            break
        }
        'presence;help;config' {
            [CompletionResult]::new('path', 'path', [CompletionResultType]::ParameterValue, 'Print the path of the configuration file in use')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print the selected profile with every setting resolved')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Write the commented example configuration (refuses to overwrite)')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved')
            break
        }
        'presence;help;config;path' {
            break
        }
        'presence;help;config;show' {
            break
        }
        'presence;help;config;init' {
            break
        }
        'presence;help;config;edit' {
            break
        }
        'presence;help;completions' {
            break
        }
        'presence;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
