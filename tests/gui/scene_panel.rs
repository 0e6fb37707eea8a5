//! A 3D panel following the playhead in a fixed frame.

use bagscope_app::{App, Cmd};
use egui::{Event, Modifiers, PointerButton, Pos2};
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

fn panel(a: &App) -> &bagscope_app::scene::ScenePanel {
    &a.doc.as_ref().unwrap().scene.panels[0]
}

/// The 3D panel on the demo: opened from the bar with every drawable topic, a fixed frame
/// picked from the tree, changed to another, hovering a lidar point and a frame shows what and
/// where, clicking a marker moves the inspector to its message.
#[test]
fn a_3d_panel_follows_the_playhead_in_a_fixed_frame() {
    let dir = common::temp_dir("ui-scene");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    let start = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut()
        .apply(Cmd::SetPlayhead(start + 12_000_000_000));
    // View › 3D view (each drawable topic's row has a 3D button too).
    menu(&mut h, "View", "3D view");
    wait_for(&mut h, "the scene", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.scene.panels.first().is_some_and(|p| p.scene.is_some()))
    });
    // Every drawable topic is a layer; the fixed frame is the tree's map.
    for t in [
        "/lidar/points",
        "/odom",
        "/plan",
        "/planner/markers",
        "/scan",
    ] {
        assert!(h.query_by_label(t).is_some(), "no layer {t}");
    }
    wait_for(&mut h, "map as fixed frame", |a| {
        panel(a).scene.as_ref().is_some_and(|s| s.fixed == "map")
    });
    let s = panel(h.state()).scene.clone().unwrap();
    assert!(s.point_count() > 2000, "{}", s.point_count());
    assert_eq!(s.status[3].text, "4 markers");
    assert!(
        h.query_by_label("2084 of 2084 points").is_some() || s.status[0].text.ends_with("points")
    );
    // The fixed frame changed to odom: the scene is built again there.
    h.get_by_label("Fixed frame").click();
    h.run_steps(2);
    h.get_all_by_label("odom").last().unwrap().click();
    wait_for(&mut h, "the scene in odom", |a| {
        panel(a).scene.as_ref().is_some_and(|s| s.fixed == "odom")
    });
    let s = panel(h.state()).scene.clone().unwrap();
    // Hover: a frame's pick, then a lidar point away from every pick.
    let (rect, cam) = {
        let p = panel(h.state());
        (p.rect, p.settings.camera)
    };
    let ppp = h.ctx.pixels_per_point();
    let view = cam.view(rect.width() * ppp, rect.height() * ppp);
    let at = |q: [f32; 3]| {
        cam.project(&view, q, rect)
            .filter(|p| rect.shrink(4.0).contains(*p))
    };
    let base = s
        .picks
        .iter()
        .find(|k| k.what.starts_with("frame base_link"))
        .unwrap();
    h.event(Event::PointerMoved(
        at(base.pos).expect("base_link in view"),
    ));
    h.run_steps(3);
    let hover = panel(h.state())
        .hover
        .clone()
        .expect("something under the pointer");
    assert!(hover.starts_with("frame base_link in odom"), "{hover}");
    let picks: Vec<Pos2> = s.picks.iter().filter_map(|k| at(k.pos)).collect();
    let lidar = s.layer_points(0);
    let point = lidar
        .pos
        .iter()
        .filter_map(|q| at(*q))
        .find(|p| picks.iter().all(|k| k.distance(*p) > 12.0))
        .expect("a lidar point in view");
    h.event(Event::PointerMoved(point));
    h.run_steps(3);
    let hover = panel(h.state())
        .hover
        .clone()
        .expect("a point under the pointer");
    assert!(hover.starts_with("/lidar/points point"), "{hover}");
    assert!(hover.ends_with("in odom"), "{hover}");
    // Clicking the goal marker moves the inspector to its message.
    let goal = s
        .picks
        .iter()
        .find(|k| k.what.contains("goal/0 (ARROW)"))
        .unwrap();
    let src = goal.source.unwrap();
    let gp = at(goal.pos).expect("the goal in view");
    h.event(Event::PointerMoved(gp));
    h.run_steps(2);
    h.event(Event::PointerButton {
        pos: gp,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.event(Event::PointerButton {
        pos: gp,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(3);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.nav.playhead, src.entry.time_ns);
    assert_eq!(
        d.rec.bag.summary().topics[d.nav.selected.unwrap()].name,
        "/planner/markers"
    );
}

/// Frame names and marker texts that would overlap are decluttered: seen from far away, the
/// demo's TF tree (map, odom, base_link, its sensors) crowds into a few pixels, and no two
/// labels drawn overlap; the rest are left out until the pointer comes near.
#[test]
fn labels_that_would_overlap_are_decluttered() {
    let dir = common::temp_dir("ui-scene-labels");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    let start = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut()
        .apply(Cmd::SetPlayhead(start + 12_000_000_000));
    h.state_mut().apply(Cmd::OpenScene(None));
    wait_for(&mut h, "the scene", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.scene.panels.first().is_some_and(|p| p.scene.is_some()))
    });
    for dist in [8.0f32, 400.0] {
        h.state_mut().doc.as_mut().unwrap().scene.panels[0]
            .settings
            .camera
            .dist = dist;
        h.run_steps(4);
        let p = panel(h.state());
        let drawn = &p.labels_drawn;
        assert!(!drawn.is_empty(), "{dist} m: no label drawn");
        for (i, a) in drawn.iter().enumerate() {
            for b in &drawn[i + 1..] {
                assert!(!a.intersects(*b), "{dist} m: {a:?} and {b:?} overlap");
            }
        }
        if dist > 100.0 {
            assert!(p.labels_hidden > 0, "from far away some labels give way");
        }
    }
}

/// The demo robot's joint states in the inspector: a table of each joint's position (radians
/// and degrees), velocity and effort at the playhead, the values of the message there; a click
/// on a position plots that joint.
#[test]
fn joint_states_show_as_a_table_of_joints() {
    let dir = common::temp_dir("ui-joints");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p.clone()));
    wait_for(&mut h, "indexing", indexed);
    let start = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut()
        .apply(Cmd::SetPlayhead(start + 10_000_000_000));
    let ti = topic_index(&h, "/joint_states");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    wait_for(&mut h, "the joint state", inspected);
    h.run_steps(2);
    h.get_by_label("Joints (4)");
    // The message at the playhead, as `bagscope echo` prints it.
    let echo = common::bagscope(&[&"echo", &p, &"-t", &"/joint_states", &"--json"]).ok();
    let at = start + 10_000_000_000;
    let msg: serde_json::Value = echo
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .take_while(|v| v["time_ns"].as_u64().unwrap() <= at)
        .last()
        .unwrap();
    let names = msg["message"]["name"].as_array().unwrap();
    let pos = msg["message"]["position"].as_array().unwrap();
    assert_eq!(names.len(), 4);
    for (n, v) in names.iter().zip(pos) {
        let v = v.as_f64().unwrap();
        h.get_by_label(n.as_str().unwrap());
        h.get_by_label(&format!("{v:.4}"));
        h.get_by_label(&format!("{:.2}°", v.to_degrees()));
    }
    // The mast's pan plotted by a click on its position.
    let pan = pos[2].as_f64().unwrap();
    h.get_by_label(&format!("{pan:.4}")).click();
    h.run_steps(3);
    let d = h.state().doc.as_ref().unwrap();
    assert!(
        d.plots
            .series
            .iter()
            .any(|s| s.name == "/joint_states.position[2]"),
        "{:?}",
        d.plots.series.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
}

/// A message script's virtual topic (`--script`): a MarkerArray made from the demo's odometry
/// is in the recording (as many messages as the odometry) and drawn in the 3D panel as a layer
/// of its own (its one cube), beside the recorded markers.
#[test]
fn a_virtual_marker_topic_is_drawn_in_the_3d_panel() {
    let dir = common::temp_dir("ui-scene-virtual");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let script = bagscope_ops::script::message::read_file(
        "-- topic: /odom_marker\n-- type: visualization_msgs/msg/MarkerArray\n-- input: /odom\n\
         function message(topic, msg, time)\n  return { markers = { { header = msg.header, ns = 'odom', id = 1, type = 1,\n    \
         pose = msg.pose.pose, scale = { x = 0.5, y = 0.5, z = 0.5 }, color = { g = 1, a = 1 } } } }\nend\n",
    )
    .unwrap();
    let mut h = with_script(p, script);
    let d = h.state().doc.as_ref().unwrap();
    let t = d
        .rec
        .bag
        .summary()
        .topic("/odom_marker")
        .expect("the virtual topic");
    let odom = d.rec.bag.summary().topic("/odom").unwrap();
    assert_eq!(t.message_count, odom.message_count);
    assert_eq!(t.datatype, "visualization_msgs/msg/MarkerArray");
    let start = d.rec.range().0;
    h.state_mut()
        .apply(Cmd::SetPlayhead(start + 12_000_000_000));
    menu(&mut h, "View", "3D view");
    wait_for(&mut h, "the scene", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.scene.panels.first().is_some_and(|p| p.scene.is_some()))
    });
    wait_for(&mut h, "the scene with the virtual markers", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.scene
                .panels
                .first()
                .and_then(|p| p.scene.as_ref())
                .is_some_and(|s| {
                    // A layer a topic, in the topics' order: the virtual one after /odom.
                    let t: Vec<&str> = s.status.iter().map(|l| l.text.as_str()).collect();
                    t.len() == 6 && t[2] == "1 markers" && t[4] == "4 markers"
                })
        })
    });
    assert!(
        h.query_by_label("/odom_marker").is_some(),
        "no layer /odom_marker"
    );
}

/// A message script's virtual `sensor_msgs/msg/Image` (mono8, made from the odometry) is shown
/// in an image panel: the frame at the playhead has the pixels the script wrote.
#[test]
fn a_virtual_image_topic_is_shown_in_an_image_panel() {
    let dir = common::temp_dir("ui-images-virtual");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    // A 4 x 2 image: row 0 the count of messages so far (mod 256), row 1 255 - it.
    let script = bagscope_ops::script::message::read_file(
        "-- topic: /odom_image\n-- type: sensor_msgs/msg/Image\n-- input: /odom\nn = 0\n\
         function message(topic, msg, time)\n  n = n + 1\n  local a = n % 256\n  \
         local row0 = string.rep(string.char(a), 4)\n  local row1 = string.rep(string.char(255 - a), 4)\n  \
         return { header = msg.header, height = 2, width = 4, encoding = 'mono8', step = 4, data = row0 .. row1 }\nend\n",
    )
    .unwrap();
    let mut h = with_script(p, script);
    let (ti, start, odom_times) = {
        let d = h.state().doc.as_ref().unwrap();
        let s = d.rec.bag.summary();
        let ti = s
            .topics
            .iter()
            .position(|t| t.name == "/odom_image")
            .expect("the virtual topic");
        let conn = s.topic("/odom").unwrap().connections[0];
        (ti, d.rec.range().0, times_of(&d.rec.bag, conn))
    };
    h.state_mut().apply(Cmd::OpenImage(ti));
    let at = start + 3_010_000_000;
    h.state_mut().apply(Cmd::SetPlayhead(at));
    // The message at or before the playhead is the k-th odometry message.
    let k = odom_times.iter().filter(|&&t| t <= at).count() as u8;
    let img = first_frame(&mut h);
    assert_eq!(
        (img.width, img.height, img.encoding.as_str()),
        (4, 2, "mono8")
    );
    let bagscope_ops::media::image::Pixels::Mono8(px) = &img.pixels else {
        panic!("not mono8: {:?}", img.encoding);
    };
    assert_eq!(
        px[..],
        [k, k, k, k, 255 - k, 255 - k, 255 - k, 255 - k],
        "row 0 the message's number"
    );
}

/// Foxglove's schemas as a script's output: a `foxglove.SceneUpdate` made from the demo's
/// odometry (JSON with its schema) is drawn in the 3D panel as a layer of its own, and a
/// `foxglove.RawImage` (its bytes base64 in JSON) is shown in an image panel with the pixels
/// the script wrote.
#[test]
fn virtual_foxglove_topics_are_drawn_in_the_3d_and_image_panels() {
    let dir = common::temp_dir("ui-scene-virtual-foxglove");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let read = |s: &str| bagscope_ops::script::message::read_file(s).unwrap();
    let scene = read(
        "-- topic: /odom_scene\n-- type: foxglove.SceneUpdate\n-- input: /odom\n\
         function message(topic, msg, time)\n  return { entities = { { timestamp = msg.header.stamp, frame_id = msg.header.frame_id,\n    \
         id = 'odom', cubes = { { pose = msg.pose.pose, size = { x = 0.5, y = 0.5, z = 0.5 }, color = { g = 1, a = 1 } },\n    \
         { pose = msg.pose.pose, size = { x = 0.1, y = 0.1, z = 2 }, color = { b = 1, a = 1 } } } } } }\nend\n",
    );
    let image = read(
        "-- topic: /odom_raw\n-- type: foxglove.RawImage\n-- input: /odom\nn = 0\n\
         function message(topic, msg, time)\n  n = n + 1\n  local a = n % 256\n  \
         return { timestamp = time, frame_id = 'cam', width = 2, height = 1, encoding = 'mono8', step = 2,\n    \
         data = string.char(a, 255 - a) }\nend\n",
    );
    let mut h = with_scripts(p, vec![scene, image]);
    let (ti, start, odom_times) = {
        let d = h.state().doc.as_ref().unwrap();
        let s = d.rec.bag.summary();
        let t = s.topic("/odom_scene").expect("the virtual topic");
        let conn = s.topic("/odom").unwrap().connections[0];
        assert_eq!(t.datatype, "foxglove.SceneUpdate");
        assert_eq!(t.message_count, s.topic("/odom").unwrap().message_count);
        let ti = s.topics.iter().position(|t| t.name == "/odom_raw").unwrap();
        (ti, d.rec.range().0, times_of(&d.rec.bag, conn))
    };
    let at = start + 12_000_000_000;
    h.state_mut().apply(Cmd::SetPlayhead(at));
    menu(&mut h, "View", "3D view");
    wait_for(&mut h, "the scene with the virtual entity", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.scene
                .panels
                .first()
                .and_then(|p| p.scene.as_ref())
                .is_some_and(|s| s.status.iter().any(|l| l.text == "2 markers"))
        })
    });
    assert!(
        h.query_by_label("/odom_scene").is_some(),
        "no layer /odom_scene"
    );
    h.state_mut().apply(Cmd::OpenImage(ti));
    let k = odom_times.iter().filter(|&&t| t <= at).count() as u8;
    let img = first_frame(&mut h);
    assert_eq!((img.width, img.height), (2, 1));
    let bagscope_ops::media::image::Pixels::Mono8(px) = &img.pixels else {
        panic!("not mono8: {:?}", img.encoding);
    };
    assert_eq!(px[..], [k, 255 - k], "the message's number");
}

/// The times of a connection's messages.
fn times_of(bag: &bagscope_reader::Bag, conn: usize) -> Vec<u64> {
    bag.tables().unwrap().per_connection[conn]
        .iter()
        .map(|e| e.time_ns)
        .collect()
}

/// The first image panel's frame, once it has one.
fn first_frame(h: &mut Harness<'static, App>) -> std::sync::Arc<bagscope_ops::media::image::Image> {
    wait_for(h, "the virtual frame", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.images.panels.first().is_some_and(|p| p.frame.is_some()))
    });
    h.state().doc.as_ref().unwrap().images.panels[0]
        .frame
        .as_ref()
        .unwrap()
        .image
        .clone()
}

/// The app opening `p` with the message script `script` (as `--script` gives it), indexed.
fn with_script(
    p: std::path::PathBuf,
    script: bagscope_ops::script::message::MessageScript,
) -> Harness<'static, App> {
    with_scripts(p, vec![script])
}

/// The app opening `p` with message scripts (as `--script` gives them), indexed.
fn with_scripts(
    p: std::path::PathBuf,
    scripts: Vec<bagscope_ops::script::message::MessageScript>,
) -> Harness<'static, App> {
    let mut app = App::new(None, None).with_scripts(bagscope_app::Scripts {
        messages: scripts,
        series: Vec::new(),
    });
    app.apply(Cmd::Open(p));
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .build_ui_state(|ui, app: &mut App| app.ui(ui), app);
    wait_for(&mut h, "indexing", indexed);
    h
}
