//! Lua 5.4's tokens, as far as a numeric snippet uses them (`llex.c`): a string, a label or
//! anything this subset has no use for makes the lexer give up (`None`), and the snippet is run
//! by Lua itself.

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Name(String),
    Int(i64),
    Float(f64),
    /// A keyword or an operator, as written.
    Sym(&'static str),
}

const KEYWORDS: &[&str] = &[
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

/// Operators, longest first.
const SYMBOLS: &[&str] = &[
    "...", "..", "==", "~=", "<=", ">=", "<<", ">>", "//", "::", "+", "-", "*", "/", "%", "^", "#",
    "&", "~", "|", "<", ">", "=", "(", ")", "{", "}", "[", "]", ";", ":", ",", ".",
];

/// The tokens of `src`, or `None` where it holds what a numeric snippet does not.
pub fn tokens(src: &str) -> Option<Vec<Tok>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"--") {
            i += 2;
            if let Some(level) = long_bracket(&b[i..]) {
                i += skip_long(&b[i..], level)?;
            } else {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let w = &src[s..i];
            out.push(match KEYWORDS.iter().find(|k| **k == w) {
                Some(k) => Tok::Sym(k),
                None => Tok::Name(w.to_string()),
            });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (t, n) = numeral(&src[i..])?;
            out.push(t);
            i += n;
            continue;
        }
        if !c.is_ascii() || c == b'"' || c == b'\'' || c == b'[' && long_bracket(&b[i..]).is_some()
        {
            return None;
        }
        let sym = SYMBOLS.iter().find(|s| b[i..].starts_with(s.as_bytes()))?;
        out.push(Tok::Sym(sym));
        i += sym.len();
    }
    Some(out)
}

/// The level of a long bracket `[==[` opening `b`.
fn long_bracket(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let level = b[1..].iter().take_while(|&&c| c == b'=').count();
    (b.get(1 + level) == Some(&b'[')).then_some(level)
}

/// Bytes up to and past the `]==]` closing a long bracket at the start of `b`.
fn skip_long(b: &[u8], level: usize) -> Option<usize> {
    let close: Vec<u8> = std::iter::once(b']')
        .chain(std::iter::repeat_n(b'=', level))
        .chain(std::iter::once(b']'))
        .collect();
    let body = level + 2;
    b[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map(|p| body + p + close.len())
}

/// A numeral at the start of `s` (`read_numeral`, `l_str2int`, `l_str2d`): its token and
/// length. A hexadecimal float is left to Lua.
fn numeral(s: &str) -> Option<(Tok, usize)> {
    let b = s.as_bytes();
    let hex = b.len() > 1 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X');
    let (e1, e2) = if hex { (b'p', b'P') } else { (b'e', b'E') };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if (c == e1 || c == e2) && matches!(b.get(i + 1), Some(b'+' | b'-')) {
            i += 2;
        } else if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' {
            i += 1;
        } else {
            break;
        }
    }
    let text = &s[..i];
    if hex {
        let digits = &text[2..];
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        // Hexadecimal integers wrap around.
        let v = digits.bytes().fold(0u64, |v, c| {
            v.wrapping_mul(16)
                .wrapping_add((c as char).to_digit(16).unwrap_or(0) as u64)
        });
        return Some((Tok::Int(v as i64), i));
    }
    if !text
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    if text.bytes().all(|c| c.is_ascii_digit()) {
        // A decimal integer too large for 64 bits is a float.
        if let Ok(v) = text.parse::<i64>() {
            return Some((Tok::Int(v), i));
        }
    }
    let f: f64 = text.parse().ok()?;
    Some((Tok::Float(f), i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerals_as_lua_reads_them() {
        let t = tokens("3 3.0 0x10 0xffffffffffffffff 9223372036854775808 .5 1e2 2E-1").unwrap();
        assert_eq!(
            t,
            vec![
                Tok::Int(3),
                Tok::Float(3.0),
                Tok::Int(16),
                Tok::Int(-1),
                Tok::Float(9.223_372_036_854_776e18),
                Tok::Float(0.5),
                Tok::Float(100.0),
                Tok::Float(0.2),
            ]
        );
        assert!(tokens("3x").is_none());
        assert!(tokens("0x1p4").is_none());
        assert!(tokens("x = 'text'").is_none());
        assert!(tokens("x = [[text]]").is_none());
    }

    #[test]
    fn comments_are_skipped() {
        let t = tokens("a --[==[ long\n ]] still ]==] b -- line\nc --[[x]]").unwrap();
        assert_eq!(
            t,
            vec![
                Tok::Name("a".into()),
                Tok::Name("b".into()),
                Tok::Name("c".into())
            ]
        );
        assert!(tokens("a --[[ never closed").is_none());
    }
}
