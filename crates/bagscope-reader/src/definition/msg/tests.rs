use super::*;

const HEADER: &str = "uint32 seq\ntime stamp\nstring frame_id\n";

#[test]
fn std_msgs_md5() {
    let d = MsgDef::parse("std_msgs/Header", HEADER).unwrap();
    assert_eq!(d.md5(), "2176decaecbce78abc3b96ef049fabed");
    let d = MsgDef::parse("std_msgs/Float64", "float64 data").unwrap();
    assert_eq!(d.md5(), "fdb28210bfa9d7c91146260178d9a584");
    let d = MsgDef::parse("std_msgs/String", "string data\n").unwrap();
    assert_eq!(d.md5(), "992ce8a1687cec8c8bd883ec73ca41d1");
}

#[test]
fn nested_header_and_constants() {
    let text = format!(
        "# A log line\nbyte DEBUG=1 #debug level\nbyte INFO=2\nstring S= a # b \nHeader header\nbyte level\nstring[] topics\nfloat64[9] cov\n\
         ================================================================================\n\
         MSG: std_msgs/Header\n{HEADER}"
    );
    let d = MsgDef::parse("rosgraph_msgs/Log", &text).unwrap();
    let t = d.root();
    assert_eq!(t.constants.len(), 3);
    assert_eq!(t.constants[0].value, "1");
    assert_eq!(t.constants[2].value, "a # b");
    assert_eq!(t.fields[0].ty, FieldType::Message(1));
    assert_eq!(t.fields[3].array, ArrayKind::Fixed(9));
    assert_eq!(t.fields[2].array, ArrayKind::Variable);
}

#[test]
fn errors() {
    assert_eq!(
        MsgDef::parse("std_msgs/Empty", "").unwrap().md5(),
        "d41d8cd98f00b204e9800998ecf8427e"
    );
    let e = MsgDef::parse("a/B", "Missing m").unwrap_err();
    assert!(e.to_string().contains("Missing"), "{e}");
    assert!(MsgDef::parse("a/B", "int32[x] y").is_err());
    assert!(MsgDef::parse("a/B", "B b").is_err());
}

const POINT: &str = "float64 x\nfloat64 y\nfloat64 z\n";
const QUAT: &str = "float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n";
const SEP: &str =
    "================================================================================\n";

#[test]
fn comments_blank_lines_and_whitespace() {
    let d = MsgDef::parse(
        "a/B",
        "# leading comment\n\n   \n  int32   x   # trailing comment\n\t float64[3]\tv\n#float64 gone\n",
    )
    .unwrap();
    let t = d.root();
    assert_eq!(t.fields.len(), 2);
    assert_eq!(t.fields[0].name, "x");
    assert_eq!(t.fields[1].array, ArrayKind::Fixed(3));
    // md5 text drops comments and normalises spacing.
    assert_eq!(
        d.md5(),
        MsgDef::parse("a/B", "int32 x\nfloat64[3] v").unwrap().md5()
    );
}

#[test]
fn constants_of_every_form() {
    let d = MsgDef::parse(
        "a/B",
        "int32 X=3\nuint8 Y = 7 # seven\nstring S=hello # not a comment\nstring T=\nfloat64 PI=3.14\nint32 v\n",
    )
    .unwrap();
    let c = &d.root().constants;
    let got: Vec<(&str, &str)> = c
        .iter()
        .map(|c| (c.name.as_str(), c.value.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("X", "3"),
            ("Y", "7"),
            ("S", "hello # not a comment"),
            ("T", ""),
            ("PI", "3.14")
        ]
    );
    assert_eq!(c[1].ty, Primitive::U8);
    assert_eq!(d.root().fields.len(), 1);
    // A constant needs a primitive type and a name.
    assert!(MsgDef::parse("a/B", "a/C X=1").is_err());
    assert!(MsgDef::parse("a/B", "int32 =1").is_err());
}

#[test]
fn aliases_time_and_duration() {
    let d = MsgDef::parse("a/B", "byte b\nchar c\ntime t\nduration d\nbool f\n").unwrap();
    let tys: Vec<&FieldType> = d.root().fields.iter().map(|f| &f.ty).collect();
    assert_eq!(
        tys,
        [
            &FieldType::Primitive(Primitive::I8),
            &FieldType::Primitive(Primitive::U8),
            &FieldType::Primitive(Primitive::Time),
            &FieldType::Primitive(Primitive::Duration),
            &FieldType::Primitive(Primitive::Bool),
        ]
    );
    // The md5 text keeps the aliases as written (ROS hashes `byte`, not `int8`).
    assert_ne!(
        d.md5(),
        MsgDef::parse("a/B", "int8 b\nuint8 c\ntime t\nduration d\nbool f")
            .unwrap()
            .md5()
    );
}

#[test]
fn header_resolves_to_std_msgs_or_roslib() {
    let text = format!("Header header\nint32 v\n{SEP}MSG: std_msgs/Header\n{HEADER}");
    let d = MsgDef::parse("a/B", &text).unwrap();
    assert_eq!(d.types[1].name, "std_msgs/Header");
    assert_eq!(d.root().fields[0].ty, FieldType::Message(1));
    // 1.2 bags define it as roslib/Header.
    let text = format!("Header header\n{SEP}MSG: roslib/Header\n{HEADER}");
    let d = MsgDef::parse("a/B", &text).unwrap();
    assert_eq!(d.types[1].name, "roslib/Header");
    assert_eq!(d.root().fields[0].ty, FieldType::Message(1));
}

#[test]
fn unqualified_types_resolve_in_the_enclosing_package() {
    // geometry_msgs/PoseStamped as `gendeps --cat` writes it: Pose names Point and
    // Quaternion without their package.
    let text = format!(
        "Header header\nPose pose\n{SEP}MSG: std_msgs/Header\n{HEADER}{SEP}MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n\
         {SEP}MSG: geometry_msgs/Point\n{POINT}{SEP}MSG: geometry_msgs/Quaternion\n{QUAT}"
    );
    let d = MsgDef::parse("geometry_msgs/PoseStamped", &text).unwrap();
    assert_eq!(d.md5(), "d3812c3cbc69362b77dc0b19b345f8f5");
    assert_eq!(d.md5_of(2), "e45d45a5a1ce597b249e23fb30fc871f");
    assert_eq!(d.md5_of(3), "4a842b65f413084dc2b10fb484ea7f17");
    let pose = &d.types[2];
    assert_eq!(pose.fields[0].ty, FieldType::Message(3));
    assert_eq!(pose.fields[1].ty, FieldType::Message(4));
}

#[test]
fn fixed_and_variable_arrays_of_nested_types() {
    let text = format!("P[2] two\nP[] many\nstring[] names\n{SEP}MSG: a/P\n{POINT}");
    let d = MsgDef::parse("a/B", &text).unwrap();
    let f = &d.root().fields;
    assert_eq!(
        (f[0].ty.clone(), f[0].array),
        (FieldType::Message(1), ArrayKind::Fixed(2))
    );
    assert_eq!(
        (f[1].ty.clone(), f[1].array),
        (FieldType::Message(1), ArrayKind::Variable)
    );
    assert_eq!(f[2].array, ArrayKind::Variable);
    for bad in [
        "int32[ x",
        "int32[-1] x",
        "int32[<=3] x",
        "int32[3]] x",
        "[] x",
    ] {
        assert!(MsgDef::parse("a/B", bad).is_err(), "{bad}");
    }
}

#[test]
fn missing_types_and_malformed_lines_fail_with_the_line() {
    let e = MsgDef::parse("a/B", "int32 ok\nmissing/Type m\n").unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.reason.contains("missing/Type"), "{e}");
    let e = MsgDef::parse("a/B", "int32\n").unwrap_err();
    assert!(e.reason.contains("no name"), "{e}");
    let e = MsgDef::parse("a/B", "int32 a b\n").unwrap_err();
    assert!(e.reason.contains("unexpected"), "{e}");
    let e = MsgDef::parse("a/B", &format!("int32 a\n{SEP}not a MSG line\n")).unwrap_err();
    assert!(e.reason.contains("MSG:"), "{e}");
}

#[test]
fn recursive_types_are_refused() {
    let e = MsgDef::parse("a/B", "B self_ref\n").unwrap_err();
    assert!(e.to_string().contains("contains itself"), "{e}");
    let e = MsgDef::parse("a/B", &format!("C c\n{SEP}MSG: a/C\nB[] back\n")).unwrap_err();
    assert!(e.to_string().contains("contains itself"), "{e}");
    // Recursion in a type the main type does not use is refused as well.
    let e = MsgDef::parse("a/B", &format!("int32 x\n{SEP}MSG: a/C\nC c\n")).unwrap_err();
    assert!(e.to_string().contains("contains itself"), "{e}");
}

#[test]
fn deep_nesting_is_refused_without_exhausting_the_stack() {
    // A chain of 50,000 types, each holding the next: every recursive walk over such a
    // definition would overflow the stack, so parsing must refuse it first.
    let mut text = String::from("T0 next\n");
    for i in 0..50_000 {
        text.push_str(&format!("{SEP}MSG: a/T{i}\nT{} next\n", i + 1));
    }
    text.push_str(&format!("{SEP}MSG: a/T50000\nint32 end\n"));
    let e = MsgDef::parse("a/B", &text).unwrap_err();
    assert!(e.reason.contains("nested"), "{e}");
    // The same chain 20 deep is fine.
    let mut text = String::from("T0 next\n");
    for i in 0..20 {
        text.push_str(&format!("{SEP}MSG: a/T{i}\nT{} next\n", i + 1));
    }
    text.push_str(&format!("{SEP}MSG: a/T20\nint32 end\n"));
    assert!(MsgDef::parse("a/B", &text).is_ok());
}
