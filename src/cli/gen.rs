//! `bagscope gen`: typed code for the types a recording uses.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::cli::Error;
use bagscope_reader::Bag;

/// Typed code (C++ header, Rust module, Python module) for the types a recording uses:
/// structs, loaders from ROS 1 and CDR bytes, JSON printers.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// The recording whose definitions are used.
    pub bag: PathBuf,
    /// cpp, rust or python.
    #[arg(long)]
    pub lang: String,
    /// Directory to write into (bagscope_msgs.hpp / .rs / .py).
    #[arg(short, long, default_value = ".")]
    pub output: PathBuf,
    /// Only the types of these topics (repeatable).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
}

/// `bagscope gen`: typed code for the types a recording uses.
pub fn run(a: &GenArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (path, lang, out_dir, topics) = (
        a.bag.as_path(),
        a.lang.as_str(),
        a.output.as_path(),
        a.topics.as_slice(),
    );
    use bagscope_ops::gen::{generate, Lang};
    let lang = Lang::parse(lang)
        .ok_or_else(|| Error::Invalid(format!("unknown language {lang:?}: cpp, rust or python")))?;
    let bag = Bag::open_with(path, opts)?;
    let s = bag.summary();
    let conns: Vec<usize> = if topics.is_empty() {
        (0..s.connections.len()).collect()
    } else {
        bag.connections_of_topics(topics)?
    };
    let mut defs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for ci in conns {
        let c = &s.connections[ci];
        if !seen.insert((c.datatype.clone(), c.message_definition.clone())) {
            continue;
        }
        match bagscope_reader::encoding::Plan::for_connection(c, &opts.msg_path) {
            // The generated loaders read ROS 1 and CDR bytes; protobuf and JSON have their
            // own code generators (protoc, JSON Schema tools).
            Ok(p) if p.is_foreign() => eprintln!(
                "bagscope: {} ({}) left out: {}-encoded; the generated loaders read ROS 1 and CDR",
                c.topic, c.datatype, c.encoding
            ),
            Ok(p) => defs.push(p.def),
            Err(e) => eprintln!("bagscope: {} ({}) left out: {e}", c.topic, c.datatype),
        }
    }
    if defs.is_empty() {
        return Err(Error::Invalid(
            "no decodable type to generate code for".into(),
        ));
    }
    let code = generate(&defs, lang);
    std::fs::create_dir_all(out_dir)?;
    let file = out_dir.join(lang.file_name());
    let mut f = bagscope_ops::tables::csv::AtomicFile::create(&file)?;
    std::io::Write::write_all(&mut f, code.as_bytes())?;
    f.commit()?;
    eprintln!(
        "{}: {} message types from {} definitions",
        file.display(),
        bagscope_ops::gen::type_names(&defs).len(),
        defs.len()
    );
    Ok(ExitCode::SUCCESS)
}
