//! `cufile.json`: the file cuFile reads at the first driver open (`$CUFILE_ENV_PATH_JSON`, else
//! `/etc/cufile.json`), read the same way here; and cuFile's variables of numbers and switches
//! (those that name files are `env.rs`'s).
//!
//! The parser is our own (about a hundred lines) rather than a dependency: NVIDIA's files are
//! JSON with `//` and `/* */` comments and trailing commas (its stock file and its guides
//! have both), which strict JSON parsers refuse, and all we need is a tree of scalars. A file
//! that is missing, unreadable or does not parse is not an error: one log line, and the
//! built-in defaults. Unknown keys are ignored; numbers may also be written as strings, and
//! a scalar where an array is expected is a one-element array.

use std::collections::BTreeMap;

use crate::env::{path_var, secure_execution, PATH_VARIABLES};

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Number(f64),
    Text(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) if *n >= 0.0 && n.fract() == 0.0 => Some(*n as u64),
            Value::Text(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Text(s) => parse_bool(s),
            Value::Number(n) => Some(*n != 0.0),
            _ => None,
        }
    }

    pub(crate) fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// An array of sizes (a scalar counts as one element).
    pub(crate) fn as_u64_list(&self) -> Option<Vec<u64>> {
        match self {
            Value::Array(items) => items.iter().map(Value::as_u64).collect(),
            v => v.as_u64().map(|n| vec![n]),
        }
    }
}

/// `true/false/1/0/yes/no/on/off`, case-insensitive.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Parse a whole document.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.skip();
    if p.i != p.s.len() {
        return Err(format!("unexpected text at byte {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// Arrays and objects open around the current position: bounded, so a hostile file cannot
    /// exhaust the stack of the application that reads it.
    depth: usize,
}

/// Nesting a configuration file never needs (`cufile.json` nests three levels); deeper is an
/// error, as any other malformed file.
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Whitespace and comments.
    fn skip(&mut self) {
        loop {
            match (self.peek(), self.s.get(self.i + 1)) {
                (Some(c), _) if c.is_ascii_whitespace() => self.i += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    self.i += 2;
                    while self.i < self.s.len() && !self.s[self.i..].starts_with(b"*/") {
                        self.i += 1;
                    }
                    self.i = (self.i + 2).min(self.s.len());
                }
                _ => return,
            }
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip();
        match self.peek() {
            Some(open @ (b'{' | b'[')) => {
                if self.depth == MAX_DEPTH {
                    return Err(format!(
                        "nested deeper than {MAX_DEPTH} levels at byte {}",
                        self.i
                    ));
                }
                self.depth += 1;
                let v = if open == b'{' {
                    self.object()
                } else {
                    self.array()
                };
                self.depth -= 1;
                v
            }
            Some(b'"') => self.string().map(Value::Text),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            _ => Err(format!("unexpected character at byte {}", self.i)),
        }
    }

    fn word(&mut self, w: &str, v: Value) -> Result<Value, String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(format!("bad literal at byte {}", self.i))
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(&c))
        {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .and_then(|t| t.parse().ok())
            .map(Value::Number)
            .ok_or_else(|| format!("bad number at byte {start}"))
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let c = self.peek().ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.peek().ok_or("unterminated string")?;
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or("bad escape")?;
                            let n = u32::from_str_radix(
                                std::str::from_utf8(hex).map_err(|_| "bad escape")?,
                                16,
                            )
                            .map_err(|_| "bad escape")?;
                            self.i += 4;
                            let ch = char::from_u32(n).unwrap_or('\u{fffd}');
                            out.extend_from_slice(ch.to_string().as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn array(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip();
            match self.peek() {
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                Some(b',') => self.i += 1,
                None => return Err("unterminated array".into()),
                _ => items.push(self.value()?),
            }
        }
    }

    fn object(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut members = Vec::new();
        loop {
            self.skip();
            match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(members));
                }
                Some(b',') => self.i += 1,
                Some(b'"') => {
                    let key = self.string()?;
                    self.skip();
                    if self.peek() != Some(b':') {
                        return Err(format!("expected ':' at byte {}", self.i));
                    }
                    self.i += 1;
                    members.push((key, self.value()?));
                }
                _ => return Err(format!("expected a key at byte {}", self.i)),
            }
        }
    }
}

/// The scalars and arrays of a document by dotted path (`properties.io_batchsize`).
pub(crate) type Flat = BTreeMap<String, Value>;

fn flatten(prefix: &str, v: &Value, out: &mut Flat) {
    match v {
        Value::Object(members) => {
            for (k, v) in members {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// Say once, in the log and on standard error, which variables secure-execution mode makes
/// us ignore (nothing when none is set).
fn say_secure_execution() {
    static SAID: std::sync::Once = std::sync::Once::new();
    if !secure_execution() {
        return;
    }
    SAID.call_once(|| {
        let set: Vec<&str> = PATH_VARIABLES
            .iter()
            .copied()
            .filter(|n| std::env::var_os(n).is_some())
            .collect();
        if !set.is_empty() {
            crate::log::warn_always(&format!(
                "secure-execution mode (a set-user-ID, set-group-ID or file-capability program): ignoring {}, as every variable that names a file",
                set.join(", ")
            ));
        }
    });
}

/// Read the configuration file: `$CUFILE_ENV_PATH_JSON` if it can be read and parsed (never in
/// secure-execution mode), else `/etc/cufile.json`, else nothing. Each problem is one log line.
/// Returns the keys and the file they came from.
pub(crate) fn read() -> (Flat, Option<String>) {
    say_secure_execution();
    let mut paths = Vec::new();
    if let Some(p) = path_var("CUFILE_ENV_PATH_JSON") {
        if !p.is_empty() {
            paths.push(p);
        }
    }
    paths.push("/etc/cufile.json".to_string());
    for path in paths {
        match std::fs::read_to_string(&path) {
            Ok(text) => match parse(&text) {
                Ok(v) => {
                    let mut flat = Flat::new();
                    flatten("", &v, &mut flat);
                    return (flat, Some(path));
                }
                Err(e) => crate::log::warn(&format!(
                    "configuration {path} does not parse ({e}): ignored"
                )),
            },
            Err(e) => crate::log::notice(&format!("no configuration at {path} ({e})")),
        }
    }
    (Flat::new(), None)
}

/// A boolean environment variable (`None` when unset or not a boolean, the latter logged).
pub(crate) fn env_bool(name: &str) -> Option<bool> {
    let v = std::env::var(name).ok()?;
    let b = parse_bool(&v);
    if b.is_none() {
        crate::log::warn(&format!("{name}={v:?} is not a boolean: ignored"));
    }
    b
}

/// An unsigned environment variable.
pub(crate) fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let n = v.trim().parse().ok();
    if n.is_none() {
        crate::log::warn(&format!("{name}={v:?} is not a number: ignored"));
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_bounded() {
        // A megabyte of '[' overflowed the stack of the process reading it.
        let deep = "[".repeat(1 << 20);
        assert_eq!(
            parse(&deep).unwrap_err(),
            "nested deeper than 64 levels at byte 64"
        );
        let ok = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert!(parse(&ok).is_ok());
        let one_more = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert_eq!(
            parse(&one_more).unwrap_err(),
            "nested deeper than 64 levels at byte 64"
        );
    }

    #[test]
    fn nvidia_style_file_parses() {
        let text = r#"
        // comment line
        {
            "logging": { "dir": "/tmp/x/", "level": "INFO", },   // trailing comma
            /* block */ "properties": {
                "io_batchsize": 64,
                "max_direct_io_size_kb": "4096",
                "allow_compat_mode": true,
                "posix_pool_slab_size_kb": [4, 1024, 16384],
                "posix_pool_slab_count": 128,
                // last member comment
            },
            "escaped": "a\"b\u0041"
        }"#;
        let v = parse(text).unwrap();
        let mut flat = Flat::new();
        flatten("", &v, &mut flat);
        assert_eq!(flat["logging.dir"].as_text(), Some("/tmp/x/"));
        assert_eq!(flat["properties.io_batchsize"].as_u64(), Some(64));
        assert_eq!(
            flat["properties.max_direct_io_size_kb"].as_u64(),
            Some(4096)
        );
        assert_eq!(flat["properties.allow_compat_mode"].as_bool(), Some(true));
        assert_eq!(
            flat["properties.posix_pool_slab_size_kb"].as_u64_list(),
            Some(vec![4, 1024, 16384])
        );
        assert_eq!(
            flat["properties.posix_pool_slab_count"].as_u64_list(),
            Some(vec![128])
        );
        assert_eq!(flat["escaped"].as_text(), Some("a\"bA"));
    }

    #[test]
    fn broken_files_are_errors() {
        assert!(parse("{").is_err());
        assert!(parse("{\"a\" 1}").is_err());
        assert!(parse("{} x").is_err());
        assert_eq!(parse("{}").unwrap(), Value::Object(vec![]));
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_bool("TRUE"), Some(true));
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
    }
}
