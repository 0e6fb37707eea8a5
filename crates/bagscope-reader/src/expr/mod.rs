//! Expressions: one language for plots, Find, `bagscope csv`, `echo --filter` and Python's
//! `series()`. A path as Foxglove and Lichtblick write it, with chained modifiers, and
//! formulas over several paths:
//!
//! ```text
//! /imu.linear_acceleration.x                       a field
//! /scan.ranges[0:9]   /tf.transforms[-1]           slices (both ends included), negative indexes
//! /diag.status[:]{level>=2}{name=='motor'}.level   filters, joined by and
//! "/odd.topic".value  /arr.items[$i]               quoted topics, $variables
//! /imu.orientation.yaw_deg   /odom.twist.twist.linear.norm      virtual fields
//! /imu.angular_velocity.z.@derivative.@movavg(0.5s)                 modifiers, chained
//! hypot(/odom.pose.pose.position.x, /odom.pose.pose.position.y)     a formula
//! /run1/odom.twist.twist.linear.x - /run2/odom.twist.twist.linear.x two runs on one timeline
//! ```
//!
//! The grammar, every modifier and function are in the book (`docs/expressions.md`). A path
//! is compiled per connection into a [`Getter`]: a path of fields and indexes reads its value in
//! place, with no value tree; slices and filters decode the message. A formula's series are
//! aligned on the union of their times ([`Interp`]); [`crate::series::expr_series`] reads
//! expressions over a recording.
//!
//! ```
//! use bagscope_reader::expr::Expr;
//! let e = Expr::parse("/imu.orientation.yaw.@derivative.@movavg(0.5s)").unwrap();
//! assert_eq!(e.paths()[0].topic, "/imu");
//! let err = Expr::parse("/imu.orientation.@movavg(fast)").unwrap_err();
//! assert_eq!(err.column(), 26);
//! assert!(err.to_string().contains("expected a number"));
//! ```

mod ast;
mod eval;
mod getter;
mod modifier;
mod parse;
#[cfg(test)]
mod tests;

pub use ast::{Arg, BinOp, Bound, CmpOp, Cond, Lit, Modifier, MsgPath, Node, Seg};
pub use eval::{combine, eval, Interp, Leaves, Val, FUNCTIONS};
pub use getter::{compile, compile_match, Getter, Vars, Virtual, VIRTUAL_FIELDS};
pub use modifier::{apply, unary, Points, MODIFIERS};

pub use crate::error::ExprError;

/// A parsed expression: a formula (one path alone is a formula too).
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// The text as written.
    pub text: String,
    /// The formula.
    pub root: Node,
}

impl Expr {
    /// Parses a formula or a path (a path starts with its topic: `/imu.orientation.x`).
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        Ok(Expr {
            text: text.to_string(),
            root: parse::formula(text)?,
        })
    }

    /// The paths of the expression, in the order written.
    pub fn paths(&self) -> Vec<&MsgPath> {
        self.root.paths()
    }

    /// The path, where the expression is one path with no modifier (its values are the
    /// messages' own, of their own type).
    pub fn plain_path(&self) -> Option<&MsgPath> {
        match &self.root {
            Node::Path(p) if p.mods.is_empty() => Some(p),
            _ => None,
        }
    }

    /// The topics the expression reads, each once, in the order written.
    pub fn topics(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in self.paths() {
            if !out.contains(&p.topic.as_str()) {
                out.push(&p.topic);
            }
        }
        out
    }
}

/// Parses one path, with or without its topic (`/imu.orientation.x`, `orientation.x`), as
/// the places that take a path alone do (a topic given elsewhere, a filter of `echo`).
pub fn parse_path(text: &str) -> Result<MsgPath, ExprError> {
    parse::path(text)
}

impl From<&crate::encoding::FieldPath> for MsgPath {
    fn from(fp: &crate::encoding::FieldPath) -> MsgPath {
        let segs = fp
            .segments
            .iter()
            .map(|s| match s {
                crate::encoding::Segment::Field(n) => Seg::Field {
                    name: n.clone(),
                    at: 0,
                },
                crate::encoding::Segment::Index(i) => Seg::Slice {
                    start: Bound::Int(*i),
                    end: Bound::Int(*i),
                    single: true,
                    at: 0,
                },
            })
            .collect();
        MsgPath {
            topic: fp.topic.clone(),
            segs,
            mods: Vec::new(),
            at: 0,
            end: 0,
        }
    }
}
