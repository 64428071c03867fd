//! Reading Rust source just far enough for the layer rules: comments and
//! literals blanked, tokens, `#[cfg(test)]` items dropped, inline modules
//! tracked, and every `crate::`/`super::`/`self::` path (use trees too).

use super::Module;

/// `src` with comments and string and character literals blanked out;
/// newlines stay, so line numbers still hold.
pub(super) fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let after_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        let end = if c[i] == '/' && at(i + 1) == '/' {
            let mut j = i;
            while j < c.len() && c[j] != '\n' {
                j += 1;
            }
            j
        } else if c[i] == '/' && at(i + 1) == '*' {
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            j
        } else if let Some(j) = (!after_ident)
            .then(|| prefixed_literal_end(&c, i))
            .flatten()
        {
            j
        } else if c[i] == '"' {
            quoted_end(&c, i, '"')
        } else if c[i] == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            quoted_end(&c, i, '\'')
        } else {
            // Everything else, lifetimes (`'a`) included, is code.
            out.push(c[i]);
            i += 1;
            continue;
        };
        let end = end.min(c.len());
        out.extend(
            c[i..end]
                .iter()
                .map(|&ch| if ch == '\n' { '\n' } else { ' ' }),
        );
        i = end;
    }
    out
}

/// The end of the literal opened by the quote at `c[i]`, escapes honoured.
fn quoted_end(c: &[char], i: usize, quote: char) -> usize {
    let mut j = i + 1;
    while j < c.len() {
        if c[j] == '\\' {
            j += 2;
        } else if c[j] == quote {
            return j + 1;
        } else {
            j += 1;
        }
    }
    c.len()
}

/// The end of a `b"…"`, `c"…"`, `b'…'`, `r"…"`, `r#"…"#`, `br#"…"#` literal
/// starting at `c[i]`; `None` if none starts there (`r#type`, `return`).
fn prefixed_literal_end(c: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let mut j = i;
    if matches!(c[j], 'b' | 'c') {
        j += 1;
    }
    if at(j) == 'r' {
        let mut k = j + 1;
        while at(k) == '#' {
            k += 1;
        }
        let hashes = k - j - 1;
        if at(k) != '"' {
            return None;
        }
        let mut m = k + 1;
        while m < c.len() {
            if c[m] == '"' && (1..=hashes).all(|h| at(m + h) == '#') {
                return Some(m + 1 + hashes);
            }
            m += 1;
        }
        return Some(c.len());
    }
    if j == i {
        return None;
    }
    match at(j) {
        '"' => Some(quoted_end(c, j, '"')),
        '\'' if c[i] == 'b' => Some(quoted_end(c, j, '\'')),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Open(char),
    Close(char),
    Punct(char),
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
}

pub(super) fn tokens(code: &str) -> Vec<Token> {
    let c: Vec<char> = code.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    while i < c.len() {
        let ch = c[i];
        let tok = if ch == '\n' {
            line += 1;
            i += 1;
            continue;
        } else if ch.is_whitespace() {
            i += 1;
            continue;
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
            continue;
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            i += 1;
            Tok::Sep
        } else if "([{".contains(ch) {
            Tok::Open(ch)
        } else if ")]}".contains(ch) {
            Tok::Close(ch)
        } else {
            Tok::Punct(ch)
        };
        out.push(Token { tok, line });
        i += 1;
    }
    out
}

fn ident(t: &[Token], i: usize) -> Option<&str> {
    match t.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// The index just past the bracket group opened at `t[i]`.
fn group_end(t: &[Token], i: usize) -> usize {
    let mut depth = 0usize;
    for (k, tok) in t.iter().enumerate().skip(i) {
        match tok.tok {
            Tok::Open(_) => depth += 1,
            Tok::Close(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    t.len()
}

/// If `t[i]` opens `#[cfg(test)]` or `#[cfg(all(test, …))]`, the index past it.
fn cfg_test_attribute(t: &[Token], i: usize) -> Option<usize> {
    if t.get(i)?.tok != Tok::Punct('#') || t.get(i + 1)?.tok != Tok::Open('[') {
        return None;
    }
    let end = group_end(t, i + 1);
    let inner = &t[i + 2..end.saturating_sub(1)];
    let is = |k: usize, want: &Tok| inner.get(k).is_some_and(|t| &t.tok == want);
    let word = |k: usize, w: &str| ident(inner, k) == Some(w);
    if !word(0, "cfg") || !is(1, &Tok::Open('(')) {
        return None;
    }
    if word(2, "test") && is(3, &Tok::Close(')')) && inner.len() == 4 {
        return Some(end);
    }
    if word(2, "all") && is(3, &Tok::Open('(')) {
        let mut depth = 0usize;
        for (k, tok) in inner.iter().enumerate().skip(4) {
            match &tok.tok {
                Tok::Open(_) => depth += 1,
                Tok::Close(_) if depth == 0 => break,
                Tok::Close(_) => depth -= 1,
                Tok::Ident(w) if w == "test" && depth == 0 => {
                    let before_ok = k == 4 || is(k - 1, &Tok::Punct(','));
                    let after_ok = is(k + 1, &Tok::Punct(',')) || is(k + 1, &Tok::Close(')'));
                    if before_ok && after_ok {
                        return Some(end);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// The index past the item starting at `t[i]` (after its attributes): its
/// `;`, or the `}` closing its body. Stops before a bracket that closes an
/// enclosing group.
fn item_end(t: &[Token], mut i: usize) -> usize {
    while t.get(i).is_some_and(|x| x.tok == Tok::Punct('#'))
        && t.get(i + 1).is_some_and(|x| x.tok == Tok::Open('['))
    {
        i = group_end(t, i + 1);
    }
    let mut depth = 0usize;
    for (k, tok) in t.iter().enumerate().skip(i) {
        match tok.tok {
            Tok::Open(_) => depth += 1,
            Tok::Close(_) if depth == 0 => return k,
            Tok::Close(ch) => {
                depth -= 1;
                if depth == 0 && ch == '}' {
                    return k + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return k + 1,
            _ => {}
        }
    }
    t.len()
}

/// The tokens outside `#[cfg(test)]` items, each with the inline modules
/// (`mod inner { … }`) it sits in.
pub(super) fn live_tokens(t: &[Token]) -> Vec<(Token, Module)> {
    let mut out = Vec::new();
    let mut scopes: Vec<(usize, String)> = Vec::new();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < t.len() {
        if let Some(after) = cfg_test_attribute(t, i) {
            i = item_end(t, after);
            continue;
        }
        match &t[i].tok {
            Tok::Ident(w) if w == "mod" => {
                if let (Some(inner), Some(Tok::Open('{'))) =
                    (ident(t, i + 1), t.get(i + 2).map(|x| &x.tok))
                {
                    scopes.push((depth + 1, inner.to_string()));
                }
            }
            Tok::Open('{') => depth += 1,
            Tok::Close('}') => {
                if scopes.last().is_some_and(|s| s.0 == depth) {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        out.push((t[i].clone(), scopes.iter().map(|s| s.1.clone()).collect()));
        i += 1;
    }
    out
}

/// One path as written: `crate::a::B`, a leaf of a grouped `use`, or
/// `super::f` in an expression.
#[derive(Debug, Clone)]
pub(super) struct Written {
    pub(super) segs: Vec<String>,
    pub(super) alias: Option<String>,
    pub(super) line: usize,
    /// The inline modules it sits in, inside its file's module.
    pub(super) scope: Module,
}

/// Reads the path (or `use` tree) starting at `t[i]` under `prefix`, pushing
/// one [`Written`] per leaf; returns the index past it.
fn use_tree(
    t: &[(Token, Module)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Written>,
) -> usize {
    let scope = t.get(i).map(|x| x.1.clone()).unwrap_or_default();
    let mut line = t.get(i).map_or(0, |x| x.0.line);
    loop {
        let Some((tok, _)) = t.get(i) else {
            out.push(Written {
                segs: prefix,
                alias: None,
                line,
                scope,
            });
            return i;
        };
        match &tok.tok {
            Tok::Ident(s) => {
                prefix.push(s.clone());
                line = tok.line;
                i += 1;
                if t.get(i).is_some_and(|x| x.0.tok == Tok::Sep) {
                    i += 1;
                    continue;
                }
                let mut alias = None;
                if word(t, i) == Some("as") {
                    alias = word(t, i + 1).map(String::from);
                    i += 2;
                }
                out.push(Written {
                    segs: prefix,
                    alias,
                    line,
                    scope,
                });
                return i;
            }
            Tok::Open('{') => {
                i += 1;
                loop {
                    match t.get(i).map(|x| &x.0.tok) {
                        None => return i,
                        Some(Tok::Close('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        Some(_) => i = use_tree(t, i, prefix.clone(), out).max(i + 1),
                    }
                }
            }
            _ => {
                // `*`, a turbofish `::<`, or a path cut short.
                out.push(Written {
                    segs: prefix,
                    alias: None,
                    line,
                    scope,
                });
                return i;
            }
        }
    }
}

pub(super) fn word(t: &[(Token, Module)], i: usize) -> Option<&str> {
    match t.get(i).map(|x| &x.0.tok) {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// Every path starting with `crate::`, `super::` or `self::`.
pub(super) fn crate_paths(t: &[(Token, Module)]) -> Vec<Written> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let is = |k: usize, want: &Tok| t.get(k).is_some_and(|x| &x.0.tok == want);
        let starts = matches!(word(t, i), Some("crate" | "super" | "self"))
            && is(i + 1, &Tok::Sep)
            && !(i > 0 && is(i - 1, &Tok::Sep))
            // `pub(in crate::a)` is a visibility, not an import.
            && !(i >= 3 && word(t, i - 1) == Some("in") && is(i - 2, &Tok::Open('(')) && word(t, i - 3) == Some("pub"));
        if starts {
            i = use_tree(t, i, Vec::new(), &mut out).max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Every `use` path in the crate root, for its re-exports.
pub(super) fn use_paths(t: &[(Token, Module)]) -> Vec<Written> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if word(t, i) == Some("use") && t[i].1.is_empty() {
            i = use_tree(t, i + 1, Vec::new(), &mut out).max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}
