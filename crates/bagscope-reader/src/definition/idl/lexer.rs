//! The IDL lexer: tokens with their lines; comments, preprocessor and section lines passed over.

use crate::error::DefError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Int(u64),
    Float(String),
    Str(String),
    Char(u8),
    Punct(&'static str),
}

pub(super) struct Lexer<'a> {
    pub(super) s: &'a [u8],
    pub(super) pos: usize,
    pub(super) line: usize,
}

pub(super) const PUNCTS: [&str; 20] = [
    "::", "<<", ">>", "{", "}", ";", "<", ">", "[", "]", "(", ")", ",", ":", "=", "-", "+", "*",
    "/", "|",
];

impl<'a> Lexer<'a> {
    pub(super) fn tokens(text: &'a str) -> Result<Vec<(Tok, usize)>, DefError> {
        let mut l = Lexer {
            s: text.as_bytes(),
            pos: 0,
            line: 1,
        };
        let mut out = Vec::new();
        let mut line_start = true;
        while l.pos < l.s.len() {
            let c = l.s[l.pos];
            if c == b'\n' {
                l.line += 1;
                l.pos += 1;
                line_start = true;
                continue;
            }
            if c.is_ascii_whitespace() {
                l.pos += 1;
                continue;
            }
            // Preprocessor lines (`#include`, `#pragma`, guards) and rosbag2's section lines.
            if line_start && (c == b'#' || l.rest().starts_with(b"IDL:")) {
                l.skip_line();
                continue;
            }
            if line_start && c == b'=' && l.rest().starts_with(b"===") {
                l.skip_line();
                continue;
            }
            line_start = false;
            if l.rest().starts_with(b"//") {
                l.skip_line();
                continue;
            }
            if l.rest().starts_with(b"/*") {
                let start = l.line;
                l.pos += 2;
                loop {
                    if l.pos + 1 >= l.s.len() {
                        return Err(DefError::invalid("unclosed /* comment").on_line(start));
                    }
                    if l.s[l.pos] == b'\n' {
                        l.line += 1;
                    }
                    if l.s[l.pos] == b'*' && l.s[l.pos + 1] == b'/' {
                        l.pos += 2;
                        break;
                    }
                    l.pos += 1;
                }
                continue;
            }
            let line = l.line;
            let tok = if c.is_ascii_alphabetic() || c == b'_' {
                let start = l.pos;
                while l.pos < l.s.len()
                    && (l.s[l.pos].is_ascii_alphanumeric() || l.s[l.pos] == b'_')
                {
                    l.pos += 1;
                }
                Tok::Ident(String::from_utf8_lossy(&l.s[start..l.pos]).into_owned())
            } else if c.is_ascii_digit()
                || (c == b'.' && l.peek(1).is_some_and(|d| d.is_ascii_digit()))
            {
                l.number().map_err(|e| e.on_line(line))?
            } else if c == b'"' {
                Tok::Str(l.string().map_err(|e| e.on_line(line))?)
            } else if c == b'\'' {
                let s = l.quoted(b'\'').map_err(|e| e.on_line(line))?;
                match s.as_bytes() {
                    [b] => Tok::Char(*b),
                    _ => {
                        return Err(DefError::invalid(format!(
                            "character literal '{s}' is not one character"
                        ))
                        .on_line(line))
                    }
                }
            } else if c == b'@' {
                l.pos += 1;
                Tok::Punct("@")
            } else {
                match PUNCTS.iter().find(|p| l.rest().starts_with(p.as_bytes())) {
                    Some(p) => {
                        l.pos += p.len();
                        Tok::Punct(p)
                    }
                    None => {
                        return Err(DefError::invalid(format!(
                            "unexpected character {:?}",
                            char::from(c)
                        ))
                        .on_line(line))
                    }
                }
            };
            out.push((tok, line));
        }
        Ok(out)
    }

    pub(super) fn rest(&self) -> &[u8] {
        &self.s[self.pos..]
    }

    pub(super) fn peek(&self, k: usize) -> Option<u8> {
        self.s.get(self.pos + k).copied()
    }

    pub(super) fn skip_line(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
            self.pos += 1;
        }
    }

    pub(super) fn number(&mut self) -> Result<Tok, DefError> {
        let start = self.pos;
        if self.rest().starts_with(b"0x") || self.rest().starts_with(b"0X") {
            self.pos += 2;
            let h = self.pos;
            while self.pos < self.s.len() && self.s[self.pos].is_ascii_hexdigit() {
                self.pos += 1;
            }
            let t = String::from_utf8_lossy(&self.s[h..self.pos]).into_owned();
            return u64::from_str_radix(&t, 16)
                .map(Tok::Int)
                .map_err(|_| DefError::invalid(format!("bad hexadecimal number 0x{t}")));
        }
        let mut float = false;
        while self.pos < self.s.len() {
            let b = self.s[self.pos];
            if b.is_ascii_digit() {
                self.pos += 1;
            } else if b == b'.' || b == b'e' || b == b'E' {
                float = true;
                self.pos += 1;
                if (b == b'e' || b == b'E') && matches!(self.peek(0), Some(b'-' | b'+')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let t = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        // Suffixes (`1.0d`, `10L`) are passed over.
        while self.pos < self.s.len()
            && matches!(
                self.s[self.pos],
                b'd' | b'D' | b'f' | b'F' | b'l' | b'L' | b'u' | b'U'
            )
        {
            self.pos += 1;
        }
        if float {
            t.parse::<f64>()
                .map_err(|_| DefError::invalid(format!("bad number {t}")))?;
            return Ok(Tok::Float(t));
        }
        if t.len() > 1 && t.starts_with('0') && t.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return u64::from_str_radix(&t[1..], 8)
                .map(Tok::Int)
                .map_err(|_| DefError::invalid(format!("bad octal number {t}")));
        }
        t.parse::<u64>()
            .map(Tok::Int)
            .map_err(|_| DefError::invalid(format!("bad number {t}")))
    }

    pub(super) fn quoted(&mut self, q: u8) -> Result<String, DefError> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(b) = self.peek(0) else {
                return Err(DefError::invalid("unclosed literal"));
            };
            self.pos += 1;
            match b {
                b'\n' => return Err(DefError::invalid("literal runs past the end of its line")),
                b'\\' => {
                    let Some(e) = self.peek(0) else {
                        return Err(DefError::invalid("unclosed literal"));
                    };
                    self.pos += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        other => other,
                    });
                }
                b if b == q => break,
                b => out.push(b),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    pub(super) fn string(&mut self) -> Result<String, DefError> {
        let mut s = self.quoted(b'"')?;
        // Adjacent literals join ("a" "b").
        loop {
            let save = self.pos;
            while self.peek(0).is_some_and(|b| b == b' ' || b == b'\t') {
                self.pos += 1;
            }
            if self.peek(0) == Some(b'"') {
                s.push_str(&self.quoted(b'"')?);
            } else {
                self.pos = save;
                return Ok(s);
            }
        }
    }
}
