use super::*;

#[test]
fn rows_survive_the_parquet_round_trip() {
    let r = RecordingRow {
        path: "/x/a.bag".into(),
        size: 9,
        disk_bytes: 10,
        mtime_ns: 7,
        etag: Some("\"abc\"".into()),
        format: "2.0".into(),
        start_ns: Some(1),
        end_ns: None,
        duration_ns: 0,
        messages: 3,
        topics: 1,
        connections: 1,
        chunks: 1,
        compression: vec![("lz4".into(), "1".into())],
        indexed: true,
        storage: vec![],
        metadata: vec![("m.k".into(), "v".into())],
        warnings: vec!["w".into()],
        damaged: true,
        error: None,
        logs: [0, 1, 2, 3, 4],
        diagnostics: [5, 6, 7, 8],
        bookmarks: vec!["dock @ +1.500 s".into()],
    };
    let t = TopicRow {
        path: "/x/a.bag".into(),
        topic: "/t".into(),
        msgtype: "std_msgs/String".into(),
        encoding: "ros1".into(),
        messages: 3,
        connections: 1,
        mean_rate_hz: Some(2.0),
        median_period_s: None,
        longest_gap_s: Some(0.5),
        definition: "md5".into(),
    };
    let dir = std::env::temp_dir().join(format!("bagscope-catalog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    write_parquet(
        &dir.join("recordings.parquet"),
        recordings_batch(&[&r]).unwrap(),
    )
    .unwrap();
    write_parquet(&dir.join("topics.parquet"), topics_batch(&[&t]).unwrap()).unwrap();
    let prev = read_previous(&dir);
    assert_eq!(
        prev.get(&("/x/a.bag".into(), 10, 7, Some("\"abc\"".into()))),
        Some(&(r, vec![t]))
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(recordings_schema().is_ok());
}
