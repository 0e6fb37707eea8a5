//! What an expression is once parsed: [`Node`]s of a formula, [`MsgPath`]s with their
//! [`Seg`]ments and [`Modifier`]s, each with the byte offset it was written at (for errors).

/// One value a filter compares with, or a variable's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// An integer (`3`, `-2`).
    Int(i64),
    /// A number with a fraction or exponent (`0.5`, `1e-3`).
    Float(f64),
    /// `'text'` or `"text"`.
    Str(String),
    /// `true`, `false`.
    Bool(bool),
    /// `$name`: a variable's value, given when the expression is compiled.
    Var(String),
}

impl Lit {
    /// A variable's value as given on a command line or in the app's box: a whole number, a
    /// number, `true`/`false`, else text (quotes, `'...'` or `"..."`, taken off).
    pub fn of_text(value: &str) -> Lit {
        let value = value.trim();
        if let Ok(i) = value.parse::<i64>() {
            Lit::Int(i)
        } else if let Ok(f) = value.parse::<f64>() {
            Lit::Float(f)
        } else if value == "true" || value == "false" {
            Lit::Bool(value == "true")
        } else {
            let unquoted = value
                .strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
                .unwrap_or(value);
            Lit::Str(unquoted.to_string())
        }
    }
}

/// One end of a slice (`[a:b]`) or an index (`[a]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// A number (negative counts from the end: `-1` is the last).
    Int(i64),
    /// `$name`: a variable's value.
    Var(String),
    /// Left out: `[:b]` starts at the first, `[a:]` ends at the last.
    Open,
}

/// A comparison in a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// As written.
    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// One condition of a filter: `{status[0].level>=2}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cond {
    /// The sub-path compared (fields and indexes, no slices or filters).
    pub path: Vec<Seg>,
    /// The comparison.
    pub op: CmpOp,
    /// What it is compared with.
    pub value: Lit,
    /// Where the condition starts in the text.
    pub at: usize,
}

/// One step of a message path.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// `.name` (or `."quoted name"`).
    Field {
        /// The field's name.
        name: String,
        /// Where it starts in the text.
        at: usize,
    },
    /// `[a]` (one element: `single`) or `[a:b]`, both ends included, as Foxglove's and
    /// Lichtblick's paths take them.
    Slice {
        /// First element.
        start: Bound,
        /// Last element (included).
        end: Bound,
        /// Written as one index, `[a]`: gives one value, not an array of one.
        single: bool,
        /// Where the `[` is in the text.
        at: usize,
    },
    /// `{cond}`: keeps the values (messages, array elements) where the condition holds.
    Filter(Cond),
}

/// A modifier's argument: `(0.5s)`, `(20)`, `(5hz)`, `(2.5)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    /// A plain number.
    Number(f64),
    /// A duration (`0.5s`, `200ms`), in seconds.
    Seconds(f64),
    /// A frequency (`5hz`), in hertz.
    Hertz(f64),
}

/// A modifier after a path or a parenthesised formula: `.@derivative`, `.@movavg(0.5s)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Modifier {
    /// Its name (`derivative`, `movavg`, `sqrt` ...).
    pub name: String,
    /// Its arguments.
    pub args: Vec<Arg>,
    /// Where the `.@` is in the text.
    pub at: usize,
}

/// A path into the messages of one topic: `/imu.orientation.yaw.@derivative`.
#[derive(Debug, Clone, PartialEq)]
pub struct MsgPath {
    /// The topic (`/imu`); empty for a path written without one (`orientation.x`).
    pub topic: String,
    /// The steps within each message.
    pub segs: Vec<Seg>,
    /// Modifiers applied to the series, in order.
    pub mods: Vec<Modifier>,
    /// Where the path starts in the text.
    pub at: usize,
    /// Where it ends.
    pub end: usize,
}

/// An arithmetic operator of a formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%` (the remainder with the sign of the dividend, as C's `fmod`)
    Rem,
    /// `^` or `**`
    Pow,
}

/// A node of a formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A number.
    Num(f64),
    /// A path: its series.
    Path(MsgPath),
    /// `$name`: a named series, or a variable's number.
    Var {
        /// The name.
        name: String,
        /// Where the `$` is.
        at: usize,
    },
    /// `-x`.
    Neg(Box<Node>),
    /// `a op b`.
    Bin(BinOp, Box<Node>, Box<Node>),
    /// `f(a, b, ...)`.
    Call {
        /// The function's name.
        name: String,
        /// Its arguments.
        args: Vec<Node>,
        /// Where its name starts.
        at: usize,
    },
    /// `(formula).@mod...`: modifiers applied to a formula's series.
    Modified(Box<Node>, Vec<Modifier>),
}

impl Node {
    /// The paths of the formula, in the order written.
    pub fn paths(&self) -> Vec<&MsgPath> {
        let mut out = Vec::new();
        self.walk(&mut |n| {
            if let Node::Path(p) = n {
                out.push(p);
            }
        });
        out
    }

    /// The names of the `$name`s of the formula.
    pub fn vars(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk(&mut |n| {
            if let Node::Var { name, .. } = n {
                out.push(name.as_str());
            }
        });
        out
    }

    fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Node)) {
        f(self);
        match self {
            Node::Num(_) | Node::Path(_) | Node::Var { .. } => {}
            Node::Neg(a) | Node::Modified(a, _) => a.walk(f),
            Node::Bin(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Node::Call { args, .. } => args.iter().for_each(|a| a.walk(f)),
        }
    }
}
