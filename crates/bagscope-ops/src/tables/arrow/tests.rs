use arrow_array::{Int32Array, ListArray, StringArray, TimestampNanosecondArray};

use super::*;
use arrow_array::Array;

fn plan(text: &str) -> Plan {
    Plan::new(MsgDef::parse("t/T", text).unwrap())
}

fn le(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn nested_types_from_the_definition() {
    let p = plan(
        "time t\nstring s\nfloat64[2] xy\nP[] ps\nuint8[] raw\nuint8[3] rgb\nE e\n\
         ================\nMSG: t/P\nint32 a\nbool b\n\
         ================\nMSG: t/E\n",
    );
    let mut b = BatchBuilder::new(&p, None).unwrap();
    let m = le(&[
        &5u32.to_le_bytes(),
        &7u32.to_le_bytes(),
        &2u32.to_le_bytes(),
        b"h\xff",
        &1.5f64.to_le_bytes(),
        &(-2.0f64).to_le_bytes(),
        &2u32.to_le_bytes(),
        &3i32.to_le_bytes(),
        &[1],
        &(-4i32).to_le_bytes(),
        &[0],
        &1u32.to_le_bytes(),
        &[9],
        &[1, 2, 3],
    ]);
    let v = p.decode(&m).unwrap().value;
    b.push(10, &v, m.len()).unwrap();
    b.push(20, &v, m.len()).unwrap();
    let batch = b.finish().unwrap();
    assert_eq!(batch.num_rows(), 2);
    let names: Vec<_> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    // The empty type is left out.
    assert_eq!(names, ["time_ns", "t", "s", "xy", "ps", "raw", "rgb"]);
    let s = batch
        .column(2)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(s.value(0), "h\\xff");
    let t = batch
        .column(1)
        .as_any()
        .downcast_ref::<TimestampNanosecondArray>()
        .unwrap();
    assert_eq!(t.value(1), 5_000_000_007);
    let ps = batch
        .column(4)
        .as_any()
        .downcast_ref::<ListArray>()
        .unwrap();
    let first = ps.value(0);
    let st = first.as_any().downcast_ref::<StructArray>().unwrap();
    let a = st.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(a.values().to_vec(), [3, -4]);
    assert_eq!(
        batch.column(3).data_type(),
        &DataType::FixedSizeList(Arc::new(AField::new("item", DataType::Float64, false)), 2)
    );
    assert_eq!(batch.column(6).data_type(), &DataType::FixedSizeBinary(3));
    // The builder starts again empty, with the same schema.
    b.push(30, &v, m.len()).unwrap();
    let again = b.finish().unwrap();
    assert_eq!(again.num_rows(), 1);
    assert_eq!(again.schema(), batch.schema());
    // Chosen fields keep their nesting.
    let mut b = BatchBuilder::new(&p, Some(&["ps.b".into(), "t".into()])).unwrap();
    b.push(10, &v, m.len()).unwrap();
    let batch = b.finish().unwrap();
    let DataType::List(item) = batch.schema().field(2).data_type().clone() else {
        panic!("ps is not a list");
    };
    let DataType::Struct(members) = item.data_type() else {
        panic!("ps's items are not structs");
    };
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].name(), "b");
    assert_eq!(batch.num_columns(), 3);
    assert!(BatchBuilder::new(&p, Some(&["nope".into()])).is_err());
    assert!(BatchBuilder::new(&p, Some(&["s.x".into()])).is_err());
}
