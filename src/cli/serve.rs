//! `bagscope serve`: recordings served to Foxglove clients over the Foxglove WebSocket protocol.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use bagscope::live::foxglove::{ServeOptions, Server};
use bagscope::{merge, Bag, Error};

/// Serve recordings to Foxglove and Lichtblick (and any Foxglove WebSocket client): channels
/// with their schemas and messages as stored, in time order at --speed, each client on its own
/// clock with play, pause, seek and speed (`foxglove.sdk.v1` playback control; older clients
/// speak `foxglove.websocket.v1`). Listens on 127.0.0.1 unless --host says otherwise. Ctrl-C
/// stops.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Recordings (ROS 1 bags, MCAP files, rosbag2 directories, s3:// or https:// ones);
    /// several are served merged on one timeline.
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0: any free one; the address is printed).
    #[arg(long, short = 'p', default_value_t = 8765)]
    pub port: u16,
    /// Only these topics (repeatable).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
    /// Speed clients start with: 2 plays twice as fast.
    #[arg(long, short = 'r', default_value_t = 1.0)]
    pub speed: f64,
    /// Start again at the end.
    #[arg(long = "loop", short = 'l')]
    pub looped: bool,
    /// Clients start paused (their play button plays).
    #[arg(long)]
    pub paused: bool,
    /// Clients served at once.
    #[arg(long, default_value_t = 32)]
    pub max_clients: usize,
    /// MB queued for one client before its messages are dropped (a slow client).
    #[arg(long, default_value_t = 64)]
    pub queue_mb: usize,
}

pub fn run(a: &ServeArgs) -> Result<ExitCode, Error> {
    let bag = Bag::open_many(&merge::parts_of(&a.bags))?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let connections = if a.topics.is_empty() {
        None
    } else {
        Some(bag.connections_of_topics(&a.topics)?)
    };
    let name = a
        .bags
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    let server = Server::bind(
        Arc::new(bag),
        ServeOptions {
            host: a.host.clone(),
            port: a.port,
            speed: a.speed,
            looped: a.looped,
            paused: a.paused,
            max_clients: a.max_clients.max(1),
            queue_bytes: a.queue_mb.max(1) << 20,
            name,
            connections,
            ..ServeOptions::default()
        },
    )?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    let addr = server.local_addr()?;
    println!(
        "serving {} channels on ws://{addr} (Foxglove: Open connection → Foxglove WebSocket)",
        server.channels().len()
    );
    let _ = std::io::stdout().flush();
    server.run(&stop)?;
    Ok(ExitCode::SUCCESS)
}
