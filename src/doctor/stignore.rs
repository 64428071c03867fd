//! Syncthing's ignore patterns, as far as `doctor` needs them: whether a
//! file path inside a folder is ignored, following `#include` lines.
//!
//! The rules are Syncthing's (`lib/ignore`): lines are trimmed; empty lines
//! and `//` comments are skipped, as is a line identical to one seen before
//! in any of the files; `#include FILE` reads FILE relative to the
//! directory of the file that names it, and a missing file or one included
//! twice is an error that makes Syncthing stop syncing the folder; the
//! prefixes `!` (not ignored), `(?i)` (any case), `(?d)` and `(?r)` come in
//! any order; the first pattern that matches a path decides. The files are
//! in a shared folder and may have been planted: each one is read with the
//! one bounded read (`store::bounded`), so a symlink is never followed, a
//! FIFO or device never read, a file over 1 MiB refused; includes stop at 16
//! levels and 64 files.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use crate::store::bounded::{self, ReadError};

const MAX_FILE: usize = 1 << 20;
const MAX_DEPTH: usize = 16;
const MAX_FILES: usize = 64;
/// Alternatives (`{a,b}`) one pattern may expand to.
const MAX_ALTERNATIVES: usize = 64;

/// One pattern line.
#[derive(Debug)]
struct Pattern {
    /// `!`: a match is not ignored.
    negated: bool,
    /// `(?i)`: compared in lower case.
    fold: bool,
    /// The globs the line stands for (Syncthing adds `**/` and `/**`
    /// forms), each tokenised.
    globs: Vec<Vec<Token>>,
}

/// Why the patterns could not be read.
#[derive(Debug)]
pub(super) enum LoadError {
    /// A file that is there could not be read as a file (a FIFO, a
    /// device, no permission): what it would ignore is unknown.
    Unreadable(String),
    /// What Syncthing refuses, and then stops syncing the folder: an
    /// include that is missing, names no file or is read twice.
    Refused(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Unreadable(m) | LoadError::Refused(m) => f.write_str(m),
        }
    }
}

/// The ignore patterns of a Syncthing folder.
#[derive(Debug, Default)]
pub(super) struct Patterns {
    patterns: Vec<Pattern>,
    /// Files read, `.stignore` first.
    pub files: Vec<PathBuf>,
}

impl Patterns {
    /// Reads `root/.stignore` and what it includes. No `.stignore` is no
    /// patterns; an error says what Syncthing would refuse.
    pub fn load(root: &Path) -> Result<Patterns, LoadError> {
        let mut p = Patterns::default();
        let mut seen_lines = HashSet::new();
        let top = root.join(".stignore");
        match read_regular(&top) {
            Ok(None) => Ok(p),
            Ok(Some(text)) => {
                p.files.push(top.clone());
                p.parse(&top, &text, 0, &mut seen_lines)?;
                Ok(p)
            }
            Err(e) => Err(LoadError::Unreadable(format!(
                "cannot read {}: {e}",
                top.display()
            ))),
        }
    }

    fn parse(
        &mut self,
        file: &Path,
        text: &str,
        depth: usize,
        seen_lines: &mut HashSet<String>,
    ) -> Result<(), LoadError> {
        for line in text.lines().map(str::trim) {
            if !seen_lines.insert(line.to_string()) || line.is_empty() || line.starts_with("//") {
                continue;
            }
            if let Some(rest) = line.strip_prefix("#include") {
                let name = rest
                    .split_once(' ')
                    .map(|(_, n)| n.trim())
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| {
                        LoadError::Refused(format!(
                            "{}: an #include line names no file",
                            file.display()
                        ))
                    })?;
                self.include(file, name, depth, seen_lines)?;
            } else {
                for l in expand_dirs(line) {
                    self.patterns.push(parse_line(&l));
                }
            }
        }
        Ok(())
    }

    fn include(
        &mut self,
        from: &Path,
        name: &str,
        depth: usize,
        seen_lines: &mut HashSet<String>,
    ) -> Result<(), LoadError> {
        // As Go's filepath.Join: an absolute name is still relative.
        let dir = from.parent().unwrap_or(Path::new(""));
        let path = normalize(&dir.join(name.trim_start_matches('/')));
        let shown = path.display();
        if depth + 1 > MAX_DEPTH || self.files.len() >= MAX_FILES {
            return Err(LoadError::Refused(format!(
                "{}: #include nests deeper than {MAX_DEPTH} levels or reads more than \
                 {MAX_FILES} files",
                from.display()
            )));
        }
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let again = self
            .files
            .iter()
            .any(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone()) == key);
        if again {
            return Err(LoadError::Refused(format!(
                "{shown} is included more than once (an #include loop?)"
            )));
        }
        let text = match read_regular(&path) {
            Ok(Some(text)) => text,
            Ok(None) => {
                return Err(LoadError::Refused(format!(
                    "{shown}, included from {}, does not exist",
                    from.display()
                )));
            }
            Err(e) => {
                return Err(LoadError::Unreadable(format!("cannot read {shown}: {e}")));
            }
        };
        self.files.push(path.clone());
        self.parse(&path, &text, depth + 1, seen_lines)
    }

    /// Whether `path` (relative to the folder root, `/`-separated) is
    /// ignored: the first pattern that matches decides.
    pub fn ignores(&self, path: &str) -> bool {
        let lower = path.to_lowercase();
        for p in &self.patterns {
            let subject = if p.fold { &lower } else { path };
            if p.globs.iter().any(|g| matches(g, subject)) {
                return !p.negated;
            }
        }
        false
    }
}

/// The lines Syncthing makes of one: `dir/` means `dir/**`; a plain line
/// also ignores everything below what it matches.
fn expand_dirs(line: &str) -> Vec<String> {
    if line.ends_with("/**") {
        vec![line.to_string()]
    } else if line.ends_with('/') {
        vec![format!("{line}**")]
    } else {
        vec![line.to_string(), format!("{line}/**")]
    }
}

fn parse_line(line: &str) -> Pattern {
    let (mut negated, mut fold) = (false, false);
    let mut seen = [false; 4];
    let mut rest = line;
    loop {
        if !seen[0]
            && let Some(r) = rest.strip_prefix('!')
        {
            (seen[0], negated, rest) = (true, true, r);
        } else if !seen[1]
            && let Some(r) = rest.strip_prefix("(?i)")
        {
            (seen[1], fold, rest) = (true, true, r);
        } else if !seen[2]
            && let Some(r) = rest.strip_prefix("(?d)")
        {
            (seen[2], rest) = (true, r);
        } else if !seen[3]
            && let Some(r) = rest.strip_prefix("(?r)")
        {
            (seen[3], rest) = (true, r);
        } else {
            break;
        }
    }
    let body = if fold {
        rest.to_lowercase()
    } else {
        rest.to_string()
    };
    let forms: Vec<String> = if let Some(rooted) = body.strip_prefix('/') {
        vec![rooted.to_string()]
    } else if let Some(anywhere) = body.strip_prefix("**/") {
        vec![body.clone(), anywhere.to_string()]
    } else {
        vec![body.clone(), format!("**/{body}")]
    };
    let globs = forms
        .iter()
        .flat_map(|f| alternatives(f))
        .map(|f| tokenize(&f))
        .collect();
    Pattern {
        negated,
        fold,
        globs,
    }
}

/// `a{b,c}d` as `abd` and `acd`, nested braces included, up to
/// [`MAX_ALTERNATIVES`]; a brace without its match is literal.
fn alternatives(glob: &str) -> Vec<String> {
    let chars: Vec<char> = glob.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '{' => {
                let (mut depth, mut j, mut parts, mut start) = (0usize, i, Vec::new(), i + 1);
                while j < chars.len() {
                    match chars[j] {
                        '\\' => j += 1,
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                parts.push(chars[start..j].iter().collect::<String>());
                                break;
                            }
                        }
                        ',' if depth == 1 => {
                            parts.push(chars[start..j].iter().collect::<String>());
                            start = j + 1;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j >= chars.len() {
                    return vec![glob.to_string()];
                }
                let head: String = chars[..i].iter().collect();
                let tail: String = chars[j + 1..].iter().collect();
                let mut out = Vec::new();
                for part in parts {
                    // Checked before expanding the next part: expanding
                    // first would cost two to the power of the braces.
                    let room = MAX_ALTERNATIVES - out.len();
                    if room == 0 {
                        break;
                    }
                    let expanded = alternatives(&format!("{head}{part}{tail}"));
                    out.extend(expanded.into_iter().take(room));
                }
                return out;
            }
            _ => i += 1,
        }
    }
    vec![glob.to_string()]
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Char(char),
    /// `?`: one character but `/`.
    One,
    /// `*`: any run without `/`.
    Star,
    /// `**`: any run.
    Deep,
    /// `[...]` / `[!...]`: ranges, and whether the set is negated.
    Class(Vec<(char, char)>, bool),
}

fn tokenize(glob: &str) -> Vec<Token> {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                out.push(Token::Char(chars[i + 1]));
                i += 1;
            }
            '?' => out.push(Token::One),
            '*' if chars.get(i + 1) == Some(&'*') => {
                out.push(Token::Deep);
                i += 1;
            }
            '*' => out.push(Token::Star),
            '[' => match class(&chars[i + 1..]) {
                Some((token, used)) => {
                    out.push(token);
                    i += used;
                }
                None => out.push(Token::Char('[')),
            },
            c => out.push(Token::Char(c)),
        }
        i += 1;
    }
    out
}

/// A character class after its `[`: the token and how many characters it
/// used, `]` included; `None` when it never closes.
fn class(chars: &[char]) -> Option<(Token, usize)> {
    let negated = chars.first() == Some(&'!');
    let mut i = usize::from(negated);
    let mut ranges = Vec::new();
    while i < chars.len() {
        match chars[i] {
            ']' if !ranges.is_empty() || i > usize::from(negated) => {
                return Some((Token::Class(ranges, negated), i + 1));
            }
            c if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') => {
                ranges.push((c, chars[i + 2]));
                i += 3;
            }
            c => {
                ranges.push((c, c));
                i += 1;
            }
        }
    }
    None
}

/// Whether `glob` matches all of `path`: dynamic programming over (token,
/// character), so no pattern costs more than their product.
fn matches(glob: &[Token], path: &str) -> bool {
    let s: Vec<char> = path.chars().collect();
    // ok[j]: the tokens so far match s[..j].
    let mut ok = vec![false; s.len() + 1];
    ok[0] = true;
    for t in glob {
        let mut next = vec![false; s.len() + 1];
        match t {
            Token::Star | Token::Deep => {
                for j in 0..=s.len() {
                    next[j] =
                        ok[j] || (j > 0 && next[j - 1] && (*t == Token::Deep || s[j - 1] != '/'));
                }
            }
            _ => {
                for j in 1..=s.len() {
                    let c = s[j - 1];
                    let fits = match t {
                        Token::Char(x) => *x == c,
                        Token::One => c != '/',
                        Token::Class(ranges, negated) => {
                            c != '/' && ranges.iter().any(|&(a, b)| a <= c && c <= b) != *negated
                        }
                        Token::Star | Token::Deep => unreachable!(),
                    };
                    next[j] = ok[j - 1] && fits;
                }
            }
        }
        ok = next;
    }
    ok[s.len()]
}

/// `.` and `..` resolved by name, as Go's filepath.Join does.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The text of `path` (invalid UTF-8 replaced) if it is a regular file of
/// at most [`MAX_FILE`] bytes, read with the one bounded read (no symlink
/// followed, never blocking); `None` if it does not exist.
pub(super) fn read_regular(path: &Path) -> Result<Option<String>, ReadError> {
    Ok(bounded::read_path(path, MAX_FILE)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignores(lines: &str, path: &str) -> bool {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(".stignore"), lines).unwrap();
        Patterns::load(tmp.path()).unwrap().ignores(path)
    }

    #[test]
    fn patterns_match_as_syncthing_reads_them() {
        let tmp = "p/.h.s.json.1234.aB3dE9.tmp";
        for (lines, path, want) in [
            ("(?d).*.tmp", tmp, true),
            ("*.tmp", tmp, true),
            ("**.tmp", tmp, true),
            ("/.*.tmp", tmp, false),
            ("/p/.*.tmp", tmp, true),
            ("p", tmp, true),
            ("p/", tmp, true),
            ("!*.tmp\n*.tmp", tmp, false),
            ("*.tmp\n!*.tmp", tmp, true),
            ("(?i)*.TMP", tmp, true),
            ("*.TMP", tmp, false),
            ("*.{tmp,bak}", tmp, true),
            (".*.[t]mp", tmp, true),
            (".*.[!t]mp", tmp, false),
            (".h.s.json.????.*.tmp", tmp, true),
            ("*.json", "p/h.s.json", true),
            ("*", "p/h.s.json", true),
            ("// *.tmp", tmp, false),
            ("*.tm", tmp, false),
        ] {
            assert_eq!(ignores(lines, path), want, "{lines:?} on {path}");
        }
    }

    #[test]
    fn includes_are_followed_relative_to_the_including_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir(root.join("conf")).unwrap();
        std::fs::write(root.join(".stignore"), "#include conf/a.txt\n").unwrap();
        std::fs::write(root.join("conf/a.txt"), "#include b.txt\n").unwrap();
        std::fs::write(root.join("conf/b.txt"), "(?d).*.tmp\n").unwrap();
        let p = Patterns::load(root).unwrap();
        assert!(p.ignores("x/.r.json.1.abcdef.tmp"));
        assert_eq!(p.files.len(), 3);
        // A loop, a missing file and a line naming nothing are errors.
        std::fs::write(root.join("conf/b.txt"), "#include ../.stignore\n").unwrap();
        let e = Patterns::load(root).unwrap_err().to_string();
        assert!(e.contains("more than once"), "{e}");
        std::fs::write(root.join("conf/b.txt"), "#include gone.txt\n").unwrap();
        let e = Patterns::load(root).unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        std::fs::write(root.join("conf/b.txt"), "#include   \n").unwrap();
        assert!(
            Patterns::load(root)
                .unwrap_err()
                .to_string()
                .contains("names no file")
        );
        // A file including itself (a line identical to one read before is
        // skipped, as Syncthing skips it).
        std::fs::write(root.join("conf/b.txt"), "#include ./b.txt\n").unwrap();
        assert!(
            Patterns::load(root)
                .unwrap_err()
                .to_string()
                .contains("more than once")
        );
    }

    #[test]
    fn includes_stop_at_a_depth_and_a_count() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::write(root.join(".stignore"), "#include 0\n").unwrap();
        for i in 0..40 {
            std::fs::write(root.join(i.to_string()), format!("#include {}\n", i + 1)).unwrap();
        }
        let e = Patterns::load(root).unwrap_err().to_string();
        assert!(e.contains("deeper than"), "{e}");
        let many: String = (0..100).map(|i| format!("#include {i}\n")).collect();
        for i in 0..100 {
            std::fs::write(root.join(i.to_string()), "x\n").unwrap();
        }
        std::fs::write(root.join(".stignore"), many).unwrap();
        assert!(
            Patterns::load(root)
                .unwrap_err()
                .to_string()
                .contains("64 files")
        );
    }

    #[test]
    fn planted_patterns_stay_cheap() {
        // Backtracking would take 2^150 steps here, and expanding every
        // alternative 2^40: either would never finish.
        let glob = tokenize(&"*a".repeat(200));
        assert!(!matches(&glob, &format!("{}b", "a".repeat(150))));
        let all = alternatives(&"{a,b}".repeat(40));
        assert_eq!(all.len(), MAX_ALTERNATIVES);
        assert!(all.iter().all(|a| a.len() == 40), "{all:?}");
    }
}
