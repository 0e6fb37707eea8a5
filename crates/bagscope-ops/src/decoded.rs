//! The loop several operations share (the log, transforms, joint states, diagnostics, state
//! rows): the messages of some connections in time order, each decoded by its connection's
//! plan, made once a connection.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bagscope_reader::encoding::{Node, Plan};
use bagscope_reader::storage::Message;
use bagscope_reader::{Bag, Error, Filter, Result};

/// Calls `f` with each message of `conns` in time order and, where it decodes, its
/// connection's plan and value tree (`None` where the connection has no plan or the message
/// does not decode: the caller counts it). Stops where `f` breaks or fails, with
/// [`Error::Cancelled`] once `cancel` is set, and at a message that cannot be read.
pub fn each_decoded(
    bag: &Bag,
    conns: Vec<usize>,
    cancel: &AtomicBool,
    mut f: impl FnMut(&Message, Option<(&Plan, &Node)>) -> Result<ControlFlow<()>>,
) -> Result<()> {
    let mut plans: HashMap<usize, Option<Arc<Plan>>> = HashMap::new();
    for m in bag.messages(&Filter {
        connections: Some(conns),
        ..Default::default()
    })? {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let m = m?;
        let plan = plans
            .entry(m.conn)
            .or_insert_with(|| bag.plan(m.conn).ok().map(|(p, _)| p));
        let node = plan.as_ref().and_then(|p| p.decode(&m.data).ok());
        let flow = match (plan, &node) {
            (Some(p), Some(n)) => f(&m, Some((p, n)))?,
            _ => f(&m, None)?,
        };
        if flow.is_break() {
            break;
        }
    }
    Ok(())
}
