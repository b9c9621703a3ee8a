//! Pipeline text: `a,b{key=value},relax.function(c,d),module(e)`.
//!
//! Grammar (whitespace around names and punctuation is ignored):
//!
//! ```text
//! pipeline := element ("," element)*
//! element  := anchor "(" pipeline? ")"          anchor: module | relax.function | tir.prim_func
//!           | name ("{" option (sep option)* "}")?
//! option   := key "=" value | value             sep: "," or spaces
//! ```
//!
//! A flat list is shorthand for `module(...)`; function-anchored passes inside it run on
//! every function of their kind. An option written without `key=` is a value for the
//! pass's default key (`quantize-weights{q4_0}`), kept under the empty key. `Display` prints the pipeline back in canonical form.
//! The option list alone (`key=value` separated by `,` or spaces, as in a pass flag
//! `--fuse-ops=max-depth=8`) is read by [`PassOptions::parse`].

use std::fmt;

use crate::anchor::Anchor;
use crate::options::PassOptions;

/// One element of a pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PipelineElement {
    /// A pass (or a named pipeline) with options.
    Pass {
        /// The name as written.
        name: String,
        /// Its options.
        options: PassOptions,
    },
    /// `anchor(...)`.
    Nested {
        /// The anchor.
        anchor: Anchor,
        /// The nested elements.
        elements: Vec<PipelineElement>,
    },
}

/// A parsed pipeline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pipeline {
    /// Top-level elements, run in order.
    pub elements: Vec<PipelineElement>,
}

/// A syntax error in pipeline text, with the byte offset where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineSyntaxError {
    /// Byte offset into the text.
    pub offset: usize,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for PipelineSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid pass pipeline at offset {}: {}", self.offset, self.message)
    }
}

impl Pipeline {
    /// Parses pipeline text.
    pub fn parse(text: &str) -> Result<Pipeline, PipelineSyntaxError> {
        let mut p = Parser { s: text.as_bytes(), pos: 0 };
        let elements = p.list(0)?;
        p.skip_ws();
        if p.pos != p.s.len() {
            return Err(p.err(format!("expected `,`, found `{}`", p.s[p.pos] as char)));
        }
        Ok(Pipeline { elements })
    }
    /// A pipeline of plain passes in order.
    pub fn of(names: &[&str]) -> Pipeline {
        Pipeline {
            elements: names
                .iter()
                .map(|n| PipelineElement::Pass { name: n.to_string(), options: PassOptions::default() })
                .collect(),
        }
    }
    /// True when there is nothing to run.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

const MAX_DEPTH: usize = 32;

impl Parser<'_> {
    fn err(&self, message: String) -> PipelineSyntaxError {
        PipelineSyntaxError { offset: self.pos, message }
    }
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }
    fn name(&mut self) -> Result<String, PipelineSyntaxError> {
        self.skip_ws();
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.' {
                self.pos += 1;
            } else {
                break;
            }
        }
        if start == self.pos {
            let found = self.peek().map_or("end of text".to_string(), |c| format!("`{}`", c as char));
            return Err(self.err(format!("expected a pass name, found {found}")));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }
    fn list(&mut self, depth: usize) -> Result<Vec<PipelineElement>, PipelineSyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.err("pipeline nesting too deep".to_string()));
        }
        let mut out = Vec::new();
        self.skip_ws();
        if self.pos == self.s.len() || self.peek() == Some(b')') {
            return Ok(out);
        }
        loop {
            out.push(self.element(depth)?);
            self.skip_ws();
            if self.peek() == Some(b',') {
                self.pos += 1;
            } else {
                return Ok(out);
            }
        }
    }
    fn element(&mut self, depth: usize) -> Result<PipelineElement, PipelineSyntaxError> {
        let name = self.name()?;
        self.skip_ws();
        match self.peek() {
            Some(b'(') => {
                let anchor = Anchor::from_name(&name).ok_or_else(|| {
                    self.err(format!(
                        "`{name}` is not an anchor; expected `module`, `relax.function` or `tir.prim_func`"
                    ))
                })?;
                self.pos += 1;
                let elements = self.list(depth + 1)?;
                self.skip_ws();
                if self.peek() != Some(b')') {
                    return Err(self.err("expected `)`".to_string()));
                }
                self.pos += 1;
                Ok(PipelineElement::Nested { anchor, elements })
            }
            Some(b'{') => {
                self.pos += 1;
                let options = self.options(Some(b'}'))?;
                Ok(PipelineElement::Pass { name, options })
            }
            _ => Ok(PipelineElement::Pass { name, options: PassOptions::default() }),
        }
    }
    /// An option list up to `close` (consumed) or, without one, to the end of the text.
    fn options(&mut self, close: Option<u8>) -> Result<PassOptions, PipelineSyntaxError> {
        let mut options = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None if close.is_none() => break,
                Some(c) if Some(c) == close => {
                    self.pos += 1;
                    break;
                }
                Some(b',') => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let key = self.name()?;
            self.skip_ws();
            if self.peek() != Some(b'=') {
                // A value for the default key, when the item ends here.
                if self
                    .peek()
                    .is_none_or(|c| Some(c) == close || c == b',' || self.s[self.pos - 1].is_ascii_whitespace())
                {
                    if close.is_some() && self.pos == self.s.len() {
                        return Err(self.err("unclosed `{`".to_string()));
                    }
                    options.push((String::new(), key));
                    continue;
                }
                return Err(self.err(format!("expected `=` after option `{key}`")));
            }
            self.pos += 1;
            self.skip_ws();
            let start = self.pos;
            while let Some(c) = self.peek() {
                if Some(c) == close || c == b',' || c.is_ascii_whitespace() {
                    break;
                }
                self.pos += 1;
            }
            if close.is_some() && self.pos == self.s.len() {
                return Err(self.err("unclosed `{`".to_string()));
            }
            options.push((key, String::from_utf8_lossy(&self.s[start..self.pos]).into_owned()));
        }
        Ok(PassOptions(options))
    }
}

impl PassOptions {
    /// Parses an option list without braces: `max-depth=8,opt-level=2` or
    /// `max-depth=8 opt-level=2` (the text of a pass flag's value).
    pub fn parse(text: &str) -> Result<PassOptions, PipelineSyntaxError> {
        Parser { s: text.as_bytes(), pos: 0 }.options(None)
    }
}

impl fmt::Display for PipelineElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PipelineElement::Pass { name, options } => {
                f.write_str(name)?;
                if !options.0.is_empty() {
                    f.write_str("{")?;
                    for (i, (k, v)) in options.0.iter().enumerate() {
                        if i > 0 {
                            f.write_str(" ")?;
                        }
                        if k.is_empty() {
                            f.write_str(v)?;
                        } else {
                            write!(f, "{k}={v}")?;
                        }
                    }
                    f.write_str("}")?;
                }
                Ok(())
            }
            PipelineElement::Nested { anchor, elements } => {
                write!(f, "{}(", anchor.name())?;
                write_list(f, elements)?;
                f.write_str(")")
            }
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, elements: &[PipelineElement]) -> fmt::Result {
    for (i, e) in elements.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, &self.elements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_back() {
        for text in [
            "a,b,c",
            "module(relax.function(canonicalize-bindings),legalize-ops,tir.prim_func(simplify))",
            "fuse-ops{max-depth=8 opt-level=2},plan-memory",
            "relax.function()",
        ] {
            let p = Pipeline::parse(text).unwrap();
            assert_eq!(p.to_string(), text);
        }
        let p = Pipeline::parse(" a , fuse-ops{ x=1, y=2 } ").unwrap();
        assert_eq!(p.to_string(), "a,fuse-ops{x=1 y=2}");
        let p = Pipeline::parse("a{x=}").unwrap();
        assert_eq!(p.to_string(), "a{x=}");
        let p = Pipeline::parse("quantize-weights{ q4_0 },b{q8_0, x=1}").unwrap();
        assert_eq!(p.to_string(), "quantize-weights{q4_0},b{q8_0 x=1}");
    }

    #[test]
    fn parses_flag_options() {
        let kv = |text: &str| PassOptions::parse(text).map(|o| o.0);
        let two = vec![("max-depth".to_string(), "8".to_string()), ("opt-level".to_string(), "2".to_string())];
        assert_eq!(kv("max-depth=8,opt-level=2"), Ok(two.clone()));
        assert_eq!(kv("max-depth=8 opt-level=2"), Ok(two.clone()));
        assert_eq!(kv(" max-depth = 8 , opt-level=2 "), Ok(two));
        assert_eq!(kv(""), Ok(Vec::new()));
        assert_eq!(kv("a=}"), Ok(vec![("a".to_string(), "}".to_string())]));
        // A value without a key is kept under the empty key.
        let bare = vec![(String::new(), "q4_0".to_string()), ("min-size".to_string(), "8".to_string())];
        assert_eq!(kv("q4_0,min-size=8"), Ok(bare.clone()));
        assert_eq!(kv("q4_0 min-size=8"), Ok(bare));
        assert_eq!(PassOptions::parse("q4_0!").unwrap_err().message, "expected `=` after option `q4_0`");
        assert_eq!(PassOptions::parse("=8").unwrap_err().message, "expected a pass name, found `=`");
    }

    #[test]
    fn reports_errors() {
        assert!(Pipeline::parse("a,,b").is_err());
        assert!(Pipeline::parse("foo(a)").unwrap_err().message.contains("not an anchor"));
        assert!(Pipeline::parse("module(a").is_err());
        assert!(Pipeline::parse("a{x").is_err());
        assert!(Pipeline::parse("a{x!}").is_err());
        assert!(Pipeline::parse("a{x=1").is_err());
        assert!(Pipeline::parse("a{x=1 ").is_err());
        let deep = "module(".repeat(100);
        assert!(Pipeline::parse(&deep).is_err());
    }
}
