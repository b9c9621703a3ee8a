//! stub
use crate::ast::Span;
/// err
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// span
    pub span: Span,
    /// msg
    pub message: String,
}
impl SyntaxError {
    /// new
    pub fn new(span: Span, message: impl Into<String>) -> SyntaxError {
        SyntaxError { span, message: message.into() }
    }
}
