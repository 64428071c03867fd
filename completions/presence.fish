# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_presence_global_optspecs
    string join \n profile= config= dir= v/verbose q/quiet color= h/help V/version
end

function __fish_presence_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_presence_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_presence_using_subcommand
    set -l cmd (__fish_presence_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c presence -n "__fish_presence_needs_command" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_needs_command" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_needs_command" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_needs_command" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_needs_command" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_needs_command" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_needs_command" -s V -l version -d 'Print version'
complete -c presence -n "__fish_presence_needs_command" -f -a "publish" -d 'Publish this device\'s record of a session, or update the fields given'
complete -c presence -n "__fish_presence_needs_command" -f -a "list" -d 'List live sessions, newest start first'
complete -c presence -n "__fish_presence_needs_command" -f -a "ls" -d 'List live sessions, newest start first'
complete -c presence -n "__fish_presence_needs_command" -f -a "show" -d 'Show the newest record of one session (by session id or key)'
complete -c presence -n "__fish_presence_needs_command" -f -a "open" -d 'Open a live session: attach to its tmux, ssh or mosh, or its web page'
complete -c presence -n "__fish_presence_needs_command" -f -a "clear" -d 'End this device\'s record of a session (writes a tombstone)'
complete -c presence -n "__fish_presence_needs_command" -f -a "refresh" -d 'Re-publish this device\'s records whose owner runs; clear those whose owner died; publish the live sessions of the agents [discover] names'
complete -c presence -n "__fish_presence_needs_command" -f -a "run" -d 'Run a command, keeping its session published while it runs'
complete -c presence -n "__fish_presence_needs_command" -f -a "expire" -d 'Delete expired records, old tombstones, stale conflict copies and temp files'
complete -c presence -n "__fish_presence_needs_command" -f -a "watch" -d 'Print the live sessions, `ready`, then one line per change (up, update, down)'
complete -c presence -n "__fish_presence_needs_command" -f -a "hook" -d 'Publish and clear sessions from an agent\'s hook events (Hermes Agent)'
complete -c presence -n "__fish_presence_needs_command" -f -a "setup" -d 'Set this device up: the synced directory, the configuration, .stignore, a refresher'
complete -c presence -n "__fish_presence_needs_command" -f -a "doctor" -d 'Check the configuration, the directory, its sync engine and its records'
complete -c presence -n "__fish_presence_needs_command" -f -a "devices" -d 'List the devices with records in the directory and their learned clocks'
complete -c presence -n "__fish_presence_needs_command" -f -a "config" -d 'Show or create the configuration file'
complete -c presence -n "__fish_presence_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c presence -n "__fish_presence_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c presence -n "__fish_presence_using_subcommand publish" -l session -d 'Runtime session id [default: $PRESENCE_SESSION, which `presence run` gives its command]' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l instance -d 'Writer instance id [default: $PRESENCE_INSTANCE when the session comes from $PRESENCE_SESSION, else <host>-<first 8 chars of the device id>]' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l key -d 'Durable session id [default: the session id]' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l title -d 'Display title (at most 256 characters)' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l model -d 'Model name' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l cwd -d 'Working directory to show' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l client -d 'Client name [default: the profile\'s `client`, "terminal"]' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l source -d 'Source of the session (cli, telegram, …)' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l endpoint -d 'Private attach hint that `presence open` acts on (tmux://HOST/SESSION, ssh://…, https://…); credentials are stripped [default inside tmux: tmux://HOST/SESSION:WINDOW.PANE]' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l meta -d 'Extra label; repeat for more (at most 32). KEY= (empty) removes the label' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l unset -d 'Empty a field this device published before; repeat for more' -r -f -a "title\t''
model\t''
cwd\t''
client\t''
source\t''
endpoint\t''
metadata\t''"
complete -c presence -n "__fish_presence_using_subcommand publish" -l ttl -d 'Time to live, 1s to 1h [default: the record\'s own ttl, else the profile\'s `ttl`, 90s]' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l owner-pid -d 'Pid of the process that owns the session [default: the record\'s owner, else none]' -r
complete -c presence -n "__fish_presence_using_subcommand publish" -l status -d 'State word: idle, working, waiting, … [default: the record\'s, else idle]' -r -f -a "idle\t''
working\t''
waiting\t''
interrupted\t''"
complete -c presence -n "__fish_presence_using_subcommand publish" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand publish" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand publish" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand publish" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand publish" -l replace -d 'Write exactly the fields given (the rest at their defaults) instead of changing only those in the record this device has going'
complete -c presence -n "__fish_presence_using_subcommand publish" -l strict -d 'Refuse (exit 3) instead of redacting a credential, or publishing an endpoint that `presence open` would refuse on another device'
complete -c presence -n "__fish_presence_using_subcommand publish" -l json -d 'Print the written record as JSON'
complete -c presence -n "__fish_presence_using_subcommand publish" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand publish" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand publish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand list" -l client -d 'Only records of this client (or source)' -r
complete -c presence -n "__fish_presence_using_subcommand list" -l format -d 'Print each row through a template of `list --json` field names ({open}: the command line `open --print` prints), {metadata.KEY} and the table\'s times {up}, {seen} and {expires}, e.g. \'{client}@{host} {title} ({up})\' ({{ and }} for braces, \\t and \\n for a tab and a newline); with --watch, the rows of each change on one line, separated by spaces' -r
complete -c presence -n "__fish_presence_using_subcommand list" -l sort -d 'Order the rows by KEY (names A to Z ignoring case, empty ones last; ties by start time, then session id)' -r -f -a "started\t'Start time, newest first'
seen\t'When the record last arrived or changed here, newest first'
host\t'Host, A to Z'
client\t'Client (or source), A to Z'
status\t'Status word, A to Z'
title\t'Title, A to Z'"
complete -c presence -n "__fish_presence_using_subcommand list" -l status -d 'Only records with this status (e.g. waiting); repeat for several' -r -f -a "idle\t''
working\t''
waiting\t''
interrupted\t''"
complete -c presence -n "__fish_presence_using_subcommand list" -l session -d 'Only records of this session id or key, or else of the sessions whose id or key starts with it (as `presence open` takes them)' -r -f -a '(__fish_presence_complete sessions)'
complete -c presence -n "__fish_presence_using_subcommand list" -l host -d 'Only records from this host (in any case: DESKTOP is desktop)' -r -f -a '(__fish_presence_complete hosts)'
complete -c presence -n "__fish_presence_using_subcommand list" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand list" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand list" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand list" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand list" -l json -d 'Print one JSON array (json-output.md, under Learn more, documents every field)'
complete -c presence -n "__fish_presence_using_subcommand list" -l all -d 'Show every record: also ended, expired and superseded ones, each marked'
complete -c presence -n "__fish_presence_using_subcommand list" -l include-expired -d 'Also show sessions whose newest record is ended or expired'
complete -c presence -n "__fish_presence_using_subcommand list" -l all-profiles -d 'Show the records of every label in this profile\'s directory, not only those its `show` names (other profiles\' directories are not read)'
complete -c presence -n "__fish_presence_using_subcommand list" -l watch -d 'Print again on every change until interrupted: on a terminal, the table is redrawn in place, cut to the window\'s height under a title line; with --count or --format, one line per change, and with --json one JSON array per change on one line (for status bars)'
complete -c presence -n "__fish_presence_using_subcommand list" -l count -d 'Print only the number of rows (for prompts and status bars)'
complete -c presence -n "__fish_presence_using_subcommand list" -l reverse -d 'Reverse the order'
complete -c presence -n "__fish_presence_using_subcommand list" -l no-trunc -d 'Never cut or hide a column to fit the terminal'
complete -c presence -n "__fish_presence_using_subcommand list" -l no-header -d 'Leave out the table\'s header line'
complete -c presence -n "__fish_presence_using_subcommand list" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand list" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand ls" -l client -d 'Only records of this client (or source)' -r
complete -c presence -n "__fish_presence_using_subcommand ls" -l format -d 'Print each row through a template of `list --json` field names ({open}: the command line `open --print` prints), {metadata.KEY} and the table\'s times {up}, {seen} and {expires}, e.g. \'{client}@{host} {title} ({up})\' ({{ and }} for braces, \\t and \\n for a tab and a newline); with --watch, the rows of each change on one line, separated by spaces' -r
complete -c presence -n "__fish_presence_using_subcommand ls" -l sort -d 'Order the rows by KEY (names A to Z ignoring case, empty ones last; ties by start time, then session id)' -r -f -a "started\t'Start time, newest first'
seen\t'When the record last arrived or changed here, newest first'
host\t'Host, A to Z'
client\t'Client (or source), A to Z'
status\t'Status word, A to Z'
title\t'Title, A to Z'"
complete -c presence -n "__fish_presence_using_subcommand ls" -l status -d 'Only records with this status (e.g. waiting); repeat for several' -r -f -a "idle\t''
working\t''
waiting\t''
interrupted\t''"
complete -c presence -n "__fish_presence_using_subcommand ls" -l session -d 'Only records of this session id or key, or else of the sessions whose id or key starts with it (as `presence open` takes them)' -r -f -a '(__fish_presence_complete sessions)'
complete -c presence -n "__fish_presence_using_subcommand ls" -l host -d 'Only records from this host (in any case: DESKTOP is desktop)' -r -f -a '(__fish_presence_complete hosts)'
complete -c presence -n "__fish_presence_using_subcommand ls" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand ls" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand ls" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand ls" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand ls" -l json -d 'Print one JSON array (json-output.md, under Learn more, documents every field)'
complete -c presence -n "__fish_presence_using_subcommand ls" -l all -d 'Show every record: also ended, expired and superseded ones, each marked'
complete -c presence -n "__fish_presence_using_subcommand ls" -l include-expired -d 'Also show sessions whose newest record is ended or expired'
complete -c presence -n "__fish_presence_using_subcommand ls" -l all-profiles -d 'Show the records of every label in this profile\'s directory, not only those its `show` names (other profiles\' directories are not read)'
complete -c presence -n "__fish_presence_using_subcommand ls" -l watch -d 'Print again on every change until interrupted: on a terminal, the table is redrawn in place, cut to the window\'s height under a title line; with --count or --format, one line per change, and with --json one JSON array per change on one line (for status bars)'
complete -c presence -n "__fish_presence_using_subcommand ls" -l count -d 'Print only the number of rows (for prompts and status bars)'
complete -c presence -n "__fish_presence_using_subcommand ls" -l reverse -d 'Reverse the order'
complete -c presence -n "__fish_presence_using_subcommand ls" -l no-trunc -d 'Never cut or hide a column to fit the terminal'
complete -c presence -n "__fish_presence_using_subcommand ls" -l no-header -d 'Leave out the table\'s header line'
complete -c presence -n "__fish_presence_using_subcommand ls" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand ls" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand ls" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand show" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand show" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand show" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand show" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand show" -l json -d 'Print one JSON object (the shape of a `list --json` element)'
complete -c presence -n "__fish_presence_using_subcommand show" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand show" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand open" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand open" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand open" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand open" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand open" -l print -d 'Print the command, shell-quoted on one line, and run nothing'
complete -c presence -n "__fish_presence_using_subcommand open" -s y -l yes -d 'Open another device\'s session without asking first'
complete -c presence -n "__fish_presence_using_subcommand open" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand open" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand open" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand clear" -l instance -d 'Clear the records of this writer instance' -r
complete -c presence -n "__fish_presence_using_subcommand clear" -l session -d 'Clear the records of this session id or key [default, when neither flag is given: $PRESENCE_SESSION of $PRESENCE_INSTANCE, which `presence run` gives its command]' -r -f -a '(__fish_presence_complete sessions)'
complete -c presence -n "__fish_presence_using_subcommand clear" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand clear" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand clear" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand clear" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand clear" -l all -d 'Clear every live record of this device in the profile (at logout or shutdown: `ExecStop=`, a logout hook)'
complete -c presence -n "__fish_presence_using_subcommand clear" -l all-profiles -d 'With --all: in every profile of the configuration, each directory once, records of any label'
complete -c presence -n "__fish_presence_using_subcommand clear" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand clear" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand clear" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand refresh" -l every -d 'Keep refreshing every DUR until SIGINT/SIGTERM [default DUR: the profile\'s refresh_interval]' -r
complete -c presence -n "__fish_presence_using_subcommand refresh" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand refresh" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand refresh" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand refresh" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand refresh" -l all-profiles -d 'Cover every profile of the configuration: each profile\'s directory (once), and this device\'s records of any label in it; discovery still publishes into the selected profile alone'
complete -c presence -n "__fish_presence_using_subcommand refresh" -l json -d 'Print each pass as one JSON object per line'
complete -c presence -n "__fish_presence_using_subcommand refresh" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand refresh" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand refresh" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand run" -l session -d 'Runtime session id (required)' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l instance -d 'Writer instance id [default: <host>-<first 8 chars of the device id>]' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l key -d 'Durable session id [default: the session id]' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l title -d 'Display title (at most 256 characters)' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l model -d 'Model name' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l cwd -d 'Working directory to show' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l client -d 'Client name [default: the profile\'s `client`, "terminal"]' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l source -d 'Source of the session (cli, telegram, …)' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l endpoint -d 'Private attach hint that `presence open` acts on (tmux://HOST/SESSION, ssh://…, https://…); credentials are stripped [default inside tmux: tmux://HOST/SESSION:WINDOW.PANE]' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l meta -d 'Extra label; repeat for more (at most 32). KEY= (empty) removes the label' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l unset -d 'Empty a field this device published before; repeat for more' -r -f -a "title\t''
model\t''
cwd\t''
client\t''
source\t''
endpoint\t''
metadata\t''"
complete -c presence -n "__fish_presence_using_subcommand run" -l ttl -d 'Time to live, 1s to 1h [default: the record\'s own ttl, else the profile\'s `ttl`, 90s]' -r
complete -c presence -n "__fish_presence_using_subcommand run" -l status -d 'State word while CMD runs [default: working]' -r -f -a "idle\t''
working\t''
waiting\t''
interrupted\t''"
complete -c presence -n "__fish_presence_using_subcommand run" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand run" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand run" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand run" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand run" -l replace -d 'Write exactly the fields given (the rest at their defaults) instead of changing only those in the record this device has going'
complete -c presence -n "__fish_presence_using_subcommand run" -l strict -d 'Refuse (exit 3) instead of redacting a credential, or publishing an endpoint that `presence open` would refuse on another device'
complete -c presence -n "__fish_presence_using_subcommand run" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand run" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand expire" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand expire" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand expire" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand expire" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand expire" -l dry-run -d 'Only list what would be deleted'
complete -c presence -n "__fish_presence_using_subcommand expire" -l json -d 'Print the outcome as JSON'
complete -c presence -n "__fish_presence_using_subcommand expire" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand expire" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand expire" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand watch" -l poll -d 'Poll the directory every DUR instead of using native file events (for network and FUSE mounts) [default DUR: 2s, at least 100ms]' -r
complete -c presence -n "__fish_presence_using_subcommand watch" -l on -d 'Run CMD (after `--`) each time a session goes into status STATE (`up`, `down`: appears, leaves); repeatable; fields in its environment as PRESENCE_SESSION, PRESENCE_HOST, PRESENCE_TITLE, PRESENCE_STATUS, …' -r
complete -c presence -n "__fish_presence_using_subcommand watch" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand watch" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand watch" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand watch" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand watch" -l json -d 'Print NDJSON: one object per line (json-output.md, under Learn more, documents every field)'
complete -c presence -n "__fish_presence_using_subcommand watch" -l all-profiles -d 'Show the records of every label in this profile\'s directory, not only those its `show` names (other profiles\' directories are not read)'
complete -c presence -n "__fish_presence_using_subcommand watch" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand watch" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -f -a "hermes" -d 'Hermes Agent\'s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout'
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -f -a "claude" -d 'Claude Code\'s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)'
complete -c presence -n "__fish_presence_using_subcommand hook; and not __fish_seen_subcommand_from hermes claude help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from hermes" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from hermes" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from hermes" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from hermes" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from hermes" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from hermes" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from hermes" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from claude" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from claude" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from claude" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from claude" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from claude" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from claude" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from claude" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "hermes" -d 'Hermes Agent\'s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "claude" -d 'Claude Code\'s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)'
complete -c presence -n "__fish_presence_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c presence -n "__fish_presence_using_subcommand setup" -l timer -d 'How to keep this device\'s records refreshed [default: systemd where `systemctl --user` works, launchd on macOS, else cron (setup adds its lines to your crontab)]' -r -f -a "systemd\t'systemd user units (service + timer) under ~/.config/systemd/user'
launchd\t'launchd agents under ~/Library/LaunchAgents'
cron\t'lines in your crontab: a refresh at least every refresh_interval, a daily expire'
none\t'nothing'"
complete -c presence -n "__fish_presence_using_subcommand setup" -l agents -d 'Turn on discovery of these local agents\' sessions: [discover] agents in config.toml becomes this list, comma-separated, of claude-code, codex, hermes, opencode; `found` for those installed here; `none` turns discovery off [default: asked on a terminal when agents are found; with --yes, left as it is]' -r -f -a "claude-code\t'Claude Code (~/.claude, or $CLAUDE_CONFIG_DIR)'
codex\t'Codex CLI (~/.codex, or $CODEX_HOME)'
hermes\t'Hermes Agent (~/.hermes, or $HERMES_HOME)'
opencode\t'OpenCode (~/.local/share/opencode, or $XDG_DATA_HOME/opencode)'
found\t'Every one of them found on this device'
none\t'None: turn discovery off'"
complete -c presence -n "__fish_presence_using_subcommand setup" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand setup" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand setup" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand setup" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand setup" -s y -l yes -d 'Answer yes to every question (needed when stdin is not a terminal), but the ones about publishing more: discovery and Claude Code\'s hooks take --agents and --claude-hooks'
complete -c presence -n "__fish_presence_using_subcommand setup" -l dry-run -d 'Print every change setup would make, and make none'
complete -c presence -n "__fish_presence_using_subcommand setup" -l no-timer -d 'Install no refresher (the same as --timer none)'
complete -c presence -n "__fish_presence_using_subcommand setup" -l claude-hooks -d 'Add presence\'s hooks to Claude Code\'s settings.json ($CLAUDE_CONFIG_DIR or ~/.claude; the old file kept beside it) [default: asked on a terminal when Claude Code is found; with --yes, not added]'
complete -c presence -n "__fish_presence_using_subcommand setup" -l uninstall -d 'Remove what setup added (the refresher\'s units or agents, the .stignore lines, its hooks in Claude Code\'s settings); never records or the configuration'
complete -c presence -n "__fish_presence_using_subcommand setup" -l force -d 'Replace unit files and launchd agents edited since setup wrote them (or not written by it); with --uninstall, remove those setup wrote even if edited since'
complete -c presence -n "__fish_presence_using_subcommand setup" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand setup" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand setup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand doctor" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand doctor" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand doctor" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand doctor" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand doctor" -l json -d 'Print the checks as a JSON array'
complete -c presence -n "__fish_presence_using_subcommand doctor" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand doctor" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand devices" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand devices" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand devices" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand devices" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand devices" -l json -d 'Print one JSON array'
complete -c presence -n "__fish_presence_using_subcommand devices" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand devices" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand devices" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -f -a "path" -d 'Print the path of the configuration file in use'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -f -a "show" -d 'Print the selected profile with every setting resolved'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -f -a "init" -d 'Write the commented example configuration (refuses to overwrite)'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -f -a "edit" -d 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved'
complete -c presence -n "__fish_presence_using_subcommand config; and not __fish_seen_subcommand_from path show init edit help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from path" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from path" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from path" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from path" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from path" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from path" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from show" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from show" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from show" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from show" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from init" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from init" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from init" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from init" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from init" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from init" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from edit" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from edit" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from edit" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from edit" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from edit" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from edit" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from edit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print the path of the configuration file in use'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the selected profile with every setting resolved'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "init" -d 'Write the commented example configuration (refuses to overwrite)'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "edit" -d 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved'
complete -c presence -n "__fish_presence_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c presence -n "__fish_presence_using_subcommand completions" -l profile -d 'Profile to use [default: $PRESENCE_PROFILE, else default_profile, else "default"]' -r -f -a '(presence complete profiles 2>/dev/null)'
complete -c presence -n "__fish_presence_using_subcommand completions" -l config -d 'Configuration file [default: $PRESENCE_CONFIG, else <config dir>/presence/config.toml]' -r -F
complete -c presence -n "__fish_presence_using_subcommand completions" -l dir -d 'Use this records directory instead of the profile\'s, this once [default: $PRESENCE_DIR, which `presence run` gives its command, unless --profile names another profile than $PRESENCE_PROFILE]' -r -F
complete -c presence -n "__fish_presence_using_subcommand completions" -l color -d 'When to colour the output (list\'s table, doctor\'s and setup\'s marks)' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or CLICOLOR=0; FORCE_COLOR or CLICOLOR_FORCE also into a pipe'
always\t'Always, also into a pipe (for a pager: less -R)'
never\t'Never'"
complete -c presence -n "__fish_presence_using_subcommand completions" -s v -l verbose -d 'Report skipped files and other details on stderr'
complete -c presence -n "__fish_presence_using_subcommand completions" -s q -l quiet -d 'Leave out warnings, notes and confirmations (published …, cleared …); what a command shows (a table, JSON) is printed all the same'
complete -c presence -n "__fish_presence_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "publish" -d 'Publish this device\'s record of a session, or update the fields given'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "list" -d 'List live sessions, newest start first'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "show" -d 'Show the newest record of one session (by session id or key)'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "open" -d 'Open a live session: attach to its tmux, ssh or mosh, or its web page'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "clear" -d 'End this device\'s record of a session (writes a tombstone)'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "refresh" -d 'Re-publish this device\'s records whose owner runs; clear those whose owner died; publish the live sessions of the agents [discover] names'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "run" -d 'Run a command, keeping its session published while it runs'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "expire" -d 'Delete expired records, old tombstones, stale conflict copies and temp files'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "watch" -d 'Print the live sessions, `ready`, then one line per change (up, update, down)'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "hook" -d 'Publish and clear sessions from an agent\'s hook events (Hermes Agent)'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "setup" -d 'Set this device up: the synced directory, the configuration, .stignore, a refresher'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "doctor" -d 'Check the configuration, the directory, its sync engine and its records'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "devices" -d 'List the devices with records in the directory and their learned clocks'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "config" -d 'Show or create the configuration file'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "completions" -d 'Print a shell completion script'
complete -c presence -n "__fish_presence_using_subcommand help; and not __fish_seen_subcommand_from publish list show open clear refresh run expire watch hook setup doctor devices config completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c presence -n "__fish_presence_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "hermes" -d 'Hermes Agent\'s shell hook: reads the event JSON on stdin, publishes or clears the session it names; prints nothing on stdout'
complete -c presence -n "__fish_presence_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "claude" -d 'Claude Code\'s command hook: reads the event JSON on stdin, publishes, updates or clears the session it names; prints nothing on stdout and never exits 2 (which would block Claude)'
complete -c presence -n "__fish_presence_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "path" -d 'Print the path of the configuration file in use'
complete -c presence -n "__fish_presence_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "show" -d 'Print the selected profile with every setting resolved'
complete -c presence -n "__fish_presence_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "init" -d 'Write the commented example configuration (refuses to overwrite)'
complete -c presence -n "__fish_presence_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "edit" -d 'Open the configuration file in $VISUAL or $EDITOR (the example first, when there is none), then check what was saved'

# Live session ids and hosts, of the profile and directory the command line names.
function __fish_presence_complete
    set -l tokens (commandline -opc)
    set -l args
    for i in (seq 2 (count $tokens))
        switch $tokens[$i]
            case --profile --config --dir
                set -l next (math $i + 1)
                set -q tokens[$next]; and set args $args $tokens[$i] $tokens[$next]
            case '--profile=*' '--config=*' '--dir=*'
                set args $args $tokens[$i]
        end
    end
    presence $args complete $argv 2>/dev/null
end
complete -c presence -n "__fish_presence_using_subcommand show open" -f -a '(__fish_presence_complete sessions)'
# `presence --profile <TAB>`, before the subcommand: the generated condition
# fails while the option still lacks its value.
function __fish_presence_global_profile
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[-1]" = --profile; or return 1
    set -e tokens[-1]
    set -e tokens[1]
    argparse -s (__fish_presence_global_optspecs) -- $tokens 2>/dev/null; or return 1
    not set -q argv[1]
end
complete -c presence -n "__fish_presence_global_profile" -f -a '(presence complete profiles 2>/dev/null)'

# After `run ... --`, complete the rest as the command line it is.
function __fish_presence_run_command
    set -l tokens (commandline -opc)
    set -l i (contains -i -- -- $tokens)
    or return
    complete -C (string join ' ' -- (string escape -- $tokens[(math $i + 1)..-1]) (commandline -ct))
end
complete -c presence -n "__fish_presence_using_subcommand run; and contains -- -- (commandline -opc)" -f -a '(__fish_presence_run_command)'
