//! A tiny JSON writer (no serde): a value tree and its compact text form. Under `cfg(test)` a
//! small parser comes with it, so the tests (unit and integration) can read the output back.

use std::fmt::Write as _;

/// A JSON value. Objects keep their keys in insertion order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer (written exactly).
    Int(i64),
    /// An unsigned integer, written exactly (counters; `From<u64>` makes `Int` or `Num`).
    UInt(u64),
    /// A floating-point number (non-finite values are written as `null`).
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Value>),
    /// An object.
    Obj(Vec<(String, Value)>),
}

impl Value {
    /// An empty object.
    pub(crate) fn obj() -> Value {
        Value::Obj(Vec::new())
    }

    /// Add `key: value` to an object (builder style). Panics on non-objects.
    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> Value {
        match &mut self {
            Value::Obj(fields) => fields.push((key.to_string(), value.into())),
            _ => panic!("Value::with on a non-object"),
        }
        self
    }

    /// The compact JSON text.
    pub(crate) fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::UInt(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Num(x) if x.is_finite() => {
                // Rust's shortest round-trip form never uses exponents: valid JSON as is.
                let _ = write!(out, "{x}");
            }
            Value::Num(_) => out.push_str("null"),
            Value::Str(s) => escape_into(s, out),
            Value::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Value::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    escape_into(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// Append `s` as a quoted JSON string: `"` and `\` escaped, control characters as `\n`, `\t`...
/// or `\u00XX`; everything else (all of Unicode) as is, since the output is UTF-8.
pub(crate) fn escape_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Num(x)
    }
}
impl From<u64> for Value {
    fn from(n: u64) -> Value {
        i64::try_from(n).map_or(Value::Num(n as f64), Value::Int)
    }
}
impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::from(n as u64)
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}
impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Int(n.into())
    }
}
impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Int(n.into())
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Arr(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// A minimal JSON parser for the tests (numbers become `Num`, or `Int` when integral text).
#[cfg(test)]
pub(crate) mod parse {
    use super::Value;

    /// Parse one JSON document (surrounding white space allowed).
    pub(crate) fn parse(text: &str) -> Result<Value, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing text at byte {}", p.i));
        }
        Ok(v)
    }

    impl Value {
        /// Member `key` of an object.
        pub(crate) fn get(&self, key: &str) -> Option<&Value> {
            match self {
                Value::Obj(f) => f.iter().find(|(k, _)| k == key).map(|(_, v)| v),
                _ => None,
            }
        }
        /// The number, if this is one.
        pub(crate) fn as_f64(&self) -> Option<f64> {
            match self {
                Value::Int(n) => Some(*n as f64),
                Value::UInt(n) => Some(*n as f64),
                Value::Num(x) => Some(*x),
                _ => None,
            }
        }
        /// The string, if this is one.
        pub(crate) fn as_str(&self) -> Option<&str> {
            match self {
                Value::Str(s) => Some(s),
                _ => None,
            }
        }
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            }
        }
        fn eat(&mut self, lit: &str) -> Result<(), String> {
            if self.s[self.i..].starts_with(lit.as_bytes()) {
                self.i += lit.len();
                Ok(())
            } else {
                Err(format!("expected {lit} at byte {}", self.i))
            }
        }
        fn value(&mut self) -> Result<Value, String> {
            self.ws();
            match self.s.get(self.i) {
                None => Err("unexpected end".into()),
                Some(b'n') => self.eat("null").map(|_| Value::Null),
                Some(b't') => self.eat("true").map(|_| Value::Bool(true)),
                Some(b'f') => self.eat("false").map(|_| Value::Bool(false)),
                Some(b'"') => self.string().map(Value::Str),
                Some(b'[') => {
                    self.i += 1;
                    let mut items = Vec::new();
                    self.ws();
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Ok(Value::Arr(items));
                    }
                    loop {
                        items.push(self.value()?);
                        self.ws();
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                return Ok(Value::Arr(items));
                            }
                            _ => return Err(format!("expected , or ] at byte {}", self.i)),
                        }
                    }
                }
                Some(b'{') => {
                    self.i += 1;
                    let mut fields = Vec::new();
                    self.ws();
                    if self.s.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Ok(Value::Obj(fields));
                    }
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        self.eat(":")?;
                        fields.push((k, self.value()?));
                        self.ws();
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                return Ok(Value::Obj(fields));
                            }
                            _ => return Err(format!("expected , or }} at byte {}", self.i)),
                        }
                    }
                }
                Some(_) => self.number(),
            }
        }
        fn number(&mut self) -> Result<Value, String> {
            let start = self.i;
            while self.i < self.s.len()
                && matches!(
                    self.s[self.i],
                    b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                )
            {
                self.i += 1;
            }
            let t = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
            if let Ok(n) = t.parse::<i64>() {
                return Ok(Value::Int(n));
            }
            t.parse::<f64>()
                .map(Value::Num)
                .map_err(|_| format!("bad number {t:?} at byte {start}"))
        }
        fn string(&mut self) -> Result<String, String> {
            self.eat("\"")?;
            let mut out = String::new();
            loop {
                let rest = std::str::from_utf8(&self.s[self.i..]).map_err(|e| e.to_string())?;
                let c = rest.chars().next().ok_or("unterminated string")?;
                self.i += c.len_utf8();
                match c {
                    '"' => return Ok(out),
                    '\\' => {
                        let e = *self.s.get(self.i).ok_or("unterminated escape")?;
                        self.i += 1;
                        out.push(match e {
                            b'"' => '"',
                            b'\\' => '\\',
                            b'/' => '/',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'u' => {
                                let hex = std::str::from_utf8(
                                    self.s.get(self.i..self.i + 4).ok_or("short \\u")?,
                                )
                                .map_err(|e| e.to_string())?;
                                self.i += 4;
                                let n = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                                char::from_u32(n)
                                    .ok_or("surrogate \\u escapes are not supported")?
                            }
                            _ => return Err(format!("bad escape at byte {}", self.i)),
                        });
                    }
                    c if (c as u32) < 0x20 => {
                        return Err(format!("raw control character at byte {}", self.i))
                    }
                    c => out.push(c),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse::parse;
    use super::*;

    fn esc(s: &str) -> String {
        let mut out = String::new();
        escape_into(s, &mut out);
        out
    }

    #[test]
    fn escaping() {
        assert_eq!(esc("plain"), r#""plain""#);
        assert_eq!(esc(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(esc("l1\nl2\r\t"), r#""l1\nl2\r\t""#);
        assert_eq!(
            esc("\u{0}\u{1f}\u{7f}\u{8}\u{c}"),
            r#""\u0000\u001f\u007f\b\f""#
        );
        assert_eq!(esc("µs → GiB/s"), "\"µs → GiB/s\"");
        assert_eq!(esc("/tmp/x'y"), r#""/tmp/x'y""#);
    }

    #[test]
    fn values() {
        let v = Value::obj()
            .with("s", "x\"y")
            .with("i", 42u64)
            .with("neg", -3i64)
            .with("f", 1.5)
            .with("inf", f64::INFINITY)
            .with("b", true)
            .with("none", None::<u64>)
            .with("arr", vec![1.0, 2.25])
            .with("empty", Value::obj());
        assert_eq!(
            v.to_json(),
            r#"{"s":"x\"y","i":42,"neg":-3,"f":1.5,"inf":null,"b":true,"none":null,"arr":[1,2.25],"empty":{}}"#
        );
        assert_eq!(Value::from(u64::MAX).to_json(), "18446744073709552000");
        assert_eq!(Value::Num(1e-7).to_json(), "0.0000001");
    }

    #[test]
    fn round_trip() {
        let v = Value::obj()
            .with("weird key \u{1}\"\\", "v\u{7f}\n\u{2028}é")
            .with("n", 0.1)
            .with(
                "list",
                Value::Arr(vec![
                    Value::Null,
                    Value::Bool(false),
                    Value::obj().with("k", 7u32),
                ]),
            );
        let back = parse(&v.to_json()).unwrap();
        assert_eq!(back, v);
        assert_eq!(back.get("n").and_then(Value::as_f64), Some(0.1));
        assert_eq!(
            back.get("weird key \u{1}\"\\").and_then(Value::as_str),
            Some("v\u{7f}\n\u{2028}é")
        );
        assert_eq!(back.get("missing"), None);
        assert!(parse("{\"a\":1} x").is_err());
        assert!(parse("\"raw\ncontrol\"").is_err());
    }
}
