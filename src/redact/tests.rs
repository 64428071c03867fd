//! Unit tests and property tests of redaction: the benign and secret
//! corpora, the endpoint and name tables, and leak-freedom, idempotence and
//! the prefilter's soundness over generated text.

use super::gates::{
    Gates, Group, Hits, gates, has_b64_run, has_dotted_token, hits, literals, tail_holds,
};
use super::names::{is_credential_param, is_secret_key};
use super::shapes::shape_count;
use super::*;
use proptest::prelude::*;

include!("../../tests/data/redact/corpus.rs");

const BENIGN: &str = include_str!("../../tests/data/redact/benign.txt");
const SECRETS: &str = include_str!("../../tests/data/redact/secrets.txt");

/// A header whose value is another header's name: the second value is
/// judged in the first pass too, so a second pass (after another rule
/// masked the first name away) finds nothing left.
#[test]
fn a_header_named_as_a_headers_value_is_judged_in_one_pass() {
    let text = "token=:Authorization: Authorization: 0";
    for redact in [redact_text, redact_endpoint] {
        let (once, _) = redact(text);
        assert_eq!(once, "token=[redacted] Authorization: [redacted]");
        assert_eq!(redact(&once), (once.clone(), vec![]));
    }
}

#[test]
fn benign_corpus_passes_unchanged() {
    let lines = corpus(BENIGN);
    assert!(lines.len() >= 500, "{} benign strings", lines.len());
    let changed: Vec<_> = lines
        .iter()
        .filter_map(|l| {
            let (out, kinds) = redact_text(l);
            (out != *l || !kinds.is_empty()).then(|| format!("{l:?} -> {out:?} {kinds:?}"))
        })
        .collect();
    assert!(changed.is_empty(), "changed:\n{}", changed.join("\n"));
    // As a record's fields, metadata and endpoint, too.
    for l in &lines {
        let mut r = Record::new("s");
        r.title = l.clone();
        r.endpoint = l.clone();
        r.metadata.insert("note".into(), l.clone());
        let before = r.clone();
        assert_eq!(redact_record(&mut r), vec![], "{l:?}");
        assert_eq!(r, before);
        assert!(
            credential_in_id(&Record::new(l.as_str())).is_none(),
            "{l:?}"
        );
    }
}

#[test]
fn secret_corpus_is_caught_exactly() {
    let lines = corpus(SECRETS);
    assert!(lines.len() >= 200, "{} secret strings", lines.len());
    let mut wrong = Vec::new();
    for line in &lines {
        let (input, want, secrets) = marked(line);
        assert!(!secrets.is_empty(), "no marked secret in {line:?}");
        let (out, kinds) = redact_text(&input);
        if out != want || kinds.is_empty() {
            wrong.push(format!("{input:?}\n  got  {out:?}\n  want {want:?}"));
        }
        if let Some(s) = secrets.iter().find(|s| out.contains(s.as_str())) {
            wrong.push(format!("{s:?} leaked in {out:?}"));
            continue;
        }
        let (again, more) = redact_text(&out);
        assert_eq!(
            (&again, &more),
            (&out, &vec![]),
            "not idempotent: {input:?}"
        );
        // An id holding it is refused, never rewritten.
        let found = credential_in_id(&Record::new(input.as_str()));
        assert_eq!(
            found.map(|f| f.field),
            Some("session_id".to_string()),
            "{input:?}"
        );
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Each `(text, kind)`: the text with its `⟦…⟧` parts redacted, reported
/// as `kind`; each look-alike unchanged.
fn check_rule(secrets: &[(&str, &str)], look_alikes: &[&str]) {
    for (line, kind) in secrets {
        let (input, want, _) = marked(line);
        assert_eq!(redact_text(&input), (want, vec![*kind]), "{input:?}");
    }
    for text in look_alikes {
        assert_eq!(redact_text(text), (text.to_string(), vec![]), "{text:?}");
    }
}

#[test]
fn netrc_passwords() {
    check_rule(
        &[
            (
                "machine api.example.com login bob password ⟦hunter2xyz⟧",
                "netrc password",
            ),
            (
                "machine h\n  login alice\n  password ⟦swordfish⟧",
                "netrc password",
            ),
            ("machine db.internal password ⟦swordfish⟧", "netrc password"),
            ("default login anonymous passwd ⟦guest⟧", "netrc password"),
            ("login bob password ⟦Tr0ub4dor&3⟧", "netrc password"),
            (
                "echo \"machine h.example login u password ⟦pw,1;x⟧\" >> ~/.netrc",
                "netrc password",
            ),
        ],
        &[
            "password reset page",
            "login page password reset",
            "machine learning password generator",
            "the machine password policy",
            "the default login password length is 12",
            "machine h.example login u password $NETRC_PASSWORD",
        ],
    );
}

#[test]
fn passwords_of_dash_p() {
    check_rule(
        &[
            ("mysql -u root -p⟦S3cretPw⟧ app", "password of -p"),
            (
                "mysqldump -u backup -p'⟦pa ss⟧' --all-databases",
                "password of -p",
            ),
            ("mariadb -uroot -p⟦r00tpw⟧", "password of -p"),
            ("sshpass -p ⟦hunter2⟧ ssh alice@laptop", "password of -p"),
            ("sshpass -p⟦hunter2⟧ scp f host:", "password of -p"),
            ("mysql --password=⟦hunter2⟧ -u root", "secret assignment"),
        ],
        &[
            "-p 8080",
            "docker run -p 8080:80 nginx",
            "ssh -p 2222 alice@laptop",
            "mkdir -p build/out",
            "mysql -u root -p app_db",
            "mysql -p",
            "mysql -P 3306 -h db.internal",
            "mysql -u root -p$MYSQL_ROOT_PASSWORD",
            "sshpass -e ssh alice@laptop",
        ],
    );
}

#[test]
fn key_bodies_without_their_begin_line() {
    let line = "kTc8Hln0XoGJMqgZe9beHqvVgWS3IwHW2r86XZRXHCa75LSdTgs6+D7QDYrgIGKe";
    let body = format!("{line}\n{line}");
    check_rule(
        &[
            ("⟦MIIEvQIBADANBgkqhkiG9w0BAQEFAASC⟧...", "private key"),
            (
                "key: ⟦MIIEowIBAAKCAQEAnqnUsQ9IDgzExZE3PB5Z9F6B⟧",
                "private key",
            ),
            ("⟦MHcCAQEEIHgnG1KRMY2JQKwUKMHoIvgrjeRhV1b4⟧", "private key"),
            (
                "⟦MC4CAQAwBQYDK2VwBCIEIKitiuGxx/VMEWQtMeEYPODx⟧",
                "private key",
            ),
            ("⟦b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9u⟧", "private key"),
            (&format!("⟦{body}⟧"), "private key"),
            (
                "end: ⟦BeGWzUU8r3SBEvxONI13PyY=\n-----END PRIVATE KEY-----⟧",
                "private key",
            ),
        ],
        &[
            "-----END RSA PRIVATE KEY-----",
            "paste the key up to -----END PRIVATE KEY-----",
            "MIIEvQIBADANBgkq is how a PKCS #8 key starts",
            &format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"),
            &format!("{line}\nthen prose"),
            &format!("{}\n{}", "0f".repeat(32), "a1".repeat(32)),
        ],
    );
}

#[test]
fn putty_keys() {
    let b64 = "xC+1hsYgBds1ghxY5OokvQyx7eNWVQ4vnakJkS1pAWTN3lg8zV5yPU8d0FZfWe7i";
    check_rule(
        &[
            (
                &format!(
                    "⟦PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\n\
                     Public-Lines: 1\n{b64}\nPrivate-Lines: 1\n{b64}\nPrivate-MAC: 0a1b2c⟧ ok"
                ),
                "PuTTY private key",
            ),
            (
                &format!("⟦Private-Lines: 1\n{b64}\nPrivate-MAC: 0a1b⟧"),
                "PuTTY private key",
            ),
        ],
        &[
            "PuTTY-User-Key-File-2 is the header of a .ppk file",
            "Private-Lines: counts the lines that follow",
        ],
    );
}

#[test]
fn base64_wrapped_credentials() {
    // `ghp_…`, `password=hunter2Xy`, a URL with a password, in base64.
    check_rule(
        &[
            (
                "echo ⟦Z2hwX0duY2ZCQWVwZkpCZDBLaDhvT09MOGRLTHpkb2NKMmlzQWpJaA==⟧ | base64 -d",
                "base64-encoded credential",
            ),
            (
                "config: ⟦cGFzc3dvcmQ9aHVudGVyMlh5⟧",
                "base64-encoded credential",
            ),
            (
                "⟦aHR0cHM6Ly9kZXBsb3k6Wng4MWtRMHBMbUBnaXQuZXhhbXBsZS5jb20vcmVwby5naXQ=⟧",
                "base64-encoded credential",
            ),
        ],
        &[
            // "hello world, this is a test", "password reset page".
            "aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0",
            "cGFzc3dvcmQgcmVzZXQgcGFnZQ==",
            "/home/alice/src/password-manager-2024",
        ],
    );
}

#[test]
fn discord_groq_and_atlassian_tokens() {
    let atlassian = format!("ATATT3xFfGF0{}=0A1B2C3D", "Ab3-xY9_".repeat(20));
    check_rule(
        &[
            (
                "bot.run('⟦NjEzNzg4ODI5MjczNTMyODM3.KXSc7T.vo_hBKqFYY_kv5ZJr3J1TWDtkwt⟧')",
                "Discord bot token",
            ),
            (
                "⟦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⟧",
                "Groq key",
            ),
            (&format!("jira ⟦{atlassian}⟧ ci"), "Atlassian token"),
        ],
        &[
            "MTIz.abc.def",
            "com.example.app.MainActivity.onCreate",
            "Groq keys start with gsk_",
            "ATATT3 tokens are Atlassian API tokens",
            "GATATTACAATATTGCAGGCATATTACGATATTCGATATT3",
        ],
    );
}

#[test]
fn random_url_path_segments() {
    check_rule(
        &[
            (
                "https://share.example.net/s/⟦Hq3Zk9TbW2xRf7LmP4vNc8YdJ6sA1gE5⟧/view",
                "random URL path segment",
            ),
            (
                "see //dl.example.org/⟦R7kP2xM9qL4vB8nZ3cT6wY1hJ5fD0gS⟧;v=2/f.pdf?a=1",
                "random URL path segment",
            ),
        ],
        &[
            "https://example.com/blog/my-blog-post-title-with-many-words-2024",
            "https://github.com/acme/presence/commit/aff024fe4ab0fece4091de044c58c9ae4233383a",
            "https://docs.example.com/AbstractSingletonProxyFactoryBean2",
            "https://example.com/HTML5ParserTestsForUTF8Encoding2024",
            "https://example.com/objects/D8F9DB3A5AC6132CC4A81B6B82E27B0F",
            "https://example.com/u/550e8400-e29b-41d4-a716-446655440000/profile",
            "https://example.com/?q=Hq3Zk9TbW2xRf7LmP4vNc8YdJ6sA1gE5",
            "/srv/Hq3Zk9TbW2xRf7LmP4vNc8YdJ6sA1gE5",
        ],
    );
}

/// Prefixes that no word ends with are found glued to the word before;
/// those that words end with (`task-`, `monkey-`, `foxapp-`) need a boundary.
#[test]
fn tokens_glued_to_the_word_before() {
    check_rule(
        &[
            (
                "token⟦npm_sP795nf4Gakq5p1Vm8kV6um4yvMpy62O6SQ1⟧",
                "npm token",
            ),
            (
                "x⟦ghp_IEE1HSa2bB9UoK4tYnzNLeK6kjcbhgN7kwjS⟧",
                "GitHub token",
            ),
            ("my⟦glpat-1GqK8ks0n8SoFkh8OXfF⟧", "GitLab token"),
            (
                "slack⟦xoxb-815516616053-446882637289-WSWMPcwLuHj31CQJVukDCSXq⟧",
                "Slack token",
            ),
            (
                "hub⟦hf_D5jSFpFkIM3Vak1uDSKFQs1DxBA9RelOxO⟧",
                "Hugging Face token",
            ),
        ],
        &[
            "task-proj-build-the-frontend-thing-2024",
            "monkey-0123456789abcdef0123456789abcdef",
            "myfoxapp-2-staging-environment-eu",
            "npm_config_registry=https://registry.npmjs.org",
        ],
    );
}

#[test]
fn at_least_fifteen_shapes() {
    assert!(shape_count() >= 15, "{}", shape_count());
}

#[test]
fn reported_precision_cases() {
    for text in [
        "task-2024-11-30-build-frontend",
        "Fix bearer authentication flow",
        "token: refactor the tokenizer",
        "Primary key: id",
        REDACTED,
        "user=[redacted]",
    ] {
        assert_eq!(redact_text(text), (text.to_string(), vec![]), "{text}");
    }
}

#[test]
fn endpoint_table() {
    let cases = [
        ("ssh://alice@host/x", "ssh://alice@host/x", 0),
        ("ssh://alice:pw@host/x", "ssh://alice@host/x", 1),
        ("tmux://host/main", "tmux://host/main", 0),
        ("https://h/p?token=abc&view=1", "https://h/p?view=1", 1),
        ("https://h/p?access_token=abc", "https://h/p", 1),
        (
            "https://h/p?X-Amz-Signature=0f3a9c2b8d7e&X-Amz-Credential=AKIA/2024&a=b",
            "https://h/p?a=b",
            1,
        ),
        (
            "https://h/p?apiKey=1&sessionToken=2&sig=3f9c2a1b&code=4/0AX4XfWh&PASS=5",
            "https://h/p",
            1,
        ),
        // Generic names need a value that could be a credential.
        (
            "https://h/viewtopic.php?t=54333&code=kmr&sig=abc&t=release",
            "https://h/viewtopic.php?t=54333&code=kmr&sig=abc&t=release",
            0,
        ),
        ("https://h/p?t=4f9a8b7c6d5e", "https://h/p", 1),
        ("https://h/p?page=2#frag", "https://h/p?page=2#frag", 0),
        (
            "https://h/blob/main/x.rs#L42",
            "https://h/blob/main/x.rs#L42",
            0,
        ),
        ("https://h/#readme", "https://h/#readme", 0),
        (
            "https://h/cb#access_token=x&state=s",
            "https://h/cb#state=s",
            1,
        ),
        ("https://h/cb#access_token=x", "https://h/cb", 1),
        ("https://h/#/cb?id_token=x", "https://h/#/cb", 1),
        ("https://h/a;sig=x9y8z7/b", "https://h/a/b", 1),
        ("https://h/a;v=1;sid=Ab12Cd34/b", "https://h/a;v=1/b", 1),
        (
            "https://u:p@h:8443/a/b?ok=1&secret=2#x",
            "https://u@h:8443/a/b?ok=1#x",
            2,
        ),
        ("https://u:p#ss@h/x", "https://u@h/x", 1),
        ("https://u:p%40ss@h/x", "https://u@h/x", 1),
        ("https://u:pa/ss@h.example/x", "https://u@h.example/x", 1),
        ("https://u:[redacted]@h/", "https://u@h/", 1),
        ("https://host:8443/@alice", "https://host:8443/@alice", 0),
        ("https://u:@h/", "https://u:@h/", 0),
        ("https://h?next=u:p@x", "https://h?next=u:p@x", 0),
        ("//u:p@h/x", "//u@h/x", 1),
        ("https://h/?", "https://h/?", 0),
        ("https://h/p?token=&a=1", "https://h/p?token=&a=1", 0),
        ("host:/path", "host:/path", 0),
        ("", "", 0),
        (
            "https://u@h/ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "https://u@h/[redacted]",
            1,
        ),
    ];
    for (input, want, n) in cases {
        let (got, kinds) = redact_endpoint(input);
        assert_eq!(got, want, "{input}");
        assert_eq!(kinds.len(), n, "{input}: {kinds:?}");
    }
}

#[test]
fn secret_key_table() {
    for k in [
        "password",
        "api_key",
        "API-KEY",
        "apiKey",
        "APIKey",
        "githubToken",
        "authorization",
        "cookie",
        "aws_secret",
        "client_secret",
        "private_key",
        "Set-Cookie",
        "credentials",
        "auth",
        "pass",
        "DB_PASS",
        "db-pass",
        "passcode",
        "ssh_key",
        "SSH-KEY",
        "sessionid",
        "session_id",
        "sessionId",
        "JSESSIONID",
        "PHPSESSID",
        "MY_SECRET",
        "my.secret",
        "gitlab_token",
        "GITLAB-TOKEN",
        "PGPASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "secret_key_base",
        "password_hash",
        "db_pwd",
    ] {
        assert!(is_secret_key(k), "{k}");
    }
    for k in [
        "branch",
        "repo",
        "keyboard",
        "tokenizer_model",
        "pr",
        "session_name",
        "session",
        "monkey",
        "key",
        "keys",
        "primary_key",
        "public_key",
        "sort_key",
        "max_tokens",
        "input_tokens",
        "token_count",
        "token_type",
        "password_reset_url",
        "min_password_length",
        "secret_name",
        "secretName",
        "password-stdin",
        "PWD",
        "OLDPWD",
        "bypass",
        "compass",
        "oauth",
        "",
    ] {
        assert!(!is_secret_key(k), "{k}");
    }
}

#[test]
fn credential_param_table() {
    for p in [
        "token",
        "access_token",
        "ticket",
        "t",
        "sid",
        "sig",
        "signature",
        "X-Amz-Signature",
        "X-Amz-Credential",
        "code",
        "key",
        "auth",
        "id_token_hint",
        "jsessionid",
    ] {
        assert!(is_credential_param(p), "{p}");
    }
    for p in [
        "page",
        "view",
        "q",
        "ref",
        "tab",
        "type",
        "token_type",
        "max_tokens",
        "country_code",
        "keyword",
        "sort_key",
        "state",
        "lang",
        "v",
    ] {
        assert!(!is_credential_param(p), "{p}");
    }
}

#[test]
fn ids_are_found_not_rewritten() {
    let mut r = Record::new("ghp_0123456789abcdefghijABCDEFGHIJ012345");
    r.session_key = "k".into();
    let found = credential_in_id(&r).unwrap();
    assert_eq!(
        (found.field.as_str(), found.kind.as_str()),
        ("session_id", "GitHub token")
    );
    let mut r = Record::new("s1");
    r.instance_id = "password=hunter2".into();
    assert_eq!(credential_in_id(&r).unwrap().field, "instance_id");
    let mut r = Record::new("task-2024-11-30-build-frontend");
    r.instance_id = "laptop-3f9c2a1b".into();
    assert!(credential_in_id(&r).is_none());
}

#[test]
fn record_redaction_names_fields_never_values() {
    let mut r = Record::new("s");
    r.endpoint = "https://alice:pw@host/x?token=t0k3n#L7".into();
    r.title = "deploying with ghp_0123456789abcdefghijABCDEFGHIJ012345".into();
    r.metadata.insert("api_key".into(), "v4lue".into());
    r.metadata.insert("DB_PASS".into(), "v4lue".into());
    r.metadata.insert("branch".into(), "main".into());
    r.metadata
        .insert("env".into(), "DB_PASSWORD=hunter2".into());
    let found = redact_record(&mut r);
    assert_eq!(r.endpoint, "https://alice@host/x#L7");
    assert_eq!(r.title, "deploying with [redacted]");
    assert_eq!(r.metadata.keys().collect::<Vec<_>>(), ["branch", "env"]);
    assert_eq!(r.metadata["env"], "DB_PASSWORD=[redacted]");
    let fields: Vec<_> = found.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "endpoint",
            "endpoint",
            "title",
            "metadata.DB_PASS",
            "metadata.api_key",
            "metadata.env"
        ]
    );
    let shown = found
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    for value in ["pw", "t0k3n", "ghp_", "v4lue", "hunter2"] {
        assert!(!shown.contains(value), "{shown}");
    }
    // Idempotent, and silent the second time.
    let before = r.clone();
    assert!(redact_record(&mut r).is_empty());
    assert_eq!(r, before);
}

fn secret_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "gh[pousr]_[A-Za-z0-9]{36,40}",
        "github_pat_[A-Za-z0-9_]{22,40}",
        "(AKIA|ASIA)[A-Z0-9]{16}",
        "xox[abposr]-[A-Za-z0-9-]{10,30}",
        "xapp-[0-9]-[A-Za-z0-9-]{10,30}",
        "sk-(ant-|proj-)[A-Za-z0-9_-]{20,40}",
        "sk-[A-Za-z0-9]{32,48}",
        "AIza[0-9A-Za-z_-]{35}",
        "ya29\\.[0-9A-Za-z_-]{20,40}",
        "hvs\\.[A-Za-z0-9_-]{24,40}",
        "eyJ[A-Za-z0-9_-]{5,20}\\.[A-Za-z0-9_-]{5,20}\\.[A-Za-z0-9_-]{5,20}",
        "gl(pat|rt)-[0-9A-Za-z_-]{20,30}",
        "npm_[A-Za-z0-9]{36}",
        "hf_[A-Za-z0-9]{34,40}",
        "(sk|rk)_(live|test)_[0-9A-Za-z]{16,30}",
        "whsec_[A-Za-z0-9]{24,32}",
        "-----BEGIN (RSA |EC )?PRIVATE KEY-----\n[A-Za-z0-9+/=\n]{10,60}(-----END (RSA |EC )?PRIVATE KEY-----)?",
        "gsk_[A-Za-z0-9]{52}",
        "ATATT3[A-Za-z0-9_=-]{60,80}",
        "(MTIz|NDU2|Nzg5|OTk5){2}[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27,38}",
        "MIIEvQIBADAN[A-Za-z0-9+/]{20,60}",
        "[A-Za-z0-9+/]{20,60}\n-----END PRIVATE KEY-----",
        "PuTTY-User-Key-File-2: ssh-rsa\n[A-Za-z0-9+/:\n -]{0,60}",
    ]
}

/// A secret behind a name, with the part that must go.
fn named_strategy() -> impl Strategy<Value = (String, String)> {
    let value = "[A-Za-z][A-Za-z0-9!@%^*_+-]{4,8}[0-9][A-Za-z0-9!@%^*_+-]{0,8}";
    (
        prop_oneof![
            Just("{}_PASSWORD={}"),
            Just("export GITHUB_TOKEN=\"{}\""),
            Just("\"api_key\": \"{}\""),
            Just("password: {}"),
            Just("Authorization: Bearer {}"),
            Just("curl -u alice:{} https://h.example"),
            Just("https://alice:{}@h.example/x"),
            Just("https://h.example/p?access_token={}&view=1"),
            Just("https://h.example/cb#access_token={}"),
            Just("https://h.example/a;sig={}/b"),
            Just("alice:{}@h.example:repo.git"),
            Just("machine h.example login {} password {}"),
            Just("mysql -u root -p{} app"),
            Just("sshpass -p {} ssh h"),
        ],
        "[A-Z]{2,6}",
        value,
    )
        .prop_map(|(template, prefix, value)| {
            let t = template.replacen(
                "{}",
                &prefix,
                usize::from(template.matches("{}").count() == 2),
            );
            (t.replacen("{}", &value, 1), value)
        })
}

/// What an Aho–Corasick automaton of the trigger literals (ignoring ASCII
/// case, every occurrence, each followed by its tail) finds in `text`: the
/// reference the trigger table of `gates.rs` must agree with.
fn automaton_hits(text: &str) -> Hits {
    static AUTOMATON: std::sync::LazyLock<(aho_corasick::AhoCorasick, Vec<Group>)> =
        std::sync::LazyLock::new(|| {
            let (words, groups): (Vec<&str>, Vec<Group>) = literals().into_iter().unzip();
            let ac = aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(words)
                .unwrap();
            (ac, groups)
        });
    let (ac, groups) = &*AUTOMATON;
    let mut h = Hits::default();
    for m in ac.find_overlapping_iter(text) {
        let group = groups[m.pattern().as_usize()];
        if tail_holds(group, &text.as_bytes()[m.end()..]) {
            h.add(group);
        }
    }
    h
}

/// The guards as they were first written, one search of `text` each, with
/// the literals found by [`automaton_hits`]: the reference for the one pass
/// of [`gates`].
fn reference_gates(text: &str) -> Gates {
    let h = automaton_hits(text);
    let has = |c: char| text.contains(c);
    let b64 = has_b64_run(text);
    Gates {
        shapes: h.shapes,
        pem: h.pem,
        b64,
        putty: h.putty,
        discord: has_dotted_token(text),
        url: text.contains("//") && (has('@') || has('=')),
        path: b64 && text.contains("//"),
        scp: match (text.find(':'), text.rfind(':')) {
            (Some(first), Some(last)) => text[first..last].contains('@'),
            _ => false,
        },
        auth: h.auth,
        bearer: h.bearer,
        curl: has(':')
            && (text.contains("--user")
                || text.match_indices("-u").any(|(i, _)| {
                    text[..i]
                        .chars()
                        .next_back()
                        .is_none_or(|c| c.is_whitespace() || c == '"' || c == '\'')
                })),
        cli: h.cli && text.contains("-p"),
        flag: h.name && text.contains("--"),
        netrc: h.netrc && h.name,
        assignment: h.name && (has('=') || has(':')),
    }
}

#[test]
fn every_trigger_literal_has_two_bytes_at_least() {
    for (literal, _) in literals() {
        assert!(
            literal.len() >= 2,
            "{literal:?}: the trigger table keys on two bytes"
        );
    }
}

/// Text made of trigger literals (each letter in either case, some cut
/// short) among other characters, any Unicode included.
fn trigger_text() -> impl Strategy<Value = String> {
    let words: Vec<&'static str> = literals().into_iter().map(|(w, _)| w).collect();
    let piece = prop_oneof![
        (prop::sample::select(words), any::<u64>(), 0usize..3).prop_map(|(w, case, cut)| {
            let w: String = w
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if case >> (i % 64) & 1 == 1 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            let keep = w.len().saturating_sub(if cut == 0 { 1 } else { 0 });
            w[..keep].to_string()
        }),
        "\\PC{0,4}",
        "[A-Za-z_.:-]{0,3}",
        "(//|@|=|:|-p|--|--user|-u| -u|\"-u|\u{a0}-u|[A-Za-z0-9+/_-]{20,30}|[A-Z0-9]{20,30}|[a-z0-9]{20,30}|[A-Za-z0-9_-]{23}\\.[a-z]{6}\\.)",
    ];
    prop::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn redaction_is_leak_free_and_idempotent(
        before in "[a-z ]{0,20}",
        secret in secret_strategy(),
        after in "[a-z ]{0,20}",
    ) {
        let text = format!("{before} {secret} {after}");
        let (once, kinds) = redact_text(&text);
        prop_assert!(!kinds.is_empty());
        prop_assert!(!once.contains(&secret), "{:?} leaked in {:?}", secret, once);
        let (twice, again) = redact_text(&once);
        prop_assert_eq!(&twice, &once);
        prop_assert!(again.is_empty());
    }

    #[test]
    fn named_secrets_are_leak_free_and_idempotent(
        before in "[a-z ]{0,12}",
        (text, value) in named_strategy(),
        after in "( [a-z]{1,8}){0,3}",
    ) {
        let text = format!("{before} {text}{after}");
        let (once, kinds) = redact_text(&text);
        prop_assert!(!kinds.is_empty(), "{:?}", text);
        prop_assert!(!once.contains(&value), "{:?} leaked in {:?}", value, once);
        let (twice, again) = redact_text(&once);
        prop_assert_eq!(&twice, &once);
        prop_assert!(again.is_empty());
    }

    #[test]
    fn the_trigger_table_finds_what_an_automaton_finds(text in trigger_text()) {
        prop_assert_eq!(hits(&text), automaton_hits(&text), "{:?}", text);
        prop_assert_eq!(gates(&text), reference_gates(&text), "{:?}", text);
    }

    #[test]
    fn the_prefilter_never_hides_a_match(
        text in "\\PC{0,30}",
        piece in "(ghp_|AKIA|xoxb-|xapp-1-|sk-|sk-proj-|eyJ|Bearer |bearer\t|pypi-|hf_|SG\\.|:AA|dop_v1_|shpat_|hvs\\.|ya29\\.|whsec_|key-|password=|DB_PASS=|token: |\"api_key\": \"|Authorization: Basic |-u u:|--user=u:|--password |://u:p@|//u:p@|u:p@h:|\\?sig=|#access_token=|;sid=|PRIVATE KEY|-----BEGIN RSA PRIVATE KEY-----\n|aws_secret_access_key=|machine h login u password |mysql -p|sshpass -p |gsk_|ATATT3|PuTTY-User-Key-File-2: ssh-rsa\n|Private-Lines: 1\n|MIIEvQIBADAN|b3BlbnNzaC1rZXktdjE|Z2hwX|cGFzc3dvcmQ9|NjEzNzg4ODI5|https://h/s/|//h/)?[A-Za-z0-9_./+=@:\n-]{0,70}",
        tail in "\\PC{0,30}",
    ) {
        let s = format!("{text}{piece}{tail}");
        for mode in [Mode::Mask, Mode::Remove] {
            let gated = redact_with(&s, mode, gates(&s));
            let full = redact_with(&s, mode, Gates::ALL);
            prop_assert_eq!(gated, full, "{:?}", s);
        }
    }

    #[test]
    fn redaction_of_any_text_is_idempotent(text in "\\PC{0,80}") {
        let (once, kinds) = redact_text(&text);
        // `--strict` refuses exactly when something would change.
        prop_assert_eq!(kinds.is_empty(), once == text);
        let (twice, again) = redact_text(&once);
        prop_assert_eq!(twice, once);
        prop_assert!(again.is_empty());
    }

    #[test]
    fn redaction_of_key_value_text_is_idempotent(
        text in "([A-Za-z_ ]{0,12}(password|token|key|secret|auth|Bearer|sid)[A-Za-z_]{0,4}[ ]?(=|: |:|=>)[ ]?[\"']?[A-Za-z0-9 :/@?#&;=.\\[\\]\"'-]{0,16}){1,4}",
    ) {
        let (once, kinds) = redact_text(&text);
        prop_assert_eq!(kinds.is_empty(), once == text);
        let (twice, again) = redact_text(&once);
        prop_assert_eq!(twice, once, "{:?}", text);
        prop_assert!(again.is_empty());
    }

    #[test]
    fn redaction_of_url_and_header_text_is_idempotent(
        text in "((https://|//| |\"|'|:|@|\\?|#|&|;|=|Authorization: |Bearer |-u |--password |token|sig|key|pass|ghp_|AKIA|\\[redacted\\])[A-Za-z0-9./%-]{0,6}){1,12}",
    ) {
        for redact in [redact_text, redact_endpoint] {
            let (once, kinds) = redact(&text);
            prop_assert_eq!(kinds.is_empty(), once == text);
            let (twice, again) = redact(&once);
            prop_assert_eq!(twice, once, "{:?}", text);
            prop_assert!(again.is_empty());
        }
    }

    #[test]
    fn endpoint_redaction_is_idempotent_after_the_text_rules(
        value in "[?=&#]{0,2}",
    ) {
        // The text rules mask what the URL rules left; a second pass
        // must not then drop the masked parameter.
        let (once, _) = redact_endpoint(&format!("https://#token={value}"));
        let (twice, _) = redact_endpoint(&once);
        prop_assert_eq!(twice, once);
    }

    #[test]
    fn endpoint_redaction_is_idempotent(
        user in "[a-z]{1,8}", pw in "[a-z0-9#%:@?]{1,8}", host in "[a-z]{1,8}",
        key in "(token|key|sig|page|view|access_token)", val in "[a-z]{3}[0-9]{3,8}",
        frag in "(L[0-9]{1,3}|readme|access_token=[a-z]{1,8}|/cb\\?code=[a-z]{1,4}&state=s)",
    ) {
        let ep = format!("https://{user}:{pw}@{host}/p;sid=x?{key}={val}#{frag}");
        let (once, _) = redact_endpoint(&ep);
        prop_assert!(once.starts_with(&format!("https://{user}@{host}/p")), "{}", once);
        prop_assert!(!once.contains(&format!("={val}")) || key == "page" || key == "view", "{}", once);
        let (twice, again) = redact_endpoint(&once);
        prop_assert_eq!(twice, once);
        prop_assert!(again.is_empty());
    }
}
