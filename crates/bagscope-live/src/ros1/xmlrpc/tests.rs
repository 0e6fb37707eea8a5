use super::*;

#[test]
fn documents_round_trip() {
    let v = Value::Array(vec![
        Value::Int(1),
        Value::str("a <b> & c"),
        Value::Array(vec![Value::str("TCPROS"), Value::Bool(true)]),
        Value::Struct(vec![("k".into(), Value::Double(1.5))]),
        Value::Bytes(vec![0, 1, 2, 250, 251]),
    ]);
    let doc = call_document("m", std::slice::from_ref(&v));
    assert_eq!(
        parse_call(&doc).unwrap(),
        ("m".to_string(), vec![v.clone()])
    );
    assert_eq!(parse_response(&response_document(&v)).unwrap(), v);
    assert!(parse_response(&fault_document(3, "no"))
        .unwrap_err()
        .contains("no"));
}

#[test]
fn python_and_untyped_values_parse() {
    // As Python's xmlrpc.client writes them, and a bare value as roscpp writes strings.
    let doc = "<?xml version='1.0'?>\n<methodResponse>\n<params>\n<param>\n<value><array><data>\n<value><int>1</int></value>\n<value><string></string></value>\n<value>http://x:1/</value>\n<value><array><data>\n</data></array></value>\n</data></array></value>\n</param>\n</params>\n</methodResponse>\n";
    assert_eq!(
        parse_response(doc).unwrap(),
        Value::Array(vec![
            Value::Int(1),
            Value::str(""),
            Value::str("http://x:1/"),
            Value::Array(vec![]),
        ])
    );
}

#[test]
fn hostile_documents_are_errors() {
    let deep = "<value><array><data>".repeat(100);
    assert!(parse_response(&format!("<methodResponse><params><param>{deep}")).is_err());
    assert!(parse_call("<methodCall><methodName>x").is_err());
    assert!(parse_response("<methodResponse><params><param><value><i4>x</i4></value></param></params></methodResponse>").is_err());
}
