//! Source spans: byte ranges into the text a module was parsed from.
//!
//! Spans never live inside IR nodes; they sit in per-function side tables
//! ([`crate::relax::RelaxSpans`], [`crate::tir::TirSpans`]). Lines and columns are computed
//! only when a diagnostic is rendered.

/// A half-open byte range `start..end` into the source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span of IR that did not come from text (built by a pass).
    pub const NONE: Span = Span { start: u32::MAX, end: u32::MAX };

    /// A span from byte offsets.
    pub fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }
    /// True for [`Span::NONE`].
    pub fn is_none(self) -> bool {
        self == Span::NONE
    }
    /// The smallest span covering both (a missing side is ignored).
    pub fn to(self, other: Span) -> Span {
        if self.is_none() {
            return other;
        }
        if other.is_none() {
            return self;
        }
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

impl Default for Span {
    fn default() -> Self {
        Span::NONE
    }
}
