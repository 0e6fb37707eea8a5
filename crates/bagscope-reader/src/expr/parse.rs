//! The parser: text to [`Node`] (a formula) or [`MsgPath`] (a path alone), each error with the
//! byte offset it points at.

use super::ast::*;
use super::ExprError;

/// Parses a formula: arithmetic over paths, numbers, `$names` and functions.
pub fn formula(text: &str) -> Result<Node, ExprError> {
    let mut p = Parser::new(text, true);
    let n = p.sum()?;
    p.ws();
    if let Some(c) = p.peek() {
        let hint = if c == '.' || c == '[' || c == '{' {
            " (a path in a formula starts with its topic: /topic.field)"
        } else {
            ""
        };
        return Err(p.err(p.pos, format!("unexpected `{c}`{hint}")));
    }
    Ok(n)
}

/// Parses one path, with or without its topic (`/imu.orientation.x`, `orientation.x`).
pub fn path(text: &str) -> Result<MsgPath, ExprError> {
    let mut p = Parser::new(text, false);
    p.ws();
    let at = p.pos;
    let topic = match p.peek() {
        Some('/' | '"') => p.topic()?,
        None => return Err(p.err(at, "empty path".into())),
        _ => String::new(),
    };
    let path = p.path_rest(topic, at, true)?;
    p.ws();
    if let Some(c) = p.peek() {
        return Err(p.err(p.pos, format!("unexpected `{c}` in a path")));
    }
    Ok(path)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    /// Within a formula: `-` ends a name (it is an operator there).
    formula: bool,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str, formula: bool) -> Self {
        Parser { s, pos: 0, formula }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, t: &str) -> bool {
        if self.rest().starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn err(&self, at: usize, reason: String) -> ExprError {
        ExprError {
            text: self.s.to_string(),
            at,
            reason,
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), ExprError> {
        if self.eat(c) {
            return Ok(());
        }
        let found = match self.peek() {
            Some(f) => format!("`{f}`"),
            None => "the end".into(),
        };
        Err(self.err(self.pos, format!("expected `{c}` {what}, found {found}")))
    }

    fn is_id(&self, c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_' || (!self.formula && c == '-')
    }

    /// `[A-Za-z0-9_]+` (and `-` outside formulas, as Lichtblick's names take it).
    fn id(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|c| self.is_id(c)) {
            self.bump();
        }
        &self.s[start..self.pos]
    }

    /// `"..."` with `\\` and `\"` escapes.
    fn quoted(&mut self) -> Result<String, ExprError> {
        let at = self.pos;
        self.expect('"', "to open a quoted name")?;
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(self.err(at, "unclosed `\"`".into())),
                Some('"') => return Ok(out),
                Some('\\') => match self.bump() {
                    Some(c @ ('\\' | '"')) => out.push(c),
                    _ => {
                        return Err(self.err(self.pos - 1, "only \\\\ and \\\" escape".into()));
                    }
                },
                Some(c) => out.push(c),
            }
        }
    }

    /// A topic: `/a/b_c`, or `"quoted.topic"`.
    fn topic(&mut self) -> Result<String, ExprError> {
        if self.peek() == Some('"') {
            return self.quoted();
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c == '/' || self.is_id(c)) {
            self.bump();
        }
        Ok(self.s[start..self.pos].to_string())
    }

    /// What follows a path's topic: fields, slices, filters, then modifiers.
    fn path_rest(&mut self, topic: String, at: usize, bare: bool) -> Result<MsgPath, ExprError> {
        let mut segs = Vec::new();
        // A path without its topic starts with a field name, no `.` before it.
        let mut first = bare && topic.is_empty() && self.peek() != Some('{');
        loop {
            if self.rest().starts_with(".@") {
                break;
            }
            if first || self.peek() == Some('.') {
                let dot = self.pos;
                if !first {
                    self.bump();
                }
                first = false;
                let name_at = self.pos;
                let name = if self.peek() == Some('"') {
                    self.quoted()?
                } else {
                    self.id().to_string()
                };
                if name.is_empty() {
                    return Err(self.err(
                        if dot == name_at { dot } else { name_at },
                        "expected a field name".into(),
                    ));
                }
                segs.push(Seg::Field { name, at: name_at });
                if self.peek() == Some('[') {
                    segs.push(self.slice()?);
                }
            } else if self.peek() == Some('{') {
                self.filters(&mut segs)?;
            } else if self.peek() == Some('[') {
                if !matches!(segs.last(), Some(Seg::Field { .. })) {
                    return Err(self.err(
                        self.pos,
                        "a slice or index follows a field name (`.ranges[0]`)".into(),
                    ));
                }
                segs.push(self.slice()?);
            } else {
                break;
            }
        }
        let mods = self.modifiers()?;
        Ok(MsgPath {
            topic,
            segs,
            mods,
            at,
            end: self.pos,
        })
    }

    /// `[a]`, `[a:b]`, `[:]`, `[$v:]`.
    fn slice(&mut self) -> Result<Seg, ExprError> {
        let at = self.pos;
        self.expect('[', "")?;
        self.ws();
        let start = self.bound()?;
        self.ws();
        let (end, single) = if self.eat(':') {
            self.ws();
            (self.bound()?, false)
        } else {
            (start.clone(), true)
        };
        self.ws();
        self.expect(']', "to close the slice")?;
        if single && start == Bound::Open {
            return Err(self.err(
                at,
                "empty `[]`: write an index (`[0]`, `[-1]`) or `[:]` for every element".into(),
            ));
        }
        Ok(Seg::Slice {
            start,
            end,
            single,
            at,
        })
    }

    fn bound(&mut self) -> Result<Bound, ExprError> {
        if self.eat('$') {
            let at = self.pos;
            let name = self.id();
            if name.is_empty() {
                return Err(self.err(at, "expected a variable's name after `$`".into()));
            }
            return Ok(Bound::Var(name.to_string()));
        }
        if self.peek().is_some_and(|c| c == '-' || c.is_ascii_digit()) {
            let at = self.pos;
            let neg = self.eat('-');
            let start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
            let digits = &self.s[start..self.pos];
            let v: i64 = digits
                .parse()
                .map_err(|_| self.err(at, format!("bad index `{}`", &self.s[at..self.pos])))?;
            return Ok(Bound::Int(if neg { -v } else { v }));
        }
        match self.peek() {
            Some(':' | ']') => Ok(Bound::Open),
            Some(c) => Err(self.err(
                self.pos,
                format!("expected an index (a whole number or $variable), found `{c}`"),
            )),
            None => Err(self.err(self.pos, "unclosed `[`".into())),
        }
    }

    /// `{a.b==1}`, `{a==1 && b<2}`, `{x>0}{y>0}`: each condition a filter of its own (joined by and).
    fn filters(&mut self, segs: &mut Vec<Seg>) -> Result<(), ExprError> {
        while self.peek() == Some('{') {
            let open = self.pos;
            self.bump();
            loop {
                self.ws();
                let at = self.pos;
                let path = self.filter_path()?;
                self.ws();
                let op_at = self.pos;
                let op = if self.eat_str("==") {
                    CmpOp::Eq
                } else if self.eat_str("!=") {
                    CmpOp::Ne
                } else if self.eat_str("<=") {
                    CmpOp::Le
                } else if self.eat_str(">=") {
                    CmpOp::Ge
                } else if self.eat('<') {
                    CmpOp::Lt
                } else if self.eat('>') {
                    CmpOp::Gt
                } else if path.is_empty() {
                    return Err(self.err(op_at, "empty filter: write `{field==value}`".into()));
                } else {
                    return Err(self.err(
                        op_at,
                        "expected a comparison (== != < <= > >=) in the filter".into(),
                    ));
                };
                if path.is_empty() {
                    return Err(self.err(at, format!("expected a field before `{}`", op.text())));
                }
                self.ws();
                let value = self.value()?;
                segs.push(Seg::Filter(Cond {
                    path,
                    op,
                    value,
                    at,
                }));
                self.ws();
                if self.eat_str("&&") {
                    continue;
                }
                if self.eat('}') {
                    break;
                }
                let found = self.peek().map_or("the end".into(), |c| format!("`{c}`"));
                return Err(self.err(
                    self.pos,
                    format!(
                        "expected `}}` to close the filter opened at column {}, found {found}",
                        open + 1
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A filter's sub-path: `a.b`, `status[0].level`.
    fn filter_path(&mut self) -> Result<Vec<Seg>, ExprError> {
        let mut out = Vec::new();
        loop {
            let at = self.pos;
            let name = if self.peek() == Some('"') {
                self.quoted()?
            } else {
                self.id().to_string()
            };
            if name.is_empty() {
                if out.is_empty() {
                    return Ok(out);
                }
                return Err(self.err(at, "expected a field name".into()));
            }
            out.push(Seg::Field { name, at });
            if self.peek() == Some('[') {
                let s = self.slice()?;
                if let Seg::Slice {
                    single: false, at, ..
                } = s
                {
                    return Err(self.err(
                        at,
                        "a filter compares one value: use an index, not a slice".into(),
                    ));
                }
                out.push(s);
            }
            if !self.eat('.') {
                return Ok(out);
            }
        }
    }

    /// A filter's value: a number, `'text'`, `"text"`, `true`, `false`, `$var`.
    fn value(&mut self) -> Result<Lit, ExprError> {
        let at = self.pos;
        match self.peek() {
            Some('$') => {
                self.bump();
                let name = self.id();
                if name.is_empty() {
                    return Err(self.err(self.pos, "expected a variable's name after `$`".into()));
                }
                Ok(Lit::Var(name.to_string()))
            }
            Some(q @ ('\'' | '"')) => {
                self.bump();
                let start = self.pos;
                while self.peek().is_some_and(|c| c != q) {
                    self.bump();
                }
                let text = self.s[start..self.pos].to_string();
                if !self.eat(q) {
                    return Err(self.err(at, format!("unclosed `{q}`")));
                }
                Ok(Lit::Str(text))
            }
            Some(c) if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => {
                let text = self.number_text();
                if let Ok(i) = text.parse::<i64>() {
                    return Ok(Lit::Int(i));
                }
                text.parse::<f64>()
                    .map(Lit::Float)
                    .map_err(|_| self.err(at, format!("bad number `{text}`")))
            }
            _ => {
                let w = self.id();
                match w {
                    "true" => Ok(Lit::Bool(true)),
                    "false" => Ok(Lit::Bool(false)),
                    "" => Err(self.err(at, "expected a value: a number, 'text', true, false or $variable".into())),
                    _ => Err(self.err(
                        at,
                        format!("`{w}` is not a value: quote text ('{w}'), or write a number, true, false or $variable"),
                    )),
                }
            }
        }
    }

    /// The text of a number: `[-+]?digits[.digits][e[-+]digits]`.
    fn number_text(&mut self) -> &'a str {
        let start = self.pos;
        if self.peek().is_some_and(|c| c == '-' || c == '+') {
            self.bump();
        }
        let digits = |p: &mut Self| {
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.bump();
            }
        };
        digits(self);
        if self.peek() == Some('.') && self.peek2().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
            digits(self);
        }
        if self.peek().is_some_and(|c| c == 'e' || c == 'E')
            && self
                .peek2()
                .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+')
        {
            self.bump();
            if self.peek().is_some_and(|c| c == '-' || c == '+') {
                self.bump();
            }
            digits(self);
        }
        &self.s[start..self.pos]
    }

    /// `.@name`, `.@name(arg, ...)`, chained.
    fn modifiers(&mut self) -> Result<Vec<Modifier>, ExprError> {
        let mut out = Vec::new();
        while self.rest().starts_with(".@") {
            let at = self.pos;
            self.pos += 2;
            let name = self.id().to_string();
            let mut args = Vec::new();
            if self.eat('(') {
                loop {
                    self.ws();
                    if self.eat(')') {
                        break;
                    }
                    args.push(self.arg()?);
                    self.ws();
                    if self.eat(',') {
                        continue;
                    }
                    self.expect(')', "to close the modifier's arguments")?;
                    break;
                }
            }
            let m = Modifier { name, args, at };
            super::modifier::check(&m).map_err(|r| self.err(at, r))?;
            out.push(m);
        }
        Ok(out)
    }

    /// `0.5s`, `200ms`, `5hz`, `20`, `-1.5`.
    fn arg(&mut self) -> Result<Arg, ExprError> {
        let at = self.pos;
        let text = self.number_text();
        let v: f64 = text
            .parse()
            .map_err(|_| self.err(at, "expected a number (`0.5s`, `5hz`, `20`)".into()))?;
        let unit_at = self.pos;
        let unit = self.id().to_ascii_lowercase();
        Ok(match unit.as_str() {
            "" => Arg::Number(v),
            "s" => Arg::Seconds(v),
            "ms" => Arg::Seconds(v / 1e3),
            "us" => Arg::Seconds(v / 1e6),
            "ns" => Arg::Seconds(v / 1e9),
            "min" => Arg::Seconds(v * 60.0),
            "hz" => Arg::Hertz(v),
            _ => {
                return Err(self.err(
                    unit_at,
                    format!("unknown unit `{unit}` (s, ms, us, ns, min, hz)"),
                ))
            }
        })
    }

    // The formula: sum := product (('+'|'-') product)*
    fn sum(&mut self) -> Result<Node, ExprError> {
        let mut a = self.product()?;
        loop {
            self.ws();
            let op = if self.eat('+') {
                BinOp::Add
            } else if self.peek() == Some('-') {
                self.bump();
                BinOp::Sub
            } else {
                return Ok(a);
            };
            let b = self.product()?;
            a = Node::Bin(op, Box::new(a), Box::new(b));
        }
    }

    fn product(&mut self) -> Result<Node, ExprError> {
        let mut a = self.unary()?;
        loop {
            self.ws();
            let op = if self.rest().starts_with("**") {
                return Ok(a);
            } else if self.eat('*') {
                BinOp::Mul
            } else if self.peek() == Some('/') {
                // `/` then a topic's name is a path, not a division: `a /b` is written
                // `a / b`.
                self.bump();
                BinOp::Div
            } else if self.eat('%') {
                BinOp::Rem
            } else {
                return Ok(a);
            };
            self.ws();
            let b = self.unary()?;
            a = Node::Bin(op, Box::new(a), Box::new(b));
        }
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        self.ws();
        if self.eat('-') {
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        if self.eat('+') {
            return self.unary();
        }
        self.power()
    }

    fn power(&mut self) -> Result<Node, ExprError> {
        let base = self.postfix()?;
        self.ws();
        if self.eat_str("**") || self.eat('^') {
            let exp = self.unary()?;
            return Ok(Node::Bin(BinOp::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Node, ExprError> {
        let n = self.primary()?;
        if matches!(n, Node::Path(_)) {
            // A path takes its own modifiers.
            return Ok(n);
        }
        let mods = self.modifiers()?;
        Ok(if mods.is_empty() {
            n
        } else {
            Node::Modified(Box::new(n), mods)
        })
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        self.ws();
        let at = self.pos;
        match self.peek() {
            Some(c) if c.is_ascii_digit() || (c == '.' && self.peek2().is_some_and(|d| d.is_ascii_digit())) => {
                let text = self.number_text();
                text.parse::<f64>()
                    .map(Node::Num)
                    .map_err(|_| self.err(at, format!("bad number `{text}`")))
            }
            Some('(') => {
                self.bump();
                let n = self.sum()?;
                self.ws();
                self.expect(')', "to close `(`")?;
                Ok(n)
            }
            Some('$') => {
                self.bump();
                let name = self.id();
                if name.is_empty() {
                    return Err(self.err(self.pos, "expected a name after `$`".into()));
                }
                Ok(Node::Var {
                    name: name.to_string(),
                    at,
                })
            }
            Some('/' | '"') => {
                let topic = self.topic()?;
                if topic == "/" {
                    return Err(self.err(at, "expected a topic after `/`".into()));
                }
                Ok(Node::Path(self.path_rest(topic, at, false)?))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let name = self.id().to_string();
                self.ws();
                if self.eat('(') {
                    let mut args = Vec::new();
                    self.ws();
                    if !self.eat(')') {
                        loop {
                            args.push(self.sum()?);
                            self.ws();
                            if self.eat(',') {
                                continue;
                            }
                            self.expect(')', "to close the function's arguments")?;
                            break;
                        }
                    }
                    super::eval::check_call(&name, args.len()).map_err(|r| self.err(at, r))?;
                    return Ok(Node::Call { name, args, at });
                }
                match name.as_str() {
                    "pi" | "PI" => Ok(Node::Num(std::f64::consts::PI)),
                    "e" | "E" => Ok(Node::Num(std::f64::consts::E)),
                    "nan" | "NaN" => Ok(Node::Num(f64::NAN)),
                    "inf" => Ok(Node::Num(f64::INFINITY)),
                    _ => Err(self.err(
                        at,
                        format!("unknown name `{name}`: a path starts with its topic (/{name}...), a named series with `$`"),
                    )),
                }
            }
            Some(c) => Err(self.err(
                at,
                format!("expected a number, a path (/topic.field), $name, a function or `(`, found `{c}`"),
            )),
            None => Err(self.err(at, "expected a number, a path, $name, a function or `(`".into())),
        }
    }
}
