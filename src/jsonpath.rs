//! Paths into a JSON message, for the declarative agent reader (`output =
//! { cost = "total_cost_usd" … }`, docs/language.md "Reading any JSON
//! agent"). A shared leaf: the checker parses them, the plan holds them, the
//! engine applies them to each message of an agent's output.
//!
//! A path is steps separated by `.`: a key (`usage`), an array index
//! (`content.0`), or a filter in brackets that lets only a message whose
//! key has that value through (`[type=result]`, `[part.type=step-finish]`).
//! `[type=result].usage.input_tokens` reads `usage.input_tokens` of the
//! messages whose `type` is `result`. A key holding a `.`, `[` or `]` cannot
//! be named.

use serde_json::Value;

/// One step of a [`JsonPath`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// An object's key.
    Key(String),
    /// An array's element (also an object's key spelled with digits).
    Index(usize),
    /// Goes on only when the value at the inner path equals the text
    /// (a string as it is; a number or boolean as JSON writes it).
    Filter(Vec<Step>, String),
}

/// A parsed path: its text as written and its steps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JsonPath {
    /// The path as written in the plan.
    pub text: String,
    /// Its steps, in order.
    pub steps: Vec<Step>,
}

impl JsonPath {
    /// Parses `text`.
    ///
    /// Errors: what is wrong with it, for a diagnostic (an empty path or
    /// step, an unclosed `[`, a filter without `=`).
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let steps = parse_steps(text)?;
        Ok(JsonPath {
            text: text.to_string(),
            steps,
        })
    }

    /// The value at this path in `message`, if it has one.
    pub fn get<'a>(&self, message: &'a Value) -> Option<&'a Value> {
        walk(&self.steps, message)
    }
}

fn parse_steps(text: &str) -> Result<Vec<Step>, String> {
    if text.trim().is_empty() {
        return Err("the path is empty".into());
    }
    let mut steps = Vec::new();
    let mut rest = text;
    loop {
        if let Some(inner) = rest.strip_prefix('[') {
            let Some(close) = inner.find(']') else {
                return Err(format!("`[` without `]` in `{text}`"));
            };
            let filter = &inner[..close];
            let Some((path, value)) = filter.split_once('=') else {
                return Err(format!("`[{filter}]` is not a filter: write `[key=value]`"));
            };
            if path.contains('[') {
                return Err(format!("a filter cannot hold a filter: `[{filter}]`"));
            }
            steps.push(Step::Filter(
                parse_steps(path.trim())?,
                value.trim().to_string(),
            ));
            rest = &inner[close + 1..];
            if rest.is_empty() {
                return Ok(steps);
            }
            rest = rest.strip_prefix('.').unwrap_or(rest);
            continue;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let key = &rest[..end];
        if key.is_empty() || key.contains(']') {
            return Err(format!(
                "`{text}` has an empty step (`..`, or `.` at an end)"
            ));
        }
        steps.push(match key.parse::<usize>() {
            Ok(i) => Step::Index(i),
            Err(_) => Step::Key(key.to_string()),
        });
        rest = &rest[end..];
        if rest.is_empty() {
            return Ok(steps);
        }
        if let Some(r) = rest.strip_prefix('.') {
            if r.is_empty() {
                return Err(format!(
                    "`{text}` has an empty step (`..`, or `.` at an end)"
                ));
            }
            rest = r;
        }
    }
}

fn walk<'a>(steps: &[Step], mut at: &'a Value) -> Option<&'a Value> {
    for step in steps {
        at = match step {
            Step::Key(k) => at.get(k)?,
            Step::Index(i) => match at {
                Value::Array(items) => items.get(*i)?,
                other => other.get(i.to_string())?,
            },
            Step::Filter(path, want) => {
                let got = walk(path, at)?;
                let same = match got {
                    Value::String(s) => s == want,
                    Value::Bool(b) => want.parse::<bool>().ok() == Some(*b),
                    Value::Number(n) => want.parse::<serde_json::Number>().ok().as_ref() == Some(n),
                    _ => false,
                };
                if !same {
                    return None;
                }
                at
            }
        };
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_read_keys_indices_and_filters() {
        let m = json!({"type": "result", "usage": {"input_tokens": 7}, "content": [{"text": "hi"}], "ok": true});
        let get = |p: &str| JsonPath::parse(p).unwrap().get(&m).cloned();
        assert_eq!(get("usage.input_tokens"), Some(json!(7)));
        assert_eq!(get("content.0.text"), Some(json!("hi")));
        assert_eq!(get("[type=result].usage.input_tokens"), Some(json!(7)));
        assert_eq!(get("[type=error].usage"), None);
        assert_eq!(get("[ok=true]content.0.text"), Some(json!("hi")));
        assert_eq!(get("[usage.input_tokens=7].type"), Some(json!("result")));
        assert_eq!(get("missing"), None);
        for bad in ["", "a..b", "a.", "[type", "[type].x", "[[a=b]=c]"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }
}
