//! ROS 1 on the wire without a ROS install: the master's and nodes' XML-RPC APIs and TCPROS.

pub mod node;
pub mod tcpros;
pub mod xmlrpc;

pub use node::{Node, NodeOptions, Publication, Received, TopicSpec};
